#include "kernel/cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sstream>
#include <vector>

#include "base/hex.h"
#include "base/random.h"
#include "base/small_file.h"

namespace corral {
namespace {

// The file's text, "" when it cannot be read. The mount table may be large.
std::string ReadText(const std::string& path, size_t limit = kSmallFileLimit) {
  return ReadSmallFile(path.c_str(), limit).value_or("");
}

bool HasWord(std::string_view text, std::string_view word) {
  std::istringstream words{std::string(text)};
  std::string each;
  while (words >> each) {
    if (each == word) return true;
  }
  return false;
}

// The text of `name` in `dir`, or "" when it cannot be read.
std::string ReadAt(int dir, const char* name) {
  int fd = ::openat(dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return "";
  UniqueFd file(fd);
  std::string text;
  char buffer[512];
  for (;;) {
    ssize_t n = ::read(file.get(), buffer, sizeof buffer);
    if (n <= 0) break;
    text.append(buffer, static_cast<size_t>(n));
    if (text.size() > 1 << 20) break;
  }
  return text;
}

// 0 or errno.
int WriteAt(int dir, const char* name, const std::string& text) {
  int fd = ::openat(dir, name, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return errno;
  UniqueFd file(fd);
  if (::write(file.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size())) return errno ? errno : EIO;
  return 0;
}

// The counter `key` of a flat-keyed file ("max 3"), 0 when absent.
uint64_t Counter(std::string_view text, std::string_view key) {
  std::istringstream lines{std::string(text)};
  std::string name;
  uint64_t value = 0;
  while (lines >> name >> value) {
    if (name == key) return value;
  }
  return 0;
}

}  // namespace

std::string CgroupMountPoint(std::string_view mountinfo) {
  std::istringstream lines{std::string(mountinfo)};
  std::string line;
  while (std::getline(lines, line)) {
    size_t dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    std::istringstream after(line.substr(dash + 3));
    std::string fstype;
    after >> fstype;
    if (fstype != "cgroup2") continue;
    std::istringstream fields(line.substr(0, dash));
    std::string field;
    for (int i = 0; i < 5 && fields >> field; ++i) {
      if (i == 4) return field;
    }
  }
  return "";
}

CgroupOffer ProbeCgroupOffer(const std::string& mount_point, std::string_view self_cgroup) {
  CgroupOffer offer;
  if (mount_point.empty()) {
    offer.detail = "no cgroup v2 hierarchy is mounted";
    return offer;
  }
  std::string own;
  std::istringstream lines{std::string(self_cgroup)};
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("0::", 0) == 0) own = line.substr(3);
  }
  if (own.empty() || own[0] != '/' || own.find("/..") != std::string::npos) {
    offer.detail = "cgroup v2 at " + mount_point + ", but corral's own cgroup is not in it (/proc/self/cgroup)";
    return offer;
  }
  const bool root = own == "/";
  const std::string dir = root ? mount_point : mount_point + own;
  const std::string controllers = ReadText(dir + "/cgroup.controllers");
  const std::string offered = root ? controllers : ReadText(dir + "/cgroup.subtree_control");
  const bool writable = ::access(dir.c_str(), W_OK) == 0;
  const std::string where = "cgroup v2 at " + mount_point + ", corral's cgroup " + own;
  if (!writable) {
    offer.detail = where + " is not writable by corral (not root, and not a subtree delegated to this user)";
    return offer;
  }
  offer.pids = HasWord(offered, "pids");
  offer.memory = HasWord(offered, "memory");
  offer.cpu = HasWord(offered, "cpu");
  offer.enable = root;
  if (!offer.pids && !offer.memory && !offer.cpu) {
    const bool none = controllers.find_first_not_of(" \n") == std::string::npos;
    offer.detail = where + (root ? " offers" : " gives its children (cgroup.subtree_control)") +
                   " none of the pids, memory and cpu controllers" +
                   (none ? " (it has no controllers at all: on a hybrid host they are bound to cgroup v1)"
                         : " (available: " + controllers.substr(0, controllers.find('\n')) + ")");
    return offer;
  }
  offer.parent = dir;
  offer.detail = where + ": a cgroup per run with" + std::string(offer.pids ? " pids.max" : "") +
                 std::string(offer.memory ? " memory.max" : "") + std::string(offer.cpu ? " cpu.max" : "");
  return offer;
}

std::string CpuMaxText(uint64_t milli_cpus) {
  // A thousandth of a CPU is 100us of each 100000us period.
  return std::to_string(milli_cpus * (kCpuMaxPeriodMicros / 1000)) + " " + std::to_string(kCpuMaxPeriodMicros);
}

CgroupOffer ProbeHostCgroupOffer() {
  return ProbeCgroupOffer(CgroupMountPoint(ReadText("/proc/self/mountinfo", 64 << 20)), ReadText("/proc/self/cgroup"));
}

Result<RunCgroup> RunCgroup::Create(const std::string& parent, const CgroupLimits& limits, bool enable) {
  RunCgroup cgroup;
  int parent_fd = ::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (parent_fd < 0) {
    return Error::FromErrno(ErrorKind::kUnsupported, "cannot open the cgroup " + parent, "open", errno);
  }
  cgroup.parent_.Reset(parent_fd);
  if (enable) {
    for (const auto& [wanted, name] : {std::pair{limits.pids_max.has_value(), "+pids"},
                                       std::pair{limits.memory_max.has_value(), "+memory"},
                                       std::pair{limits.cpu_milli.has_value(), "+cpu"}}) {
      if (!wanted) continue;
      if (int e = WriteAt(parent_fd, "cgroup.subtree_control", name); e != 0) {
        return Error::FromErrno(ErrorKind::kUnsupported,
                                std::string("cannot enable ") + (name + 1) + " for child cgroups of " + parent,
                                "write", e);
      }
    }
  }
  CORRAL_ASSIGN_OR_RETURN(std::string random, RandomBytes(8));
  cgroup.name_ = "corral-" + HexEncode(random);
  cgroup.path_ = parent + "/" + cgroup.name_;
  if (::mkdirat(parent_fd, cgroup.name_.c_str(), 0755) != 0) {
    return Error::FromErrno(ErrorKind::kUnsupported, "cannot make the run's cgroup " + cgroup.path_, "mkdir", errno);
  }
  int dir = ::openat(parent_fd, cgroup.name_.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir < 0) {
    int e = errno;
    ::unlinkat(parent_fd, cgroup.name_.c_str(), AT_REMOVEDIR);
    cgroup.name_.clear();
    return Error::FromErrno(ErrorKind::kUnsupported, "cannot open the run's cgroup " + cgroup.path_, "open", e);
  }
  cgroup.dir_.Reset(dir);
  auto set = [&](const char* file, const std::string& value) -> Result<void> {
    if (int e = WriteAt(cgroup.dir_.get(), file, value); e != 0) {
      return Error::FromErrno(ErrorKind::kUnsupported, "cannot set " + std::string(file) + " of " + cgroup.path_,
                              "write", e);
    }
    return {};
  };
  if (limits.pids_max) CORRAL_TRY(set("pids.max", std::to_string(*limits.pids_max)));
  if (limits.memory_max) {
    CORRAL_TRY(set("memory.max", std::to_string(*limits.memory_max)));
    // Without swap accounting the file is absent and swap is not counted
    // apart: memory.max still bounds what the sandbox holds in RAM.
    int e = WriteAt(cgroup.dir_.get(), "memory.swap.max", "0");
    if (e != 0 && e != ENOENT) CORRAL_TRY(set("memory.swap.max", "0"));
  }
  if (limits.cpu_milli) CORRAL_TRY(set("cpu.max", CpuMaxText(*limits.cpu_milli)));
  return cgroup;
}

RunCgroup& RunCgroup::operator=(RunCgroup&& other) noexcept {
  if (this != &other) {
    (void)Remove();
    parent_ = std::move(other.parent_);
    dir_ = std::move(other.dir_);
    name_ = std::move(other.name_);
    path_ = std::move(other.path_);
    other.name_.clear();
  }
  return *this;
}

RunCgroup::~RunCgroup() { (void)Remove(); }

CgroupEvents RunCgroup::Events() const {
  CgroupEvents events;
  if (!dir_.valid()) return events;
  events.pids_max = Counter(ReadAt(dir_.get(), "pids.events"), "max");
  events.oom_kills = Counter(ReadAt(dir_.get(), "memory.events"), "oom_kill");
  return events;
}

Result<void> RunCgroup::Remove() {
  if (name_.empty() || !parent_.valid()) return {};
  if (dir_.valid()) {
    // cgroup.kill (Linux 5.14) kills the whole cgroup at once; before it,
    // each listed process, again until none is left.
    if (WriteAt(dir_.get(), "cgroup.kill", "1") != 0) {
      for (int round = 0; round < 100; ++round) {
        std::istringstream pids(ReadAt(dir_.get(), "cgroup.procs"));
        pid_t pid = 0;
        bool any = false;
        while (pids >> pid) {
          any = true;
          ::kill(pid, SIGKILL);
        }
        if (!any) break;
      }
    }
  }
  // The killed processes leave the cgroup as they are reaped: rmdir is
  // EBUSY until then.
  int e = 0;
  for (int attempt = 0; attempt < 500; ++attempt) {
    if (::unlinkat(parent_.get(), name_.c_str(), AT_REMOVEDIR) == 0 || errno == ENOENT) {
      e = 0;
      break;
    }
    e = errno;
    if (e != EBUSY) break;
    struct timespec tick = {0, 2 * 1000 * 1000};
    ::nanosleep(&tick, nullptr);
  }
  std::string path = path_;
  name_.clear();
  dir_.Reset();
  if (e != 0) return Error::FromErrno(ErrorKind::kIo, "cannot remove the run's cgroup " + path, "rmdir", e);
  return {};
}

}  // namespace corral
