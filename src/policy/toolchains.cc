#include "policy/toolchains.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <memory>

#include "base/mutant.h"
#include "policy/path.h"
#include "policy/search_path.h"

namespace corral {
namespace {

bool IsDirectory(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// `dir` of the table, on this host: the variable's directory when it names
// one inside the home, else the home-relative default; "" when neither is
// an existing directory.
std::string ResolveDir(const Toolchain::Dir& dir, const HostContext& host) {
  std::string path;
  if (!dir.variable.empty()) {
    auto set = host.toolchain_env.find(std::string(dir.variable));
    if (set != host.toolchain_env.end() && !set->second.empty() && set->second.front() == '/') {
      // GOPATH may list several trees: the first is where `go install` puts programs.
      std::string value = CollapseSlashes(set->second.substr(0, set->second.find(':')));
      std::string canonical = ResolvedOrEmpty(value);
      if (!canonical.empty() && canonical != host.home && IsWithin(canonical, host.home)) path = value;
    }
  }
  if (path.empty() && !dir.path.empty()) path = host.home + std::string(dir.path.substr(1));
  if (path.empty() || !IsDirectory(path)) return "";
  // Where it leads must lie in the home too, and not be the home: a
  // ~/.cargo that links to ~ or to /tmp would grant all of it.
  std::string canonical = ResolvedOrEmpty(path);
  if (canonical.empty() || canonical == host.home || !IsWithin(canonical, host.home)) return "";
  return canonical;
}

// Every existing path `pattern` (components, one may be "*") names below `dir`.
void ExpandSecret(const std::string& dir, std::string_view pattern, std::vector<std::string>& out) {
  size_t slash = pattern.find('/');
  std::string_view head = pattern.substr(0, slash);
  std::string_view rest = slash == std::string_view::npos ? std::string_view() : pattern.substr(slash + 1);
  std::vector<std::string> names;
  if (head == "*") {
    std::unique_ptr<DIR, int (*)(DIR*)> listing(::opendir(dir.c_str()), ::closedir);
    if (!listing) return;
    while (const dirent* entry = ::readdir(listing.get())) {
      std::string_view name = entry->d_name;
      if (name != "." && name != "..") names.emplace_back(name);
    }
    std::sort(names.begin(), names.end());
  } else {
    names.emplace_back(head);
  }
  for (const std::string& name : names) {
    std::string path = dir + "/" + name;
    struct stat st;
    if (rest.empty()) {
      if (::lstat(path.c_str(), &st) == 0) out.push_back(path);
    } else if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {  // a linked version too
      ExpandSecret(path, rest, out);
    }
  }
}

// Each of `toolchain`'s directories resolved ("" where it does not exist),
// in table order, and the distinct ones that exist.
std::vector<std::string> ResolveDirs(const Toolchain& toolchain, const HostContext& host,
                                     std::vector<std::string>* existing) {
  std::vector<std::string> resolved;
  for (const Toolchain::Dir& dir : toolchain.dirs) {
    resolved.push_back(ResolveDir(dir, host));
    const std::string& path = resolved.back();
    if (path.empty() || std::find(existing->begin(), existing->end(), path) != existing->end()) continue;
    existing->push_back(path);
  }
  return resolved;
}

}  // namespace

const std::vector<Toolchain>& Toolchains() {
  static const std::vector<Toolchain> toolchains = {
      {"rustup", {{"~/.cargo", "CARGO_HOME"}, {"~/.rustup", "RUSTUP_HOME"}}, {{0, "credentials"}, {0, "credentials.toml"}}},
      {"pyenv",
       {{"~/.pyenv", "PYENV_ROOT"}},
       {{0, "versions/*/pip.conf"}, {0, "versions/*/etc/pip.conf"}, {0, "versions/*/envs/*/pip.conf"}}},
      {"nvm", {{"~/.nvm", "NVM_DIR"}}, {{0, "versions/node/*/etc/npmrc"}}},
      {"volta", {{"~/.volta", "VOLTA_HOME"}}, {{0, "tools/image/node/*/etc/npmrc"}}},
      {"fnm",
       {{"~/.local/share/fnm", "FNM_DIR"}, {"~/.fnm", ""}, {"~/.local/state/fnm_multishells", ""}},
       {{0, "node-versions/*/installation/etc/npmrc"}, {1, "node-versions/*/installation/etc/npmrc"}}},
      {"go", {{"~/go", "GOPATH"}, {"~/sdk", ""}, {"", "GOROOT"}}, {}},
      {"sdkman", {{"~/.sdkman", "SDKMAN_DIR"}}, {}},
      {"asdf",
       {{"~/.asdf", "ASDF_DATA_DIR"}},
       {{0, "installs/nodejs/*/etc/npmrc"}, {0, "installs/python/*/pip.conf"}, {0, "installs/python/*/etc/pip.conf"}}},
      {"mise",
       {{"~/.local/share/mise", "MISE_DATA_DIR"}},
       {{0, "installs/node/*/etc/npmrc"}, {0, "installs/python/*/pip.conf"}, {0, "installs/python/*/etc/pip.conf"}}},
      {"deno", {{"~/.deno", "DENO_INSTALL"}}, {}},
      {"bun", {{"~/.bun", "BUN_INSTALL"}}, {}},
      {"local-bin", {{"~/.local/bin", ""}}, {}},
  };
  return toolchains;
}

std::string ToolchainNames() {
  std::string names;
  for (const Toolchain& toolchain : Toolchains()) names += (names.empty() ? "" : ", ") + std::string(toolchain.name);
  return names + ", or auto";
}

const Toolchain* FindToolchain(std::string_view name) {
  for (const Toolchain& toolchain : Toolchains()) {
    if (toolchain.name == name) return &toolchain;
  }
  return nullptr;
}

std::vector<std::string_view> ToolchainVariables() {
  std::vector<std::string_view> variables;
  for (const Toolchain& toolchain : Toolchains()) {
    for (const Toolchain::Dir& dir : toolchain.dirs) {
      if (!dir.variable.empty()) variables.push_back(dir.variable);
    }
  }
  return variables;
}

std::vector<std::string> ToolchainDirs(const Toolchain& toolchain, const HostContext& host) {
  std::vector<std::string> dirs;
  ResolveDirs(toolchain, host, &dirs);
  return dirs;
}

ToolchainLayout LayOut(const Toolchain& toolchain, const HostContext& host) {
  ToolchainLayout layout;
  const std::vector<std::string> resolved = ResolveDirs(toolchain, host, &layout.dirs);
  if (MutantActive(Mutant::kToolchainSecrets)) return layout;  // the toolchain_secrets mutant: none hidden
  for (const Toolchain::Secret& secret : toolchain.secrets) {
    if (secret.dir < resolved.size() && !resolved[secret.dir].empty()) {
      ExpandSecret(resolved[secret.dir], secret.path, layout.secrets);
    }
  }
  return layout;
}

const Toolchain* ToolchainHolding(const std::string& path, const HostContext& host) {
  for (const Toolchain& toolchain : Toolchains()) {
    for (const Toolchain::Dir& dir : toolchain.dirs) {
      std::string resolved = ResolveDir(dir, host);
      if (!resolved.empty() && IsWithin(path, resolved)) return &toolchain;
    }
  }
  return nullptr;
}

std::vector<const Toolchain*> DetectToolchains(const HostContext& host) {
  std::vector<const Toolchain*> found;
  for (const std::string& entry : SplitSearchPath(host.path_env)) {
    if (entry.empty() || entry.front() != '/') continue;
    std::string canonical = ResolvedOrEmpty(entry);
    const Toolchain* holding = canonical.empty() ? nullptr : ToolchainHolding(canonical, host);
    if (holding != nullptr && std::find(found.begin(), found.end(), holding) == found.end()) found.push_back(holding);
  }
  std::sort(found.begin(), found.end());  // table order: the table is one vector
  return found;
}

Result<std::vector<const Toolchain*>> ResolveToolchains(const std::vector<std::string>& given,
                                                        const HostContext& host) {
  std::vector<const Toolchain*> chosen;
  for (const std::string& name : given) {
    std::vector<const Toolchain*> named;
    if (name == "auto") {
      named = DetectToolchains(host);
    } else if (const Toolchain* toolchain = FindToolchain(name); toolchain != nullptr) {
      named.push_back(toolchain);
    } else {
      return Error(ErrorKind::kUsage, "--allow-toolchain " + name + ": not a toolchain corral knows; the names are " +
                                          ToolchainNames());
    }
    for (const Toolchain* toolchain : named) {
      if (std::find(chosen.begin(), chosen.end(), toolchain) == chosen.end()) chosen.push_back(toolchain);
    }
  }
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

}  // namespace corral
