#include "policy/home_view.h"

namespace corral {

const std::vector<HomeEntry>& HomeAllowlist() {
  constexpr Access kToolchain = Access::kRead | Access::kExec;
  constexpr Access kCache = Access::kRead;
  // Toolchains hold programs and the shared libraries they load (mmap with
  // PROT_EXEC needs an exec mount); caches only data the tools read.
  static const std::vector<HomeEntry> entries = {
      // Rust.
      {"~/.cargo/bin", kToolchain}, {"~/.rustup", kToolchain},
      {"~/.cargo/registry", kCache}, {"~/.cargo/git", kCache},
      // Python, Node, Deno, Bun, Go.
      {"~/.pyenv", kToolchain}, {"~/.nvm", kToolchain}, {"~/.volta", kToolchain},
      {"~/.deno/bin", kToolchain}, {"~/.bun/bin", kToolchain}, {"~/go/bin", kToolchain},
      {"~/go/pkg/mod", kCache}, {"~/.npm/_cacache", kCache}, {"~/.cache/pip", kCache},
      {"~/.cache/go-build", kCache},
      // Version managers and user-installed programs.
      {"~/.asdf", kToolchain}, {"~/.local/share/mise", kToolchain}, {"~/.sdkman/candidates", kToolchain},
      {"~/.local/bin", kToolchain},
      // Java.
      {"~/.m2/repository", kCache}, {"~/.gradle/caches", kCache}, {"~/.gradle/wrapper/dists", kCache},
  };
  return entries;
}

const std::vector<std::string>& HomeCredentialPatterns() {
  static const std::vector<std::string> patterns = {
      // Keys and keyrings.
      "~/.ssh", "~/.gnupg", "~/.password-store", "~/.local/share/keyrings", "~/.local/share/kwalletd", "~/.pki",
      "~/.config/sops", "~/.config/op", "~/.op",
      // Cloud and cluster credentials.
      "~/.aws", "~/.azure", "~/.config/gcloud", "~/.kube", "~/.oci", "~/.config/doctl", "~/.s3cfg", "~/.boto",
      "~/.vault-token", "~/.terraform.d/credentials.tfrc.json", "~/.terraformrc", "~/.config/rclone",
      "~/.config/hcloud", "~/.config/linode-cli", "~/.config/scw", "~/.config/openstack", "~/.fly",
      "~/.config/heroku", "~/.netlify", "~/.config/netlify", "~/.vercel", "~/.config/vercel", "~/.cloudflared",
      "~/.pulumi/credentials.json", "~/.mc/config.json",
      // Container registries.
      "~/.docker/config.json", "~/.docker/machine", "~/.dockercfg", "~/.config/containers/auth.json",
      // Git hosts.
      "~/.netrc", "~/.git-credentials", "~/.config/git/credentials", "~/.config/gh", "~/.config/hub",
      "~/.config/glab-cli", "~/.config/tea", "~/.subversion/auth",
      // Package registries.
      "~/.pypirc", "~/.npmrc", "~/.yarnrc.yml", "~/.cargo/credentials", "~/.cargo/credentials.toml",
      "~/.gem/credentials", "~/.m2/settings.xml", "~/.m2/settings-security.xml", "~/.gradle/gradle.properties",
      "~/.composer/auth.json", "~/.config/composer/auth.json", "~/.nuget/NuGet/NuGet.Config",
      "~/.config/pypoetry/auth.toml", "~/.local/share/pypoetry/auth.toml", "~/.config/configstore",
      // Data and ML services.
      "~/.kaggle", "~/.cache/huggingface/token", "~/.cache/huggingface/stored_tokens", "~/.huggingface", "~/.config/wandb", "~/.netrc-wandb",
      "~/.databrickscfg", "~/.snowflake", "~/.dbt/profiles.yml",
      // Databases.
      "~/.pgpass", "~/.my.cnf",
      // Mail and devices.
      "~/.msmtprc", "~/.android/adbkey",
      // Secrets kept in the home's own dotenv files.
      "~/.env", "~/.envrc",
      // Browser and mail profiles (saved passwords, cookies, session tokens).
      "~/.mozilla", "~/.thunderbird", "~/.config/google-chrome", "~/.config/chromium", "~/.config/BraveSoftware",
      "~/.config/microsoft-edge", "~/.config/vivaldi",
      // AI agents' own logins.
      "~/.claude", "~/.claude.json", "~/.codex", "~/.config/github-copilot", "~/.gemini", "~/.config/openai",
      // Shell and REPL histories (pasted tokens, passwords on command lines).
      "~/.bash_history", "~/.zsh_history", "~/.python_history", "~/.psql_history", "~/.mysql_history",
      "~/.local/share/fish", "~/.node_repl_history", "~/.sqlite_history", "~/.lesshst",
  };
  return patterns;
}

}  // namespace corral
