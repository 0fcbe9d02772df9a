/* Opens raw sockets: AF_INET SOCK_RAW and AF_PACKET. */
#include "probe.h"

#include <netinet/in.h>
#include <sys/socket.h>

int main(void) {
  int escaped = probe_try("socket(AF_INET, SOCK_RAW, ICMP)", socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMP));
  escaped |= probe_try("socket(AF_INET, SOCK_RAW, RAW)", socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW));
  escaped |= probe_try("socket(AF_PACKET, SOCK_RAW)", socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0));
  return probe_verdict(escaped);
}
