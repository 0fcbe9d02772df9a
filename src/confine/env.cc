#include "confine/env.h"

#include <algorithm>
#include <string_view>

#include "base/mutant.h"
#include "kernel/loopback.h"

namespace corral {

const std::vector<std::string>& ProxyEnvironment() {
  static const std::vector<std::string> kProxy = [] {
    const std::string http = "http://127.0.0.1:" + std::to_string(kSandboxHttpProxyPort);
    const std::string socks = "socks5h://127.0.0.1:" + std::to_string(kSandboxSocksPort);
    std::vector<std::string> out;
    for (const char* name : {"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "npm_config_proxy",
                             "npm_config_https_proxy", "YARN_HTTP_PROXY", "YARN_HTTPS_PROXY", "PIP_PROXY",
                             "CARGO_HTTP_PROXY"}) {
      out.push_back(std::string(name) + "=" + http);
    }
    out.push_back("ALL_PROXY=" + socks);
    out.push_back("all_proxy=" + socks);
    return out;
  }();
  return kProxy;
}

namespace {

// A variable that says how to reach the network: under the proxy, only
// corral's values are kept (NO_PROXY would send a client around it, to a
// connection that cannot leave).
bool IsProxyVariable(std::string_view name) {
  static constexpr std::string_view kNames[] = {
      "HTTP_PROXY",  "HTTPS_PROXY", "ALL_PROXY",        "NO_PROXY",         "http_proxy",
      "https_proxy", "all_proxy",   "no_proxy",         "npm_config_proxy", "npm_config_https_proxy",
      "npm_config_noproxy", "YARN_HTTP_PROXY", "YARN_HTTPS_PROXY", "PIP_PROXY", "CARGO_HTTP_PROXY"};
  return std::find(std::begin(kNames), std::end(kNames), name) != std::end(kNames);
}

}  // namespace

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
    if (policy.egress().active() && IsProxyVariable(name)) continue;
    if (std::any_of(out.begin(), out.end(), [&](const std::string& e) { return e.compare(0, eq + 1, text.substr(0, eq + 1)) == 0; })) {
      continue;  // the first definition wins, as getenv(3) sees it
    }
    has_path |= name == "PATH";
    out.emplace_back(text);
  }
  out.push_back("HOME=" + policy.home());
  if (policy.egress().active()) out.insert(out.end(), ProxyEnvironment().begin(), ProxyEnvironment().end());
  if (!has_path) out.push_back(std::string("PATH=") + kDefaultPath);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace corral
