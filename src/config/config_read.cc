#include "config/config_read.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "base/unique_fd.h"

namespace corral {
namespace {

Error Unreadable(const std::string& path, std::string_view what, std::string_view syscall, int err) {
  return Error::FromErrno(ErrorKind::kConfig, path + ": " + std::string(what), syscall, err)
      .WithCode("config_unreadable");
}

Error Insecure(const std::string& path, const std::string& what) {
  return Error(ErrorKind::kConfig, path + ": " + what).WithCode("config_insecure");
}

}  // namespace

Result<std::optional<std::string>> ReadConfigFile(const std::string& path, WriterRule writer_rule, uid_t caller) {
  // O_NONBLOCK: a FIFO planted at the path must not hang the open.
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (!fd) {
    int err = errno;
    struct stat link;
    if ((err == ENOENT || err == ENOTDIR) && ::lstat(path.c_str(), &link) != 0) return std::optional<std::string>();
    if (err == ENOENT) {
      return Error(ErrorKind::kConfig, path + ": a symlink to a file that does not exist")
          .WithCode("config_unreadable");
    }
    return Unreadable(path, "cannot open the config file", "open", err);
  }
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return Unreadable(path, "cannot stat the config file", "fstat", errno);
  if (!S_ISREG(st.st_mode)) {
    return Error(ErrorKind::kConfig, path + ": not a regular file").WithCode("config_unreadable");
  }
  if (writer_rule == WriterRule::kCallerOrRoot && (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return Insecure(path, std::string("writable by ") + ((st.st_mode & S_IWOTH) != 0 ? "other users" : "its group") +
                              " (mode " + mode + "), so anyone who can write it could open the sandbox; run `chmod go-w " +
                              path + "`");
  }
  if (writer_rule == WriterRule::kCallerOrRoot && st.st_uid != caller && st.st_uid != 0) {
    return Insecure(path, "owned by uid " + std::to_string(st.st_uid) + ", not by you (uid " +
                              std::to_string(caller) + ") or root; only your own file may configure your sandbox");
  }
  if (static_cast<size_t>(st.st_size) > kMaxConfigBytes) {
    return Error(ErrorKind::kConfig, path + ": larger than " + std::to_string(kMaxConfigBytes) + " bytes")
        .WithCode("config_unreadable");
  }
  std::string text;
  char buffer[8192];
  for (;;) {
    ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Unreadable(path, "cannot read the config file", "read", errno);
    if (n == 0) break;
    text.append(buffer, static_cast<size_t>(n));
    if (text.size() > kMaxConfigBytes) {
      return Error(ErrorKind::kConfig, path + ": larger than " + std::to_string(kMaxConfigBytes) + " bytes")
          .WithCode("config_unreadable");
    }
  }
  return std::optional<std::string>(std::move(text));
}

}  // namespace corral
