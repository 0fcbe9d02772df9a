// One descriptor passed over a Unix socket (SCM_RIGHTS, with one byte of
// data): how the sandbox's child hands the command's pty master to corral.
// It allocates nothing and calls only sendmsg/recvmsg, so the child side may
// use it between clone and exec.
//
//   int err = DescriptorMessage::Send(socket, master);     // child: 0 or errno
//   int fd = DescriptorMessage::Receive(socket);           // parent: fd or -1
//
// kQueued takes a descriptor that must already be queued; kWait waits for
// one, or for the other end to close (-1).
#pragma once

#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace corral {

enum class ReceiveWait { kQueued, kWait };

class DescriptorMessage {
 public:
  static int Send(int socket, int fd) {
    DescriptorMessage message;
    struct cmsghdr* header = CMSG_FIRSTHDR(&message.header_);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(sizeof(int));
    ::memcpy(CMSG_DATA(header), &fd, sizeof fd);
    return ::sendmsg(socket, &message.header_, MSG_NOSIGNAL) == 1 ? 0 : errno;
  }
  // The descriptor arrives close-on-exec.
  static int Receive(int socket, ReceiveWait wait = ReceiveWait::kQueued) {
    DescriptorMessage message;
    int flags = MSG_CMSG_CLOEXEC | (wait == ReceiveWait::kQueued ? MSG_DONTWAIT : 0);
    ssize_t n;
    do {
      n = ::recvmsg(socket, &message.header_, flags);
    } while (n < 0 && errno == EINTR);
    struct cmsghdr* header = n == 1 ? CMSG_FIRSTHDR(&message.header_) : nullptr;
    if (header == nullptr || header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS ||
        header->cmsg_len != CMSG_LEN(sizeof(int))) {
      return -1;
    }
    int fd = -1;
    ::memcpy(&fd, CMSG_DATA(header), sizeof fd);
    return fd;
  }

 private:
  DescriptorMessage() {
    header_.msg_iov = &data_;
    header_.msg_iovlen = 1;
    header_.msg_control = control_;
    header_.msg_controllen = sizeof control_;
  }
  char byte_ = 0;
  struct iovec data_ = {&byte_, 1};
  alignas(struct cmsghdr) char control_[CMSG_SPACE(sizeof(int))] = {};
  struct msghdr header_ = {};
};

}  // namespace corral
