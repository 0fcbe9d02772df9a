/* Creates or truncates each PATH and writes a line into it. With -p, first
 * creates missing parent directories. */
#include "probe.h"

#include <sys/stat.h>

static void make_parents(const char *path) {
  char buffer[4096];
  snprintf(buffer, sizeof buffer, "%s", path);
  for (char *slash = strchr(buffer + 1, '/'); slash != NULL; slash = strchr(slash + 1, '/')) {
    *slash = '\0';
    mkdir(buffer, 0755);
    *slash = '/';
  }
}

int main(int argc, char **argv) {
  probe_args(argc, 1, "write_file [-p] PATH...");
  int parents = strcmp(argv[1], "-p") == 0;
  int escaped = 0;
  for (int i = 1 + parents; i < argc; ++i) {
    if (parents) make_parents(argv[i]);
    int fd = open(argv[i], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
    if (!probe_try(argv[i], fd)) continue;
    escaped |= probe_try("write", write(fd, "corral-probe-was-here\n", 22));
    close(fd);
  }
  return probe_verdict(escaped);
}
