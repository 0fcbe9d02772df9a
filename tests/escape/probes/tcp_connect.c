/* Connects to 127.0.0.1:PORT over TCP and sends a byte. */
#include "probe.h"

#include <sys/socket.h>

int main(int argc, char **argv) {
  probe_args(argc, 1, "tcp_connect PORT");
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (!probe_try("socket(AF_INET, SOCK_STREAM)", fd)) return probe_verdict(0);
  struct sockaddr_in addr = probe_loopback(argv[1]);
  if (!probe_try("connect", connect(fd, (struct sockaddr *)&addr, sizeof addr))) return probe_verdict(0);
  probe_try("send", send(fd, "x", 1, 0));
  return probe_verdict(1);
}
