// The memory devices every mount view binds read-only from the host (null,
// zero, full, random, urandom: major 1). Given as the command's stdio, one
// of them is opened anew from the view's bind before exec (exec/child.cc),
// so the command never holds the caller's node of it; exec/stdio_modes.h
// therefore has nothing of theirs to put back.
//
//   const char* path = ViewDevicePath(st.st_rdev);  // "/dev/null", or nullptr
//
// Async-signal-safe: the child calls it between clone and exec.
#pragma once

#include <sys/sysmacros.h>
#include <sys/types.h>

namespace corral {

struct ViewDevice {
  unsigned minor;    // of major 1
  const char* path;  // in the view, and on the host
};

inline constexpr ViewDevice kViewDevices[] = {
    {3, "/dev/null"}, {5, "/dev/zero"}, {7, "/dev/full"}, {8, "/dev/random"}, {9, "/dev/urandom"}};

// The view's path of the character device `rdev`, or nullptr when it is not one of them.
inline const char* ViewDevicePath(dev_t rdev) {
  if (major(rdev) != 1) return nullptr;
  for (const ViewDevice& device : kViewDevices) {
    if (minor(rdev) == device.minor) return device.path;
  }
  return nullptr;
}

}  // namespace corral
