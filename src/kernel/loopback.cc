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

int BindSandboxServicesChild(ProxyListeners proxy, int fds[kSandboxServiceSockets]) {
  struct Wanted {
    int type;
    int port;
  };
  const Wanted wanted[kSandboxServiceSockets] = {{SOCK_DGRAM, kSandboxDnsPort},
                                                 {SOCK_STREAM, kSandboxDnsPort},
                                                 {SOCK_STREAM, kSandboxHttpProxyPort},
                                                 {SOCK_STREAM, kSandboxSocksPort}};
  const int count = proxy == ProxyListeners::kHttpAndSocks ? 4 : 2;
  for (int i = 0; i < kSandboxServiceSockets; ++i) fds[i] = -1;
  int err = 0;
  for (int i = 0; i < count && err == 0; ++i) {
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
