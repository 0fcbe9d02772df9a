#include "confine/detect.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include "base/mutant.h"
#include "confine/bubblewrap_provider.h"
#include "confine/native_provider.h"
#include "confine/seatbelt_provider.h"
#include "confine/unavailable_provider.h"

namespace corral {
namespace {

bool IsExecutableFile(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

std::unique_ptr<Provider> MakeNative(const DetectOptions& options) {
  return std::make_unique<NativeProvider>(NativeOptions{options.corral_path, options.policy_dir, nullptr, options.audit});
}

std::unique_ptr<Provider> MakeBubblewrap(const std::string& bwrap) {
  BubblewrapOptions options;
  options.bwrap_path = bwrap;
  return std::make_unique<BubblewrapProvider>(std::move(options));
}

Error UnknownBackend(const std::string& name) {
  return Error(ErrorKind::kUsage,
               "unknown sandbox backend \"" + name + "\" (expected auto, native, bubblewrap, seatbelt or unavailable)")
      .WithCode("unknown_backend");
}

Detection Chosen(std::unique_ptr<Provider> provider, std::string reason, std::vector<std::string> tried) {
  Detection found;
  found.backend = std::string(provider->name());
  found.provider = std::move(provider);
  found.reason = std::move(reason);
  found.tried = std::move(tried);
  return found;
}

}  // namespace

std::string FindOnPath(const std::string& name) {
  if (name.empty()) return {};
  if (name.find('/') != std::string::npos) return IsExecutableFile(name) ? name : std::string();
  const char* path = ::getenv("PATH");
  std::string_view rest = path != nullptr && path[0] != '\0' ? path : "/usr/local/bin:/usr/bin:/bin";
  while (true) {
    size_t colon = rest.find(':');
    std::string dir(rest.substr(0, colon));
    if (!dir.empty() && dir.front() == '/') {  // a relative PATH entry would depend on the working directory
      std::string candidate = dir + "/" + name;
      if (IsExecutableFile(candidate)) return candidate;
    }
    if (colon == std::string_view::npos) return {};
    rest.remove_prefix(colon + 1);
  }
}

ProbeVerdict Detector::Cached(const std::string& key, const std::function<ProbeVerdict()>& probe) {
  // Held across the probe: a concurrent caller waits for this verdict
  // instead of probing a second time.
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = cache_.find(key);
  if (it != cache_.end()) return it->second;
  ++probes_run_;
  return cache_.emplace(key, probe()).first->second;
}

int Detector::probes_run() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return probes_run_;
}

Result<Detection> Detector::Detect(const DetectOptions& options) {
  const std::string forced = options.forced.value_or("auto");
  const std::string bwrap_name = options.bwrap_path.value_or("bwrap");
  if (forced != "auto") {
    std::string reason = "forced (" + forced + "); nothing was probed";
    if (forced == "native") return Chosen(MakeNative(options), reason, {});
    if (forced == "bubblewrap") {
      std::string found = FindOnPath(bwrap_name);
      return Chosen(MakeBubblewrap(found.empty() ? bwrap_name : found), reason, {});
    }
    if (forced == "seatbelt") return Chosen(std::make_unique<SeatbeltProvider>(), reason, {});
    if (forced == "unavailable") return Chosen(std::make_unique<UnavailableProvider>("forced"), reason, {});
    return UnknownBackend(forced);
  }

  std::vector<std::string> tried;
#if defined(__APPLE__)
  ProbeVerdict seatbelt = Cached("seatbelt", [this] { return probes_->Seatbelt(); });
  tried.push_back("seatbelt: " + seatbelt.detail);
  if (seatbelt.usable) {
    return Chosen(std::make_unique<SeatbeltProvider>(), "seatbelt: " + seatbelt.detail, std::move(tried));
  }
#else
  if (options.corral_path.empty()) {
    tried.push_back("native: skipped (no path to the corral binary was given)");
  } else {
    ProbeVerdict native = Cached("native", [this] { return probes_->Native(); });
    tried.push_back("native: " + native.detail);
    if (native.usable) return Chosen(MakeNative(options), "native: " + native.detail, std::move(tried));
  }
  std::string bwrap = FindOnPath(bwrap_name);
  if (bwrap.empty()) {
    tried.push_back("bubblewrap: " + bwrap_name + " is not installed (not found on PATH)");
  } else {
    ProbeVerdict verdict = Cached("bubblewrap:" + bwrap, [this, &bwrap] { return probes_->Bubblewrap(bwrap); });
    tried.push_back("bubblewrap: " + verdict.detail);
    if (verdict.usable) return Chosen(MakeBubblewrap(bwrap), "bubblewrap: " + verdict.detail, std::move(tried));
  }
#endif
  std::string why;
  for (const std::string& line : tried) why += (why.empty() ? "" : "; ") + line;
  return Chosen(std::make_unique<UnavailableProvider>(why), "no candidate backend is usable: " + why,
                std::move(tried));
}

Error WithDetectionContext(const Error& error, const Detection& detection) {
  if (error.code() != kPartialEnforcementCode || detection.tried.empty()) return error;
  std::string tried;
  for (const std::string& line : detection.tried) tried += (tried.empty() ? "" : "; ") + line;
  return Error(error.kind(), error.message() + " [detection chose " + detection.backend + "; tried: " + tried + "]")
      .WithCode(error.code());
}

Status CheckRunnerBackend(const std::string& backend) {
  if (backend == "auto" || backend == "native" || MutantActive(Mutant::kRunnerBackend)) return Ok();
  if (backend == "unavailable") return SandboxUnavailable("forced by sandbox.backend = \"unavailable\"");
  if (backend == "bubblewrap" || backend == "seatbelt") {
    return Error(ErrorKind::kUnsupported,
                 "sandbox.backend is \"" + backend + "\", but `corral run` is corral's native runner and cannot run "
                 "under " + backend + "; use `corral wrap --backend " + backend + "` to get the " + backend +
                 " argv, or set backend = \"native\" or \"auto\". Nothing was run")
        .WithCode("backend_not_runnable");
  }
  return UnknownBackend(backend);
}

}  // namespace corral
