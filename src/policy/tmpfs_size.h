// The size of the sandbox's private tmpfs mounts, which the host's memory
// backs: /tmp, the isolated $HOME and /dev/shm.
//
// Without a size a tmpfs may take half the host's RAM, and each of the three
// is its own tmpfs: a command writing to /tmp takes host memory until the run
// ends. One setting bounds them (--tmpfs-size / sandbox.tmpfs_size):
//
//   /tmp and $HOME  SIZE each, and SIZE / 8 KiB inodes (a file costs kernel
//                   memory that size= does not count; 131072 files for 1g);
//   /dev/shm        a quarter of SIZE: POSIX shared memory and semaphores
//                   are small, and the heavy users (a browser, a data loader)
//                   fit in 256m by default.
//
// Default 1g, so a run holds at most 2.25 GiB of host memory in them. A write
// past the cap fails with ENOSPC inside; nothing outside is affected.
//
//   Result<uint64_t> bytes = ParseTmpfsSize("512m");   // 536870912
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.h"

namespace corral {

inline constexpr uint64_t kMiB = 1024ull * 1024;
inline constexpr uint64_t kDefaultTmpfsSize = 1024 * kMiB;
inline constexpr uint64_t kMinTmpfsSize = 4 * kMiB;
inline constexpr uint64_t kMaxTmpfsSize = 1024 * 1024 * kMiB;  // 1 TiB

// "N", "Nk", "Nm", "Ng" or "Nt" (binary units, either case); whole numbers.
// Refused (kUsage) outside kMinTmpfsSize..kMaxTmpfsSize.
Result<uint64_t> ParseTmpfsSize(std::string_view text);
// The same spelling for any size (a resource limit): kUsage outside
// minimum..maximum or on overflow, the message starting with `what`.
Result<uint64_t> ParseSize(std::string_view text, uint64_t minimum, uint64_t maximum, std::string_view what);
// The shortest exact form ParseTmpfsSize reads back ("1g", "1536m", "5000").
std::string TmpfsSizeText(uint64_t bytes);

// The mount options of each private tmpfs, for a size already checked.
std::string TmpfsOptions(uint64_t size, std::string_view mode);     // /tmp and $HOME
std::string ShmTmpfsOptions(uint64_t size, std::string_view mode);  // /dev/shm

}  // namespace corral
