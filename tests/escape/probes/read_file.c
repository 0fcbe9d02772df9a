/* Reads each PATH and prints its bytes: a secret outside the grants, or a
 * symlink in the workspace pointing at one. */
#include "probe.h"

int main(int argc, char **argv) {
  probe_args(argc, 1, "read_file PATH...");
  int escaped = 0;
  for (int i = 1; i < argc; ++i) escaped |= probe_dump_at(AT_FDCWD, argv[i]);
  return probe_verdict(escaped);
}
