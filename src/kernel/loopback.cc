#include "kernel/loopback.h"

#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

namespace corral {

int BringUpLoopbackChild() {
  // Any socket of the namespace carries the interface ioctls.
  int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return errno;
  struct ifreq request = {};
  request.ifr_name[0] = 'l';
  request.ifr_name[1] = 'o';
  int err = ::ioctl(fd, SIOCGIFFLAGS, &request) == 0 ? 0 : errno;
  if (err == 0 && (request.ifr_flags & IFF_UP) == 0) {
    request.ifr_flags = static_cast<short>(request.ifr_flags | IFF_UP);
    if (::ioctl(fd, SIOCSIFFLAGS, &request) != 0) err = errno;
  }
  ::close(fd);
  return err;
}

int BindSandboxServicesChild(const SandboxServices& services, int fds[kSandboxServiceSockets]) {
  struct Wanted {
    int type;
    int port;
  };
  Wanted wanted[kSandboxServiceSockets] = {{SOCK_DGRAM, kSandboxDnsPort},
                                           {SOCK_STREAM, kSandboxDnsPort},
                                           {SOCK_STREAM, kSandboxHttpProxyPort},
                                           {SOCK_STREAM, kSandboxSocksPort}};
  const bool proxy = services.proxy == ProxyListeners::kHttpAndSocks;
  for (int i = 0; i < kMaxLocalPorts; ++i) wanted[4 + i] = {SOCK_STREAM, i < services.local_count ? services.local_ports[i] : 0};
  for (int i = 0; i < kSandboxServiceSockets; ++i) fds[i] = -1;
  int err = 0;
  for (int i = 0; i < kSandboxServiceSockets && err == 0; ++i) {
    if ((i == 2 || i == 3) && !proxy) continue;
    if (i >= 4 && i - 4 >= services.local_count) break;
    struct sockaddr_in address = {};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(wanted[i].port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    fds[i] = ::socket(AF_INET, wanted[i].type | SOCK_CLOEXEC, 0);
    if (fds[i] < 0 || ::bind(fds[i], reinterpret_cast<struct sockaddr*>(&address), sizeof address) != 0) {
      err = errno;
    } else if (wanted[i].type == SOCK_STREAM && ::listen(fds[i], 128) != 0) {
      err = errno;
    }
  }
  if (err != 0) {
    for (int i = 0; i < kSandboxServiceSockets; ++i) {
      if (fds[i] >= 0) ::close(fds[i]);
      fds[i] = -1;
    }
  }
  return err;
}

}  // namespace corral
