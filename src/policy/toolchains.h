// Toolchains in the home: the named, read-only way to run rustup's cargo,
// pyenv's python, nvm's node, ... inside the sandbox.
//
// `--allow-toolchain NAME` (and sandbox.allow_toolchain) grants the named
// toolchain's directories read and exec, exactly as --allow-exec would, with
// every check a grant gets. `auto` stands for the toolchains that hold an
// entry of the caller's PATH (or, for rustup, whose bin directory does).
//
//   rustup     ~/.cargo ($CARGO_HOME), ~/.rustup ($RUSTUP_HOME)
//   pyenv      ~/.pyenv ($PYENV_ROOT)
//   nvm        ~/.nvm ($NVM_DIR)
//   volta      ~/.volta ($VOLTA_HOME)
//   fnm        ~/.local/share/fnm, ~/.fnm ($FNM_DIR), ~/.local/state/fnm_multishells
//   go         ~/go ($GOPATH), ~/sdk (go's own SDK downloads), $GOROOT
//   sdkman     ~/.sdkman ($SDKMAN_DIR)
//   asdf       ~/.asdf ($ASDF_DATA_DIR)
//   mise       ~/.local/share/mise ($MISE_DATA_DIR)
//   deno, bun  ~/.deno ($DENO_INSTALL), ~/.bun ($BUN_INSTALL)
//   local-bin  ~/.local/bin
//
// A directory (named by the table or a variable) counts only when it leads
// inside the home and is not the home itself (a ~/.cargo linked to ~ or /tmp
// grants nothing); a variable is honoured only when it names one: a
// toolchain elsewhere (/opt, /usr/local) is the system's or a plain
// --allow-exec. Only directories that exist are granted; a name none of
// whose directories exists is a usage error, so a typo cannot pass quietly.
//
// Credentials: the toolchains' own secret files (cargo's credentials.toml,
// the npmrc each installed Node keeps in etc/) are credential stores, hidden
// inside the grant like every store of HomeCredentialPatterns (home_view.h),
// which already covers ~/.npmrc, ~/.netrc, ~/.cargo/credentials.toml, ...
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "policy/roots.h"

namespace corral {

struct Toolchain {
  std::string_view name;
  // Home-relative directories ("~/.cargo"); where `variable` is set to a
  // directory in the home, it replaces `path` ("" : no variable).
  struct Dir {
    std::string_view path;
    std::string_view variable;
  };
  std::vector<Dir> dirs;
  // Secret files, relative to dirs[dir]; a "*" component stands for each
  // entry there, dot names and links to directories included
  // ("versions/node/*/etc/npmrc").
  struct Secret {
    size_t dir = 0;
    std::string_view path;
  };
  std::vector<Secret> secrets;
};

// Every toolchain, in the order --help lists them.
const std::vector<Toolchain>& Toolchains();
// "rustup, pyenv, ...": for the error that names an unknown one.
std::string ToolchainNames();
const Toolchain* FindToolchain(std::string_view name);

// The variables Toolchains() reads (CaptureHostContext records them).
std::vector<std::string_view> ToolchainVariables();

// Where `toolchain` lies on this host: its directories that exist, and the
// secret files in them that exist, all canonical.
struct ToolchainLayout {
  std::vector<std::string> dirs;
  std::vector<std::string> secrets;
};
ToolchainLayout LayOut(const Toolchain& toolchain, const HostContext& host);
// Its directories alone, as LayOut gives them, without looking for secrets
// (which lists every installed version).
std::vector<std::string> ToolchainDirs(const Toolchain& toolchain, const HostContext& host);

// The toolchain one of whose directories holds `path` (canonical), if any.
const Toolchain* ToolchainHolding(const std::string& path, const HostContext& host);

// What `auto` stands for: the toolchains holding an entry of host.path_env.
std::vector<const Toolchain*> DetectToolchains(const HostContext& host);

// The names in `given` (NAME or "auto"), each once, in table order; an
// unknown name is a usage error listing the known ones.
Result<std::vector<const Toolchain*>> ResolveToolchains(const std::vector<std::string>& given,
                                                        const HostContext& host);

}  // namespace corral
