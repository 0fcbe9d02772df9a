#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <string>

#include "base/exit_codes.h"
#include "base/replace_file.h"
#include "base/terminal.h"
#include "base/unique_fd.h"
#include "cli/commands.h"
#include "cli/policy_flags.h"
#include "confine/apparmor_profile.h"

namespace corral::cli {
namespace {

// The binary that runs, symlinks resolved: what AppArmor attaches to.
Result<std::string> OwnBinary() {
  char path[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) return Error::FromErrno(ErrorKind::kIo, "apparmor: cannot find corral's own binary", "readlink", errno);
  return std::string(path, static_cast<size_t>(n));
}

// Writes `text` as `directory`/corral (base/replace_file.h), synced.
Result<std::string> Install(const std::string& directory, const std::string& text) {
  UniqueFd dir(::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!dir) return Error::FromErrno(ErrorKind::kIo, "apparmor: cannot open " + directory, "open", errno);
  std::string name(kAppArmorProfileName);
  CORRAL_TRY(ReplaceFileAt(dir.get(), name, text, 0644, Durability::kSynced,
                           "apparmor: cannot write " + directory + "/" + name));
  return directory + "/" + name;
}

}  // namespace

void SetupCommand::Register(CLI::App& app) {
  app.add_option("what", what, "apparmor: the AppArmor profile that lets corral create user namespaces")
      ->required()
      ->check(CLI::IsMember({"apparmor"}));
  app.add_flag("--install", install, "write the profile (as root), instead of printing it");
  app.add_option("--directory", directory, "where --install writes it (default /etc/apparmor.d)")
      ->type_name("DIR");
}

int SetupCommand::Execute() const {
  Result<std::string> binary = OwnBinary();
  Result<std::string> profile = binary.ok() ? AppArmorProfile(*binary) : Result<std::string>(binary.error());
  if (!profile.ok()) {
    PrintError(profile.error().ToString());
    return ExitCodeFor(profile.error().kind());
  }
  if (!install) {
    std::fputs(profile->c_str(), stdout);
    std::fprintf(stderr,
                 "corral: this is the profile for %s; `sudo corral setup apparmor --install` writes it to %s/%s, "
                 "then `%s` loads it\n",
                 EscapeControls(*binary).c_str(), std::string(kAppArmorDirectory).c_str(),
                 std::string(kAppArmorProfileName).c_str(),
                 AppArmorLoadCommand(std::string(kAppArmorDirectory) + "/" + std::string(kAppArmorProfileName)).c_str());
    return 0;
  }
  std::string target = directory.empty() ? std::string(kAppArmorDirectory) : directory;
  if (directory.empty() && ::geteuid() != 0) {
    PrintError("apparmor: --install writes " + target + "/" + std::string(kAppArmorProfileName) +
               ", which needs root: run `sudo corral setup apparmor --install`");
    return ExitCodeFor(ErrorKind::kUsage);
  }
  Result<std::string> written = Install(target, *profile);
  if (!written.ok()) {
    PrintError(written.error().ToString());
    return ExitCodeFor(written.error().kind());
  }
  std::printf("corral: wrote %s for %s; load it now with:\n  %s\n", EscapeControls(*written).c_str(),
              EscapeControls(*binary).c_str(), AppArmorLoadCommand(*written).c_str());
  return 0;
}

}  // namespace corral::cli
