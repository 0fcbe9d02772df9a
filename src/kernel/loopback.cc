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

namespace {

// One socket of `type` bound on host:port (127.0.0.1, or every address of
// the namespace, which holds lo alone), listening when a stream.
// Returns 0 (the socket in *fd) or an errno (*fd may hold a socket to close).
int BindOn(uint32_t host, int type, int port, int* fd) {
  struct sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(host);
  *fd = ::socket(AF_INET, type | SOCK_CLOEXEC, 0);
  if (*fd < 0 || ::bind(*fd, reinterpret_cast<struct sockaddr*>(&address), sizeof address) != 0) return errno;
  if (type == SOCK_STREAM && ::listen(*fd, kSandboxListenBacklog) != 0) return errno;
  return 0;
}

}  // namespace

int BindSandboxServicesChild(const SandboxServices& services, int fds[kSandboxServiceSockets]) {
  for (int i = 0; i < kSandboxServiceSockets; ++i) fds[i] = -1;
  int err = BindOn(INADDR_LOOPBACK, SOCK_DGRAM, kSandboxDnsPort, &fds[0]);
  if (err == 0) err = BindOn(INADDR_LOOPBACK, SOCK_STREAM, kSandboxDnsPort, &fds[1]);
  if (err == 0 && services.proxy == ProxyListeners::kHttpAndSocks) {
    err = BindOn(INADDR_LOOPBACK, SOCK_STREAM, kSandboxHttpProxyPort, &fds[2]);
    if (err == 0) err = BindOn(INADDR_LOOPBACK, SOCK_STREAM, kSandboxSocksPort, &fds[3]);
  }
  for (int i = 0; i < services.local_count && err == 0; ++i) {
    err = BindOn(INADDR_LOOPBACK, SOCK_STREAM, services.local_ports[i], &fds[4 + i]);
  }
  for (int i = 0; i < services.captured_count && err == 0; ++i) {
    err = BindOn(INADDR_ANY, SOCK_STREAM, services.captured_ports[i], &fds[4 + kMaxLocalPorts + i]);
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
