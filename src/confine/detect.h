// Backend detection: which Provider confines commands on this host.
//
// On Linux the candidates are tried in this order, and the first usable one
// wins:
//   native      corral's own sandbox. Probe: compile the default policy
//               without a workspace for this host (it must reach
//               Level::kFull) and Spawn it with probe_only, exactly what
//               `corral check` does;
//   bubblewrap  bwrap found on PATH (or at the given path), run ONCE with
//               the argv the bubblewrap backend builds for that same policy
//               (best-effort, since bwrap is always partial) around `true`.
//               It binds the system trees, never "/". An installed bwrap
//               that fails counts as unavailable. A working bwrap wins, but
//               its Confine still refuses a policy that requires full
//               enforcement (no --best-effort): detection falls back to bwrap
//               exactly when native cannot reach the full level;
//   unavailable always "usable": its Confine fails with SANDBOX_UNAVAILABLE.
// On macOS: seatbelt (probe: sandbox-exec runs `true`), then unavailable.
//
// Each probe runs at most once per process (per bwrap path): the Detector
// caches every verdict under a mutex, so concurrent callers wait for the
// first probe and later calls never probe again. A forced backend
// (`--backend`, or config) skips detection entirely; a forced native backend
// on a host that cannot confine still fails, at Confine time.
//
//   CORRAL_ASSIGN_OR_RETURN(Detection found, DetectProvider({.corral_path = self}));
//   found.provider->Confine(argv, policy);   // found.reason says why it won
//
// The real probes spawn a sandbox, so they, ProcessDetector and DetectProvider
// live above this layer, in exec/backend_probes.h; a Detector here takes any
// BackendProbes.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "confine/provider.h"

namespace corral {

struct DetectOptions {
  // "auto" (or nullopt) detects; "native", "bubblewrap", "seatbelt" or
  // "unavailable" forces that backend without probing.
  std::optional<std::string> forced;
  std::string corral_path;                // absolute; the native backend's runner. Empty: native is skipped
  std::optional<std::string> bwrap_path;  // default: "bwrap" on PATH
  std::string policy_dir;                 // where the native backend writes compiled policies
  std::optional<std::string> audit;       // the native runner's --audit
};

struct Detection {
  std::unique_ptr<Provider> provider;
  std::string backend;             // provider->name()
  std::string reason;              // why it won, in one sentence
  std::vector<std::string> tried;  // "<backend>: <verdict>" for each candidate considered
};

struct ProbeVerdict {
  bool usable = false;
  std::string detail;
};

// The probes, behind a seam so tests can count and fake them.
class BackendProbes {
 public:
  virtual ~BackendProbes() = default;
  virtual ProbeVerdict Native() = 0;
  // `bwrap` is an absolute path to an executable.
  virtual ProbeVerdict Bubblewrap(const std::string& bwrap) = 0;
  virtual ProbeVerdict Seatbelt() = 0;
};

class Detector {
 public:
  explicit Detector(std::unique_ptr<BackendProbes> probes) : probes_(std::move(probes)) {}
  Result<Detection> Detect(const DetectOptions& options);
  // How many probes actually ran (cache misses).
  int probes_run() const;

 private:
  ProbeVerdict Cached(const std::string& key, const std::function<ProbeVerdict()>& probe);

  std::unique_ptr<BackendProbes> probes_;
  mutable std::mutex mutex_;
  std::map<std::string, ProbeVerdict> cache_;
  int probes_run_ = 0;
};

// `error`, from the detected provider's Confine, with the detection added
// when it is a partial-enforcement refusal of a backend detection chose
// (bwrap, because native could not reach the full level here): "...
// [detection chose bubblewrap; tried: native: ...; bubblewrap: ...]".
// Any other error, or a forced backend (nothing tried), is returned as is.
Error WithDetectionContext(const Error& error, const Detection& detection);

// Whether corral's own runner (`corral run`) may run under `backend`, the
// configured sandbox.backend: "auto" and "native" may. "unavailable" fails
// like UnavailableProvider (SANDBOX_UNAVAILABLE). "bubblewrap" and
// "seatbelt" are argv builders, used through `corral wrap --backend B`: the
// runner refuses them (kUnsupported, code "backend_not_runnable") rather
// than quietly run natively. Any other name is a usage error
// (code "unknown_backend").
Status CheckRunnerBackend(const std::string& backend);

// The executable `name` on $PATH (or `name` itself when it has a '/'), or
// empty when there is none.
std::string FindOnPath(const std::string& name);

}  // namespace corral
