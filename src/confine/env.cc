#include "confine/env.h"

#include <algorithm>
#include <string_view>

#include "base/mutant.h"

namespace corral {

std::vector<std::string> ScrubEnvironment(const Policy& policy, const char* const* environ) {
  auto allowed = [&](std::string_view name) {
    const auto& defaults = DefaultEnvAllowlist();
    return std::find(defaults.begin(), defaults.end(), name) != defaults.end() ||
           std::find(policy.env_allow().begin(), policy.env_allow().end(), name) != policy.env_allow().end();
  };
  std::vector<std::string> out;
  bool has_path = false;
  for (const char* const* entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    std::string_view text(*entry);
    size_t eq = text.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view name = text.substr(0, eq);
    if (name == "HOME" || (!allowed(name) && !MutantActive(Mutant::kEnvScrub))) continue;
    if (std::any_of(out.begin(), out.end(), [&](const std::string& e) { return e.compare(0, eq + 1, text.substr(0, eq + 1)) == 0; })) {
      continue;  // the first definition wins, as getenv(3) sees it
    }
    has_path |= name == "PATH";
    out.emplace_back(text);
  }
  out.push_back("HOME=" + policy.home());
  if (!has_path) out.push_back(std::string("PATH=") + kDefaultPath);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace corral
