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

int BindDnsSocketsChild(int* udp, int* tcp) {
  struct sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_port = htons(53);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int fds[2] = {-1, -1};
  const int types[2] = {SOCK_DGRAM, SOCK_STREAM};
  int err = 0;
  for (int i = 0; i < 2 && err == 0; ++i) {
    fds[i] = ::socket(AF_INET, types[i] | SOCK_CLOEXEC, 0);
    if (fds[i] < 0 || ::bind(fds[i], reinterpret_cast<struct sockaddr*>(&address), sizeof address) != 0) err = errno;
  }
  if (err == 0 && ::listen(fds[1], 16) != 0) err = errno;
  if (err != 0) {
    for (int fd : fds) {
      if (fd >= 0) ::close(fd);
    }
    return err;
  }
  *udp = fds[0];
  *tcp = fds[1];
  return 0;
}

}  // namespace corral
