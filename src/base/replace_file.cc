#include "base/replace_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "base/hex.h"
#include "base/random.h"
#include "base/unique_fd.h"

namespace corral {
namespace {

constexpr std::string_view kTemporaryPrefix = ".corral-new-";

}  // namespace

Result<void> ReplaceFileAt(int dir, const std::string& name, std::string_view contents, mode_t mode,
                           Durability durability, const std::string& context) {
  CORRAL_ASSIGN_OR_RETURN(std::string salt, RandomBytes(8));
  const std::string temporary = std::string(kTemporaryPrefix) + HexEncode(salt);
  UniqueFd out(::openat(dir, temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode & 0777));
  if (!out) return Error::FromErrno(ErrorKind::kIo, context, "openat", errno);
  auto fail = [&](const char* syscall, int err) -> Result<void> {
    ::unlinkat(dir, temporary.c_str(), 0);
    return Error::FromErrno(ErrorKind::kIo, context, syscall, err);
  };
  while (!contents.empty()) {
    ssize_t n = ::write(out.get(), contents.data(), contents.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return fail("write", n < 0 ? errno : EIO);
    contents.remove_prefix(static_cast<size_t>(n));
  }
  if (::fchmod(out.get(), mode) != 0) return fail("fchmod", errno);
  if (durability == Durability::kSynced && ::fsync(out.get()) != 0) return fail("fsync", errno);
  out.Reset();
  if (::renameat(dir, temporary.c_str(), dir, name.c_str()) != 0) return fail("renameat", errno);
  return {};
}

bool IsReplaceFileTemporary(std::string_view name) {
  if (!name.starts_with(kTemporaryPrefix)) return false;
  std::string_view digits = name.substr(kTemporaryPrefix.size());
  return digits.size() == 16 && digits.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

}  // namespace corral
