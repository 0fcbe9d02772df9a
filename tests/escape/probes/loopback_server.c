/* Serves on the sandbox's own loopback and reaches itself there: a TCP
 * listener on 127.0.0.1 (an ephemeral port) that a second socket connects to
 * and sends a byte through, and a UDP socket on 127.0.0.1 that gets a
 * datagram from another. Exits PROBE_ESCAPED when both went through (here
 * that is the wanted outcome: the loopback works), PROBE_BLOCKED otherwise. */
#include "probe.h"

#include <sys/socket.h>
#include <sys/time.h>

static struct sockaddr_in bound(int fd) {
  struct sockaddr_in addr = probe_loopback("0");
  socklen_t length = sizeof addr;
  if (bind(fd, (struct sockaddr *)&addr, sizeof addr) != 0 ||
      getsockname(fd, (struct sockaddr *)&addr, &length) != 0) {
    addr.sin_port = 0;
  }
  return addr;
}

static int tcp(void) {
  int server = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (!probe_try("socket(AF_INET, SOCK_STREAM)", server)) return 0;
  struct sockaddr_in addr = bound(server);
  if (!probe_try("tcp bind 127.0.0.1", addr.sin_port == 0 ? -1 : 0)) return 0;
  if (!probe_try("tcp listen", listen(server, 1))) return 0;
  int client = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (!probe_try("tcp connect", connect(client, (struct sockaddr *)&addr, sizeof addr))) return 0;
  if (!probe_try("tcp send", send(client, "t", 1, 0))) return 0;
  int accepted = accept4(server, NULL, NULL, SOCK_CLOEXEC);
  if (!probe_try("tcp accept", accepted)) return 0;
  char byte = 0;
  return probe_try("tcp recv", recv(accepted, &byte, 1, 0) == 1 && byte == 't' ? 0 : -1);
}

static int udp(void) {
  int server = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (!probe_try("socket(AF_INET, SOCK_DGRAM)", server)) return 0;
  struct sockaddr_in addr = bound(server);
  if (!probe_try("udp bind 127.0.0.1", addr.sin_port == 0 ? -1 : 0)) return 0;
  struct timeval patience = {.tv_sec = 10};
  setsockopt(server, SOL_SOCKET, SO_RCVTIMEO, &patience, sizeof patience);
  int client = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (!probe_try("udp sendto", sendto(client, "u", 1, 0, (struct sockaddr *)&addr, sizeof addr))) return 0;
  char byte = 0;
  return probe_try("udp recv", recv(server, &byte, 1, 0) == 1 && byte == 'u' ? 0 : -1);
}

int main(void) {
  int tcp_ok = tcp();
  int udp_ok = udp();
  return probe_verdict(tcp_ok && udp_ok);
}
