// SeatbeltProvider: SBPL profile text for macOS sandbox-exec(1).
//
//   sandbox-exec -p PROFILE -- /usr/bin/env -i NAME=value... argv...
//
// The profile starts from (deny default) and allows, in this order:
// fork, signals and process info within the sandbox; reads and exec of the
// fixed macOS system trees; reads of system configuration; traversal of the
// top-level directories; the usual devices; then each of the policy's
// grants (file-read*, plus process-exec for exec grants and file-write* for
// writable grants, `subpath` for directories, `literal` for files); reads
// and writes in the private tmp; the network only when the policy allows
// all. Then, after the allows (in SBPL the last matching rule wins):
// masks as (deny file-read* file-write* ...), and protected paths as
// (deny file-write* ...), which also covers protected paths that do not
// exist yet, since seatbelt rules are paths, not mounts.
//
// The policy's own system trees and symlinks describe the host that built it
// (Linux), so they are replaced by the macOS list; every other grant is
// emitted as is. The environment is scrubbed at wrap time and applied with
// `env -i`, with TMPDIR pointing at the private tmp. Coverage is always
// kPartial (no process boundary, syscall filter, privilege drop or resource
// limits), so Confine refuses a policy that requires enforcement
// (CheckEnforceable): only a best-effort policy is wrapped. On Linux this is
// text only, checked against golden files.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "confine/provider.h"

namespace corral {

struct SeatbeltOptions {
  std::string sandbox_exec_path = "/usr/bin/sandbox-exec";
  // A directory the command may write, exported as TMPDIR. Empty:
  // /private/tmp/corral-<uid>-<first 16 hex digits of the fingerprint>,
  // created (0700) by Confine on macOS only.
  std::string private_tmp;
  // "NAME=value" entries the scrub starts from; nullopt: this process's environment.
  std::optional<std::vector<std::string>> environment;
};

class SeatbeltProvider final : public Provider {
 public:
  explicit SeatbeltProvider(SeatbeltOptions options = {}) : options_(std::move(options)) {}
  Result<ConfinedArgv> Confine(const std::vector<std::string>& argv, const Policy& policy) override;
  std::string_view name() const override { return "seatbelt"; }

 private:
  SeatbeltOptions options_;
};

// The SBPL profile for `policy`, with writes allowed in `private_tmp`.
// Refuses paths SBPL cannot quote (control characters).
Result<std::string> SeatbeltProfile(const Policy& policy, const std::string& private_tmp);

}  // namespace corral
