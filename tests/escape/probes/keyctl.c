/* Adds a key named DESCRIPTION to the session and user keyrings, which outlive
 * the sandbox, and asks for keys by name. */
#include "probe.h"

#define KEY_SPEC_SESSION_KEYRING (-3)
#define KEY_SPEC_USER_KEYRING (-4)
#define KEYCTL_GET_KEYRING_ID 0

int main(int argc, char **argv) {
  probe_args(argc, 1, "keyctl DESCRIPTION");
  int escaped = probe_try("add_key session", syscall(SYS_add_key, "user", argv[1], "x", 1, KEY_SPEC_SESSION_KEYRING));
  escaped |= probe_try("add_key user", syscall(SYS_add_key, "user", argv[1], "x", 1, KEY_SPEC_USER_KEYRING));
  escaped |= probe_try("keyctl(GET_KEYRING_ID)", syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0));
  escaped |= probe_try("request_key", syscall(SYS_request_key, "user", argv[1], NULL, 0));
  return probe_verdict(escaped);
}
