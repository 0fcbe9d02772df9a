/* Sends a datagram to 127.0.0.1:PORT over UDP. */
#include "probe.h"

#include <sys/socket.h>

int main(int argc, char **argv) {
  probe_args(argc, 1, "udp_send PORT");
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (!probe_try("socket(AF_INET, SOCK_DGRAM)", fd)) return probe_verdict(0);
  struct sockaddr_in addr = probe_loopback(argv[1]);
  int escaped = 0;
  for (int i = 0; i < 3; ++i) {
    escaped |= probe_try("sendto", sendto(fd, "x", 1, 0, (struct sockaddr *)&addr, sizeof addr));
  }
  return probe_verdict(escaped);
}
