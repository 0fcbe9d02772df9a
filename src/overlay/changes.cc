#include "overlay/changes.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/directory_names.h"
#include "base/hex.h"
#include "base/json_bytes.h"
#include "base/mutant.h"
#include "base/sha256.h"
#include "base/terminal.h"
#include "base/unique_fd.h"

namespace corral {
namespace {

constexpr uint64_t kHashLimit = 1 << 20;  // "where cheap"
constexpr int kMaxDepth = 256;

Error Io(const std::string& what, const char* call, int err) {
  return Error::FromErrno(ErrorKind::kIo, "overlay: " + what, call, err);
}

std::string Join(const std::string& dir, const std::string& name) { return dir.empty() ? name : dir + "/" + name; }

bool IsWhiteout(const struct stat& st) { return S_ISCHR(st.st_mode) && st.st_rdev == makedev(0, 0); }

bool IsOpaque(int parent, const std::string& name) {
  UniqueFd fd(::openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) return false;
  char value[4] = {};
  ssize_t n = ::fgetxattr(fd.get(), "user.overlay.opaque", value, sizeof value);
  return n == 1 && value[0] == 'y';
}

// Whether two regular files hold the same bytes.
bool SameBytes(int a_dir, const std::string& a_name, int b_dir, const std::string& b_name) {
  UniqueFd a(::openat(a_dir, a_name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  UniqueFd b(::openat(b_dir, b_name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!a || !b) return false;
  static char left[65536], right[65536];
  for (;;) {
    ssize_t n = ::read(a.get(), left, sizeof left);
    if (n < 0) return false;
    size_t got = 0;
    while (got < static_cast<size_t>(n)) {
      ssize_t m = ::read(b.get(), right + got, static_cast<size_t>(n) - got);
      if (m <= 0) return false;
      got += static_cast<size_t>(m);
    }
    if (std::memcmp(left, right, static_cast<size_t>(n)) != 0) return false;
    if (n == 0) return ::read(b.get(), right, 1) == 0;
  }
}

std::string LinkText(int dir, const std::string& name) {
  char buffer[4096];
  ssize_t n = ::readlinkat(dir, name.c_str(), buffer, sizeof buffer);
  return n < 0 ? std::string() : std::string(buffer, static_cast<size_t>(n));
}

std::string Refusal(const struct stat& st) {
  if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) {
    if ((st.st_mode & (S_ISUID | S_ISGID)) != 0 && !MutantActive(Mutant::kApplySpecial)) {
      return "set-user-ID or set-group-ID bit";
    }
    return "";
  }
  if (S_ISLNK(st.st_mode)) return "";
  if (MutantActive(Mutant::kApplySpecial)) return "";
  if (S_ISFIFO(st.st_mode)) return "a FIFO";
  if (S_ISSOCK(st.st_mode)) return "a socket";
  return "a device node";
}

Baseline BaselineOf(int real_dir, const std::string& name, int64_t started_ns) {
  Baseline base;
  struct stat st;
  if (real_dir < 0 || ::fstatat(real_dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return base;
  base.exists = true;
  base.mode = st.st_mode;
  base.size = static_cast<uint64_t>(st.st_size);
  base.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  base.ino = st.st_ino;
  base.ctime_ns = static_cast<int64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec;
  base.changed_in_run = started_ns != 0 && base.ctime_ns > started_ns;
  if (S_ISREG(st.st_mode) && base.size <= kHashLimit) {
    UniqueFd fd(::openat(real_dir, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (fd) {
      Result<std::string> digest = Sha256HexOfFd(fd.get());
      if (digest.ok()) base.sha256 = *digest;
    }
  }
  return base;
}

// Whether `name` in `dir` was made after `started_ns` (its birth time,
// where the filesystem keeps one; false where it does not).
bool BornAfter(int dir, const std::string& name, int64_t started_ns) {
  struct statx stx;
  if (started_ns == 0 ||
      ::statx(dir, name.c_str(), AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, STATX_BTIME, &stx) != 0 ||
      (stx.stx_mask & STATX_BTIME) == 0) {
    return false;
  }
  return static_cast<int64_t>(stx.stx_btime.tv_sec) * 1000000000 + stx.stx_btime.tv_nsec > started_ns;
}

class Scanner {
 public:
  Scanner(ChangeSet& out, int64_t started_ns) : out_(out), started_ns_(started_ns) {}

  // `real` is the real directory at `dir` (-1: absent, or hidden by an
  // opaque directory above).
  Result<void> Directory(int upper, int real, const std::string& dir, int depth) {
    if (depth > kMaxDepth) return Error(ErrorKind::kPolicy, "overlay: the upper layer is nested too deep at " + dir);
    for (const std::string& name : DirectoryNames(upper)) {
      const std::string path = Join(dir, name);
      struct stat up;
      if (::fstatat(upper, name.c_str(), &up, AT_SYMLINK_NOFOLLOW) != 0) return Io("cannot examine " + path, "fstatat", errno);
      struct stat re;
      const bool in_real = real >= 0 && ::fstatat(real, name.c_str(), &re, AT_SYMLINK_NOFOLLOW) == 0;
      Change change;
      change.path = path;
      change.before = in_real ? re.st_mode : 0;
      change.size_before = in_real && S_ISREG(re.st_mode) ? static_cast<uint64_t>(re.st_size) : 0;
      change.after = up.st_mode;
      change.size_after = S_ISREG(up.st_mode) ? static_cast<uint64_t>(up.st_size) : 0;
      if (IsWhiteout(up)) {
        if (!in_real) continue;  // a whiteout over nothing
        change.kind = ChangeKind::kDeleted;
        change.after = 0;
        CORRAL_TRY(Add(change, real, name));
        continue;
      }
      if (S_ISREG(up.st_mode)) out_.upper_bytes += static_cast<uint64_t>(up.st_size);
      change.refusal = Refusal(up);
      const bool same_type = in_real && (re.st_mode & S_IFMT) == (up.st_mode & S_IFMT);
      if (S_ISDIR(up.st_mode)) {
        const bool opaque = IsOpaque(upper, name);
        if (!in_real) {
          change.kind = ChangeKind::kAdded;
          CORRAL_TRY(Add(change, real, name));
        } else if (!same_type || opaque) {
          change.kind = ChangeKind::kReplaced;
          CORRAL_TRY(Add(change, real, name));
        } else if ((re.st_mode & 07777) != (up.st_mode & 07777) || !change.refusal.empty()) {
          change.kind = ChangeKind::kMode;
          CORRAL_TRY(Add(change, real, name));
        } else {
          // Passed through: what is below it was changed against this
          // directory, so it must still be this one at apply.
          Baseline above = BaselineOf(real, name, 0);
          above.changed_in_run = BornAfter(real, name, started_ns_);
          out_.above[path] = above;
        }
        UniqueFd upper_child(::openat(upper, name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!upper_child) return Io("cannot open " + path + " in the upper layer", "openat", errno);
        UniqueFd real_child;
        if (same_type && !opaque) real_child.Reset(OpenBeneath(real, name, O_PATH | O_DIRECTORY));
        CORRAL_TRY(Directory(upper_child.get(), real_child.get(), path, depth + 1));
        continue;
      }
      if (!in_real) {
        change.kind = ChangeKind::kAdded;
      } else if (!same_type) {
        change.kind = ChangeKind::kReplaced;
      } else if (S_ISREG(up.st_mode)) {
        const bool same_bytes = re.st_size == up.st_size && SameBytes(real, name, upper, name);
        const bool same_mode = (re.st_mode & 07777) == (up.st_mode & 07777);
        if (same_bytes && same_mode && change.refusal.empty()) continue;  // copied up, left equal
        change.kind = same_bytes ? ChangeKind::kMode : ChangeKind::kModified;
      } else if (S_ISLNK(up.st_mode)) {
        if (LinkText(real, name) == LinkText(upper, name)) continue;
        change.kind = ChangeKind::kModified;
      } else {
        change.kind = ChangeKind::kModified;
      }
      CORRAL_TRY(Add(change, real, name));
    }
    return {};
  }

 private:
  Result<void> Add(const Change& change, int real, const std::string& name) {
    out_.changes.push_back(change);
    out_.baseline.push_back(BaselineOf(real, name, started_ns_));
    if (RemovesRealDirectory(change)) {
      bool whole = true;
      UniqueFd dir(OpenBeneath(real, name, O_RDONLY | O_DIRECTORY));
      if (dir.get() < 0) {
        whole = false;
      } else {
        CORRAL_TRY(RecordTree(dir.get(), change.path, 0, whole));
      }
      out_.baseline.back().tree = whole;
    }
    return {};
  }

  // Records every real entry below `dir` (at `path`) in `trees`; `whole`
  // turns false where a directory cannot be read (apply then holds the
  // change back: it cannot tell what it would remove).
  Result<void> RecordTree(int dir, const std::string& path, int depth, bool& whole) {
    if (depth > kMaxDepth) {
      whole = false;
      return {};
    }
    for (const std::string& name : DirectoryNames(dir)) {
      const std::string child = path + "/" + name;
      Baseline entry = BaselineOf(dir, name, started_ns_);
      entry.sha256.clear();  // the ctime sees what a hash would, for less
      if (!entry.exists) {
        whole = false;
        continue;
      }
      out_.trees[child] = entry;
      if (!S_ISDIR(entry.mode)) continue;
      UniqueFd below(::openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (!below) {
        whole = false;
        continue;
      }
      CORRAL_TRY(RecordTree(below.get(), child, depth + 1, whole));
    }
    return {};
  }
  ChangeSet& out_;
  int64_t started_ns_;
};

// An added regular file equal to a deleted one is shown as a rename.
void FindRenames(int upper, ChangeSet& set) {
  std::multimap<std::pair<uint64_t, std::string>, size_t> deleted;
  for (size_t i = 0; i < set.changes.size(); ++i) {
    const Change& change = set.changes[i];
    if (change.kind == ChangeKind::kDeleted && S_ISREG(change.before) && !set.baseline[i].sha256.empty()) {
      deleted.emplace(std::make_pair(change.size_before, set.baseline[i].sha256), i);
    }
  }
  if (deleted.empty()) return;
  for (Change& change : set.changes) {
    if (change.kind != ChangeKind::kAdded || !S_ISREG(change.after) || change.size_after > kHashLimit) continue;
    int fd = OpenBeneath(upper, change.path, O_RDONLY | O_NONBLOCK);
    if (fd < 0) continue;
    UniqueFd file(fd);
    Result<std::string> digest = Sha256HexOfFd(file.get());
    if (!digest.ok()) continue;
    auto match = deleted.find(std::make_pair(change.size_after, *digest));
    if (match == deleted.end()) continue;
    change.renamed_from = set.changes[match->second].path;
    set.changes[match->second].renamed_away = true;
    deleted.erase(match);
  }
}

std::string Size(uint64_t bytes) {
  char text[32];
  if (bytes < 1024) {
    std::snprintf(text, sizeof text, "%llu B", static_cast<unsigned long long>(bytes));
  } else if (bytes < 1024 * 1024) {
    std::snprintf(text, sizeof text, "%.1f KiB", static_cast<double>(bytes) / 1024);
  } else {
    std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / (1024 * 1024));
  }
  return text;
}

std::string Octal(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

std::string TypeSuffix(mode_t mode) { return S_ISDIR(mode) ? "/" : S_ISLNK(mode) ? "@" : ""; }

// One line of the summary or the stat, its path shown with control bytes escaped.
std::string Line(const Change& change) {
  std::string path = EscapeControls(change.path);
  switch (change.kind) {
    case ChangeKind::kAdded:
      if (!change.renamed_from.empty()) {
        return "  renamed   " + EscapeControls(change.renamed_from) + " -> " + path + " (" + Size(change.size_after) + ")";
      }
      return "  added     " + path + TypeSuffix(change.after) +
             (S_ISREG(change.after) ? " (" + Size(change.size_after) + ")" : "");
    case ChangeKind::kModified:
      return "  changed   " + path + TypeSuffix(change.after) +
             (S_ISREG(change.after) ? " (" + Size(change.size_before) + " -> " + Size(change.size_after) + ")" : "");
    case ChangeKind::kMode:
      return "  mode      " + path + TypeSuffix(change.after) + " (" + Octal(change.before) + " -> " +
             Octal(change.after) + ")";
    case ChangeKind::kDeleted:
      return "  deleted   " + path + TypeSuffix(change.before) +
             (S_ISREG(change.before) ? " (" + Size(change.size_before) + ")" : "");
    case ChangeKind::kReplaced:
      return "  replaced  " + path + TypeSuffix(change.after) + " (was " +
             (S_ISDIR(change.before) ? "a directory" : S_ISLNK(change.before) ? "a symlink" : "a file") + ")";
  }
  return "";
}

}  // namespace

int OpenBeneath(int root, const std::string& relative, int flags) {
  struct open_how how = {};
  how.flags = static_cast<uint64_t>(flags | O_NOFOLLOW | O_CLOEXEC);
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  if (MutantActive(Mutant::kApplyNoFollow)) {  // the mutant: names are followed like paths
    how.flags &= ~static_cast<uint64_t>(O_NOFOLLOW);
    how.resolve = 0;
  }
  const char* path = relative.empty() ? "." : relative.c_str();
  int fd = static_cast<int>(::syscall(SYS_openat2, root, path, &how, sizeof how));
  return fd < 0 ? -errno : fd;
}

bool RemovesRealDirectory(const Change& change) {
  return (change.kind == ChangeKind::kDeleted || change.kind == ChangeKind::kReplaced) && S_ISDIR(change.before);
}

std::string_view ChangeKindName(ChangeKind kind) {
  switch (kind) {
    case ChangeKind::kAdded: return "added";
    case ChangeKind::kModified: return "modified";
    case ChangeKind::kMode: return "mode";
    case ChangeKind::kDeleted: return "deleted";
    case ChangeKind::kReplaced: return "replaced";
  }
  return "modified";
}

Result<ChangeSet> ScanChanges(int upper, int real_root, int64_t started_ns) {
  ChangeSet set;
  Scanner scanner(set, started_ns);
  CORRAL_TRY(scanner.Directory(upper, real_root, "", 0));
  FindRenames(upper, set);
  return set;
}

namespace {

constexpr char kBaselineHeader[] = "corral-baseline 2";

// One record: ROLE HEX exists mode size mtime ino during ctime tree SHA.
void WriteRecord(std::ostream& out, char role, const std::string& path, const Baseline& b) {
  out << role << ' ' << HexEncode(path) << ' ' << (b.exists ? 1 : 0) << ' ' << b.mode << ' ' << b.size << ' '
      << b.mtime_ns << ' ' << b.ino << ' ' << (b.changed_in_run ? 1 : 0) << ' ' << b.ctime_ns << ' '
      << (b.tree ? 1 : 0) << ' ' << (b.sha256.empty() ? "-" : b.sha256) << '\n';
}

bool ReadRecord(const std::string& line, bool versioned, char& role, std::string& hex, Baseline& b) {
  std::istringstream fields(line);
  std::string sha;
  int exists = 0, during = 0, tree = 0;
  unsigned long long mode = 0;
  role = 'c';
  if (versioned) {
    std::string tag;
    if (!(fields >> tag) || tag.size() != 1 || (tag[0] != 'c' && tag[0] != 'a' && tag[0] != 't')) return false;
    role = tag[0];
    if (!(fields >> hex >> exists >> mode >> b.size >> b.mtime_ns >> b.ino >> during >> b.ctime_ns >> tree >> sha)) {
      return false;
    }
  } else if (!(fields >> hex >> exists >> mode >> b.size >> b.mtime_ns >> b.ino >> during >> sha)) {
    return false;
  }
  b.exists = exists != 0;
  b.mode = static_cast<mode_t>(mode);
  b.changed_in_run = during != 0;
  b.tree = tree != 0;
  if (sha != "-") b.sha256 = sha;
  return true;
}

bool Below(const std::string& path, const std::string& top) {
  return path.size() > top.size() && path.compare(0, top.size(), top) == 0 && path[top.size()] == '/';
}

}  // namespace

std::string SerializeBaseline(const ChangeSet& set) {
  std::ostringstream out;
  out << kBaselineHeader << '\n';
  for (size_t i = 0; i < set.changes.size(); ++i) WriteRecord(out, 'c', set.changes[i].path, set.baseline[i]);
  for (const auto& [path, b] : set.above) WriteRecord(out, 'a', path, b);
  for (const auto& [path, b] : set.trees) WriteRecord(out, 't', path, b);
  return out.str();
}

Result<void> AttachBaseline(const std::string& text, ChangeSet& set) {
  std::map<std::string, Baseline> changes;        // by the path's hex
  std::map<std::string, Baseline> above, trees;   // by the path
  std::istringstream in(text);
  std::string line;
  bool versioned = false;
  const Error damaged(ErrorKind::kPolicy, "overlay: the run's baseline is damaged; nothing was applied");
  for (bool first = true; std::getline(in, line); first = false) {
    if (first && line == kBaselineHeader) {
      versioned = true;
      continue;
    }
    char role = 'c';
    std::string hex;
    Baseline b;
    if (!ReadRecord(line, versioned, role, hex, b)) return damaged;
    if (role == 'c') {
      changes[hex] = b;
      continue;
    }
    Result<std::string> path = HexDecode(hex);
    if (!path.ok()) return damaged;
    (role == 'a' ? above : trees)[*path] = b;
  }
  for (size_t i = 0; i < set.changes.size(); ++i) {
    const std::string& path = set.changes[i].path;
    auto found = changes.find(HexEncode(path));
    if (found == changes.end()) continue;
    set.baseline[i] = found->second;
    if (!found->second.tree) continue;
    // The tree below it is the text's, whole: an entry only the scan saw
    // appeared since the text's run, and must stay unrecorded.
    for (auto it = set.trees.lower_bound(path + "/"); it != set.trees.end() && Below(it->first, path);) {
      it = set.trees.erase(it);
    }
    for (auto it = trees.lower_bound(path + "/"); it != trees.end() && Below(it->first, path); ++it) {
      set.trees[it->first] = it->second;
    }
  }
  for (const auto& [path, b] : above) set.above[path] = b;
  return {};
}

std::string RenderSummary(const std::string& run_id, const ChangeSet& set) {
  constexpr size_t kLines = 15;
  size_t counts[5] = {};
  size_t renamed = 0, refused = 0;
  for (const Change& change : set.changes) {
    if (change.renamed_away) continue;
    if (!change.renamed_from.empty()) ++renamed;
    else ++counts[static_cast<int>(change.kind)];
    if (!change.refusal.empty()) ++refused;
  }
  std::ostringstream out;
  out << "corral: overlay run " << run_id << ": ";
  if (set.changes.empty()) {
    out << "no changes; nothing to apply (`corral discard " << run_id << "` drops the run)\n";
    return out.str();
  }
  out << counts[0] << " added, " << counts[1] << " changed, " << counts[3] << " deleted, " << renamed
      << " renamed, " << counts[2] << " mode changes, " << counts[4] << " replaced (" << Size(set.upper_bytes)
      << " written)\n";
  size_t shown = 0;
  for (const Change& change : set.changes) {
    if (change.renamed_away) continue;
    if (shown++ == kLines) {
      out << "  ... and more: `corral diff --stat " << run_id << "`\n";
      break;
    }
    out << Line(change) << (change.refusal.empty() ? "" : "  [refused: " + change.refusal + "]") << "\n";
  }
  if (refused != 0) out << "  " << refused << " change(s) apply will refuse (special files, set-ID bits)\n";
  out << "review: corral diff " << run_id << "; keep: corral apply " << run_id << "; drop: corral discard " << run_id
      << "\n";
  return out.str();
}

std::string RenderStat(const ChangeSet& set) {
  std::ostringstream out;
  for (const Change& change : set.changes) {
    if (change.renamed_away) continue;
    out << Line(change) << (change.refusal.empty() ? "" : "  [refused: " + change.refusal + "]") << "\n";
  }
  out << set.changes.size() << " change(s), " << Size(set.upper_bytes) << " in the upper layer\n";
  return out.str();
}

std::string RenderJson(const std::string& run_id, const ChangeSet& set) {
  nlohmann::json changes = nlohmann::json::array();
  for (const Change& change : set.changes) {
    nlohmann::json one = {{"path", change.path}, {"kind", ChangeKindName(change.kind)}};
    if (change.before != 0) one["mode_before"] = Octal(change.before);
    if (change.after != 0) one["mode_after"] = Octal(change.after);
    one["type"] = S_ISDIR(change.after ? change.after : change.before)   ? "directory"
                  : S_ISLNK(change.after ? change.after : change.before) ? "symlink"
                                                                         : "file";
    if (S_ISREG(change.before)) one["size_before"] = change.size_before;
    if (S_ISREG(change.after)) one["size_after"] = change.size_after;
    if (!change.renamed_from.empty()) one["renamed_from"] = change.renamed_from;
    if (!change.refusal.empty()) one["refused"] = change.refusal;
    changes.push_back(one);
  }
  nlohmann::json doc = {{"run", run_id}, {"changes", changes}, {"upper_bytes", set.upper_bytes}};
  return EncodeBytes(doc).dump() + "\n";
}

}  // namespace corral
