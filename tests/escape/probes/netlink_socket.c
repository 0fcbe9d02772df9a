/* Opens netlink sockets (routing, audit, uevents). */
#include "probe.h"

#include <linux/netlink.h>
#include <sys/socket.h>

int main(void) {
  int escaped = probe_try("socket(AF_NETLINK, NETLINK_ROUTE)", socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE));
  escaped |= probe_try("socket(AF_NETLINK, NETLINK_AUDIT)", socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_AUDIT));
  escaped |= probe_try("socket(AF_NETLINK, NETLINK_KOBJECT_UEVENT)",
                       socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_KOBJECT_UEVENT));
  return probe_verdict(escaped);
}
