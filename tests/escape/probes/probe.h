/* Shared by the escape probes: each probe attempts one escape and exits with
 *   PROBE_BLOCKED (10)  every attempt failed,
 *   PROBE_ESCAPED (20)  an attempt succeeded,
 *   PROBE_USAGE   (2)   bad arguments.
 * The exit code only shows that the probe ran; the tests judge the escape
 * from outside the sandbox (canaries, listeners, decoys, captured output).
 * Include this header first: it sets _GNU_SOURCE. */
#ifndef CORRAL_PROBE_H
#define CORRAL_PROBE_H

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PROBE_BLOCKED 10
#define PROBE_ESCAPED 20
#define PROBE_USAGE 2

static inline void probe_args(int argc, int want, const char *usage) {
  if (argc < want + 1) {
    fprintf(stderr, "usage: %s\n", usage);
    exit(PROBE_USAGE);
  }
}

/* Reports one attempt: `rc` < 0 means it failed with errno. Returns 1 when it
 * succeeded. */
static inline int probe_try(const char *what, long rc) {
  if (rc < 0) {
    printf("%s: blocked (%s)\n", what, strerror(errno));
    return 0;
  }
  printf("%s: SUCCEEDED\n", what);
  return 1;
}

static inline int probe_verdict(int escaped) {
  fflush(stdout);
  return escaped ? PROBE_ESCAPED : PROBE_BLOCKED;
}

/* Copies everything from `fd` to stdout; returns the byte count or -1. */
static inline long probe_dump_fd(int fd) {
  char buffer[4096];
  long total = 0;
  for (;;) {
    ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0) return -1;
    if (n == 0) break;
    fwrite(buffer, 1, (size_t)n, stdout);
    total += n;
  }
  fflush(stdout);
  return total;
}

/* Opens `path` (relative to `dirfd`) and prints its bytes. Returns 1 when
 * anything could be read. */
static inline int probe_dump_at(int dirfd, const char *path) {
  int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
  if (!probe_try(path, fd)) return 0;
  long n = probe_dump_fd(fd);
  close(fd);
  return probe_try("read", n) && n > 0;
}

/* 127.0.0.1:PORT. */
static inline struct sockaddr_in probe_loopback(const char *port) {
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(port))};
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return addr;
}

#endif
