#include "kernel/loopback.h"

#include <net/if.h>
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

}  // namespace corral
