// The home view's two lists: the credential stores every grant hides, and the
// allowlist --home real shows, which must never show a credential.
#include "policy/home_view.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "policy/forbid.h"
#include "policy/path.h"

namespace corral {
namespace {

const std::string kHome = "/home/ana";

std::vector<std::string> Hidden() {
  std::vector<std::string> hidden;
  for (const std::string& pattern : HomeCredentialPatterns()) {
    Result<std::string> normalized = NormalizeForbidPattern(pattern, kHome);
    EXPECT_TRUE(normalized.ok()) << pattern;
    EXPECT_EQ(pattern.find_first_of("*?["), std::string::npos) << pattern << ": a glob walks the home every run";
    if (normalized.ok()) hidden.push_back(*normalized);
  }
  return hidden;
}

bool Covered(const std::vector<std::string>& hidden, const std::string& path) {
  return std::any_of(hidden.begin(), hidden.end(), [&](const std::string& h) { return IsWithin(path, h); });
}

// Each store (a file inside it, where the store is a directory) is covered by
// a pattern, which hides it or a directory holding it.
TEST(HomeCredentials, CoverEveryKnownCredentialStore) {
  const std::vector<std::string> hidden = Hidden();
  const char* const stores[] = {
      ".ssh/id_ed25519", ".gnupg/private-keys-v1.d/k.key", ".password-store/email.gpg",
      ".local/share/keyrings/login.keyring", ".config/op/config", ".aws/credentials", ".azure/msal_token_cache.json",
      ".config/gcloud/credentials.db", ".kube/config", ".vault-token", ".terraform.d/credentials.tfrc.json",
      ".config/rclone/rclone.conf", ".docker/config.json", ".config/containers/auth.json", ".netrc",
      ".git-credentials", ".config/git/credentials", ".config/gh/hosts.yml", ".config/hub", ".pypirc", ".npmrc",
      ".cargo/credentials", ".cargo/credentials.toml", ".gem/credentials", ".m2/settings.xml",
      ".m2/settings-security.xml", ".gradle/gradle.properties", ".pgpass",
      ".mozilla/firefox/abc.default-release/logins.json", ".mozilla/firefox/abc.default-release/key4.db",
      ".config/google-chrome/Default/Login Data", ".config/chromium/Default/Cookies", ".claude.json",
      ".bash_history", ".kaggle/kaggle.json", ".env", ".envrc", ".cache/huggingface/token",
      ".config/pypoetry/auth.toml", ".databrickscfg", ".docker/machine/machines/m/key.pem",
      ".cloudflared/cert.pem", ".pulumi/credentials.json", ".subversion/auth/svn.simple/abc", ".msmtprc",
      ".config/configstore/update-notifier-npm.json", ".android/adbkey", ".mc/config.json",
      ".cache/huggingface/stored_tokens",
  };
  for (const char* store : stores) {
    EXPECT_TRUE(Covered(hidden, kHome + "/" + store)) << "~/" << store << " stays readable";
  }
  // Not credentials: the rest of those trees stays visible.
  for (const char* visible : {".m2/repository/x.jar", ".gradle/caches/x", ".cargo/registry/x", ".docker/buildx/x",
                              ".gem/specs/x", ".cache/huggingface/hub/x"}) {
    EXPECT_FALSE(Covered(hidden, kHome + "/" + visible)) << "~/" << visible << " is hidden but holds no credential";
  }
}

// No allowlist entry is, holds or lies inside a credential store: what
// --home real shows never needs a mask.
TEST(HomeAllowlist, ShowsNoCredentialStore) {
  const std::vector<std::string> hidden = Hidden();
  for (const HomeEntry& entry : HomeAllowlist()) {
    Result<std::string> path = NormalizeForbidPattern(entry.path, kHome);
    ASSERT_TRUE(path.ok()) << entry.path;
    ASSERT_TRUE(IsWithin(*path, kHome) && *path != kHome) << entry.path << ": not strictly inside the home";
    for (const std::string& h : hidden) {
      EXPECT_FALSE(IsWithin(*path, h) || IsWithin(h, *path)) << entry.path << " overlaps the credential store " << h;
    }
    EXPECT_FALSE(Has(entry.access, Access::kWrite)) << entry.path << ": the real home is never writable";
  }
}

}  // namespace
}  // namespace corral
