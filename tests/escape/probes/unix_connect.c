/* Connects to a unix stream socket: `@NAME` is an abstract name, anything
 * else a path. Sends a byte on success. */
#include "probe.h"

#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>

int main(int argc, char **argv) {
  probe_args(argc, 1, "unix_connect @ABSTRACT|PATH");
  struct sockaddr_un addr = {.sun_family = AF_UNIX};
  size_t length = strlen(argv[1]);
  if (length >= sizeof addr.sun_path) return PROBE_USAGE;
  memcpy(addr.sun_path, argv[1], length);
  if (argv[1][0] == '@') addr.sun_path[0] = '\0';
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (!probe_try("socket(AF_UNIX)", fd)) return probe_verdict(0);
  socklen_t size = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + length + (argv[1][0] == '@' ? 0 : 1));
  if (!probe_try("connect", connect(fd, (struct sockaddr *)&addr, size))) return probe_verdict(0);
  probe_try("send", send(fd, "x", 1, 0));
  return probe_verdict(1);
}
