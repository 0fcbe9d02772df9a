// `corral quarantine list | show RUN PATH | restore RUN PATH [--overwrite]`:
// what the sweep moved out of a tree (repair/quarantine.h), looked at and
// brought back on purpose. Nothing is changed but by `restore`.
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "base/exit_codes.h"
#include "base/terminal.h"
#include "cli/commands.h"
#include "repair/quarantine.h"
#include "state/state_dir.h"

namespace corral::cli {
namespace {

int Fail(const Error& error) {
  PrintError(error.ToString());
  return ExitCodeFor(error.kind());
}

// What a person reads on a terminal shows control bytes, never obeys them.
std::string Shown(const std::string& text) { return ::isatty(STDOUT_FILENO) ? EscapeControls(text) : text; }

// A quarantined directory's entries, one a line, walked without following links.
void ListTree(int dir, const std::string& prefix, int depth) {
  if (depth > 64) return;
  int fd = ::openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  DIR* stream = ::fdopendir(fd);
  if (stream == nullptr) {
    ::close(fd);
    return;
  }
  std::vector<std::string> names;
  while (const struct dirent* entry = ::readdir(stream)) {
    std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    struct stat st;
    if (::fstatat(::dirfd(stream), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    std::printf("%s%s\n", Shown(prefix + name).c_str(), S_ISDIR(st.st_mode) ? "/" : "");
    if (!S_ISDIR(st.st_mode)) continue;
    UniqueFd child(::openat(::dirfd(stream), name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (child) ListTree(child.get(), prefix + name + "/", depth + 1);
  }
  ::closedir(stream);
}

int Show(const QuarantinedItem& item) {
  if (S_ISLNK(item.st.st_mode)) {
    char target[4096];
    ssize_t n = ::readlinkat(item.parent.get(), item.name.c_str(), target, sizeof target - 1);
    if (n < 0) return Fail(Error::FromErrno(ErrorKind::kIo, "quarantine: cannot read the symlink", "readlinkat", errno));
    std::printf("symlink -> %s\n", Shown(std::string(target, static_cast<size_t>(n))).c_str());
    return 0;
  }
  int flags = (S_ISDIR(item.st.st_mode) ? O_PATH | O_DIRECTORY : O_RDONLY | O_NONBLOCK) | O_NOFOLLOW | O_CLOEXEC;
  if (!S_ISDIR(item.st.st_mode) && !S_ISREG(item.st.st_mode)) {
    std::printf("(neither a file, a directory nor a symlink: not shown)\n");
    return 0;
  }
  UniqueFd fd(::openat(item.parent.get(), item.name.c_str(), flags));
  if (!fd) return Fail(Error::FromErrno(ErrorKind::kIo, "quarantine: cannot open it", "openat", errno));
  if (S_ISDIR(item.st.st_mode)) {
    ListTree(fd.get(), "", 0);
    return 0;
  }
  std::string text;
  char buffer[65536];
  for (ssize_t n; (n = ::read(fd.get(), buffer, sizeof buffer)) > 0;) text.append(buffer, static_cast<size_t>(n));
  std::fputs(Shown(text).c_str(), stdout);
  return 0;
}

}  // namespace

void QuarantineCommand::Register(CLI::App& app) {
  app.add_option("action", action,
                 "list: what the sweep quarantined; show RUN PATH: print it; restore RUN PATH: put it back")
      ->required()
      ->check(CLI::IsMember({"list", "show", "restore"}));
  app.add_option("args", args, "show and restore: RUN PATH (as list prints them)");
  app.add_flag("--overwrite", overwrite, "restore: replace what is at PATH now (refused without it)");
  app.add_flag("--json", json, "list: print JSON");
}

int QuarantineCommand::Execute() const {
  Result<HostContext> host = CaptureHostContext();
  if (!host.ok()) return Fail(host.error());
  size_t want = action == "list" ? 0 : 2;
  if (args.size() != want) {
    return Fail(Error(ErrorKind::kUsage, action == "list" ? "usage: corral quarantine list [--json]"
                                                          : "usage: corral quarantine " + action + " RUN PATH"));
  }
  if (overwrite && action != "restore") return Fail(Error(ErrorKind::kUsage, "--overwrite is for restore"));
  if (action != "list") {
    if (Status checked = CheckQuarantineArguments(args[0], args[1]); !checked.ok()) return Fail(checked.error());
  }
  Result<StateDir> state = StateDir::Open(host->home, StateDir::Create::kNo);
  if (!state.ok() && state.error().code() == kStateDirUnsafe) return Fail(state.error());
  if (action == "list") {
    std::vector<QuarantinedEntry> entries;
    if (state.ok()) {
      Result<std::vector<QuarantinedEntry>> listed = ListQuarantine(*state);
      if (!listed.ok()) return Fail(listed.error());
      entries = std::move(listed).value();
    }
    if (json) {
      nlohmann::json out = nlohmann::json::array();
      for (const QuarantinedEntry& e : entries) out.push_back({{"run", e.run}, {"path", e.path}, {"kind", e.kind}});
      std::printf("%s\n", out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
      return 0;
    }
    for (const QuarantinedEntry& e : entries) {
      std::printf("%s  %s  (%s)\n", e.run.c_str(), Shown(e.path).c_str(), e.kind.c_str());
    }
    return 0;
  }
  if (!state.ok()) return Fail(Error(ErrorKind::kUsage, "quarantine: nothing is quarantined (" + state.error().message() + ")"));
  if (action == "show") {
    Result<QuarantinedItem> item = OpenQuarantined(*state, args[0], args[1]);
    if (!item.ok()) return Fail(item.error());
    return Show(*item);
  }
  Status restored =
      RestoreQuarantined(*state, args[0], args[1], overwrite ? Overwrite::kReplace : Overwrite::kRefuse);
  if (!restored.ok()) return Fail(restored.error());
  PrintError("restored " + args[1] + " from run " + args[0] + "'s quarantine");
  return 0;
}

}  // namespace corral::cli
