#include "run/program.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "base/mutant.h"
#include "base/sha256.h"

namespace corral {

Result<PinnedProgram> PreparePinnedProgram(const Policy& policy, const std::string& program) {
  if (!policy.pin_sha256()) return Error(ErrorKind::kInternal, "no pin in the policy");
  if (program.empty() || program.front() != '/') {
    return Error(ErrorKind::kUsage, "--pin-sha256: the program must be an absolute path (got \"" + program +
                                        "\"), so the digest names one file");
  }
  CORRAL_ASSIGN_OR_RETURN(PinnedPath pinned, PinPath(program, "--pin-sha256 program"));
  const PathGrant* grant = policy.GrantFor(pinned.path);
  if (grant == nullptr || !Has(grant->access, Access::kExec)) {
    return Error(ErrorKind::kPolicy, "--pin-sha256: " + pinned.path +
                                         " is not under an exec grant (--allow-exec, the workspace or a system tree)");
  }
  UniqueFd fd(::open(pinned.path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd) {
    return Error::FromErrno(ErrorKind::kPolicy,
                            "--pin-sha256: cannot read " + pinned.path + " to hash it; a program that may be "
                            "executed but not read cannot be pinned",
                            "open", errno);
  }
  struct stat st;
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return Error(ErrorKind::kPolicy, "--pin-sha256: " + pinned.path + " is not a regular file");
  }
  if (FileIdentity{st.st_dev, st.st_ino} != pinned.id) {
    return Error(ErrorKind::kPolicy, "--pin-sha256: " + pinned.path + " changed while it was being checked");
  }
  char magic[2] = {};
  if (::pread(fd.get(), magic, sizeof magic, 0) == 2 && magic[0] == '#' && magic[1] == '!') {
    return Error(ErrorKind::kPolicy, "--pin-sha256: " + pinned.path +
                                         " is a #! script, whose interpreter would run unpinned; pin the "
                                         "interpreter and pass the script as an argument");
  }
  CORRAL_ASSIGN_OR_RETURN(std::string digest, Sha256HexOfFd(fd.get()));
  if (digest != *policy.pin_sha256() && !MutantActive(Mutant::kPinSha256)) {
    return Error(ErrorKind::kPinMismatch, "--pin-sha256: " + pinned.path + " does not match the pin: expected " +
                                              *policy.pin_sha256() + ", found " + digest +
                                              "; nothing was run");
  }
  return PinnedProgram{std::move(fd), pinned.path, std::move(digest)};
}

Result<std::string> HashFile(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return Error::FromErrno(ErrorKind::kUsage, "cannot open " + path, "open", errno);
  struct stat st;
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return Error(ErrorKind::kUsage, path + " is not a regular file");
  }
  return Sha256HexOfFd(fd.get());
}

}  // namespace corral
