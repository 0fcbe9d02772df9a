/* Creates a hard link at LINK to TARGET (a file outside the writable grants),
 * then writes through it. */
#include "probe.h"

int main(int argc, char **argv) {
  probe_args(argc, 2, "hardlink TARGET LINK");
  if (!probe_try("link", link(argv[1], argv[2]))) return probe_verdict(0);
  int fd = open(argv[2], O_WRONLY | O_APPEND | O_CLOEXEC);
  if (probe_try("open link for writing", fd)) probe_try("write", write(fd, "PWNED\n", 6));
  return probe_verdict(1);
}
