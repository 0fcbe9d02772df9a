#include "overlay/diff.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <string>

#include "base/terminal.h"
#include "base/unique_fd.h"

namespace corral {
namespace {

constexpr const char* kDiffProgram = "/usr/bin/diff";

Result<void> Write(int out, const std::string& text) {
  for (size_t done = 0; done < text.size();) {
    ssize_t n = ::write(out, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Error::FromErrno(ErrorKind::kIo, "diff: cannot write", "write", errno);
    done += static_cast<size_t>(n);
  }
  return {};
}

// The file at `path` below `root` when it is a regular file, else an invalid fd.
UniqueFd OpenRegular(int root, const std::string& path) {
  int fd = OpenBeneath(root, path, O_RDONLY | O_NONBLOCK);
  if (fd < 0) return UniqueFd();
  UniqueFd file(fd);
  struct stat st;
  if (::fstat(file.get(), &st) != 0 || !S_ISREG(st.st_mode)) return UniqueFd();
  return file;
}

bool LooksBinary(int fd) {
  if (fd < 0) return false;
  char buffer[8192];
  ssize_t n = ::pread(fd, buffer, sizeof buffer, 0);
  for (ssize_t i = 0; i < n; ++i) {
    if (buffer[i] == '\0') return true;
  }
  return false;
}

std::string LinkText(int root, const std::string& path) {
  int fd = OpenBeneath(root, path, O_PATH);
  if (fd < 0) return "";
  UniqueFd link(fd);
  char text[4096];
  ssize_t n = ::readlinkat(link.get(), "", text, sizeof text);
  return n < 0 ? std::string() : EscapeControls(std::string(text, static_cast<size_t>(n)));
}

// "a/src/x.c", or "a/tmp/cache/x" for an --overlay-root's "/tmp/cache/x".
std::string Label(const char* side, const std::string& shown) {
  return std::string(side) + "/" + (shown.starts_with('/') ? shown.substr(1) : shown);
}

// diff -u of `before` and `after` (either may be invalid: /dev/null).
Result<void> UnifiedDiff(int before, int after, const std::string& shown, int out) {
  const std::string old_label = before >= 0 ? Label("a", shown) : "/dev/null";
  const std::string new_label = after >= 0 ? Label("b", shown) : "/dev/null";
  pid_t child = ::fork();
  if (child < 0) return Error::FromErrno(ErrorKind::kIo, "diff: cannot start diff(1)", "fork", errno);
  if (child == 0) {
    int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    int a = before >= 0 ? before : null;
    int b = after >= 0 ? after : null;
    // Into 3 and 4 without clobbering each other or `out`.
    int a_high = ::fcntl(a, F_DUPFD, 10);
    int b_high = ::fcntl(b, F_DUPFD, 10);
    int out_high = ::fcntl(out, F_DUPFD, 10);
    if (a_high < 0 || b_high < 0 || out_high < 0 || ::dup2(out_high, 1) < 0 || ::dup2(a_high, 3) < 0 ||
        ::dup2(b_high, 4) < 0) {
      ::_exit(127);
    }
    ::execl(kDiffProgram, "diff", "-u", "--label", old_label.c_str(), "--label", new_label.c_str(), "/dev/fd/3",
            "/dev/fd/4", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) return Error::FromErrno(ErrorKind::kIo, "diff: cannot wait for diff(1)", "waitpid", errno);
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) > 1) {
    return Error(ErrorKind::kIo, std::string("diff: ") + kDiffProgram + " failed on " + shown +
                                     " (is diffutils installed?)");
  }
  return {};
}

}  // namespace

Result<void> WriteDiff(int upper, int real_root, const ChangeSet& changes, int out, const std::string& shown_root) {
  for (const Change& change : changes.changes) {
    const std::string shown = EscapeControls(shown_root.empty() ? change.path : shown_root + "/" + change.path);
    std::string head = "diff --corral " + Label("a", shown) + " " + Label("b", shown) + "\n";
    if (!change.refusal.empty()) head += "refused by apply: " + change.refusal + "\n";
    if (change.kind == ChangeKind::kMode) {
      char text[64];
      std::snprintf(text, sizeof text, "old mode %06o\nnew mode %06o\n", static_cast<unsigned>(change.before),
                    static_cast<unsigned>(change.after));
      CORRAL_TRY(Write(out, head + text));
      continue;
    }
    const bool was_file = S_ISREG(change.before) && change.kind != ChangeKind::kAdded;
    const bool is_file = S_ISREG(change.after);
    if (S_ISDIR(change.before) && change.kind == ChangeKind::kDeleted) {
      CORRAL_TRY(Write(out, head + "deleted directory " + shown + "/ (with everything in it)\n"));
      continue;
    }
    if (S_ISDIR(change.after)) {
      std::string what = change.kind == ChangeKind::kAdded ? "new directory " : "replaced by a directory (its old entries go) ";
      CORRAL_TRY(Write(out, head + what + shown + "/\n"));
      continue;
    }
    if (S_ISLNK(change.after) || (S_ISLNK(change.before) && change.kind != ChangeKind::kAdded)) {
      std::string text = head;
      if (S_ISLNK(change.before) && change.kind != ChangeKind::kAdded) text += "-symlink -> " + LinkText(real_root, change.path) + "\n";
      if (S_ISLNK(change.after)) text += "+symlink -> " + LinkText(upper, change.path) + "\n";
      CORRAL_TRY(Write(out, text));
      if (!is_file && !was_file) continue;
    }
    if (!is_file && !was_file) {
      CORRAL_TRY(Write(out, head + "a special file (not shown)\n"));
      continue;
    }
    UniqueFd before = was_file ? OpenRegular(real_root, change.path) : UniqueFd();
    UniqueFd after = is_file ? OpenRegular(upper, change.path) : UniqueFd();
    if (LooksBinary(before.get()) || LooksBinary(after.get())) {
      CORRAL_TRY(Write(out, head + "Binary files " + (before ? Label("a", shown) : "/dev/null") + " and " +
                                (after ? Label("b", shown) : "/dev/null") + " differ\n"));
      continue;
    }
    CORRAL_TRY(Write(out, head));
    if (change.kind == ChangeKind::kAdded && is_file && change.size_after == 0) {
      CORRAL_TRY(Write(out, "new empty file\n"));
      continue;
    }
    CORRAL_TRY(UnifiedDiff(before.get(), after.get(), shown, out));
  }
  return {};
}

}  // namespace corral
