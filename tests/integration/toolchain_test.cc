// Toolchains in the home (policy/toolchains.h, policy/search_path.h): a
// named toolchain runs inside, read-only, with its credential files hidden;
// without the grant, the program that would silently run instead (or not at
// all) is named in one stderr line with the fix. Each judged from outside:
// the marker a toolchain's program prints, the token's bytes absent from
// everything the run left, the canary a refused run never made.
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <memory>
#include <vector>

#include "harness.h"

namespace corral_it {
namespace {

class Toolchains : public SandboxTest {
 protected:
  Toolchains() {
    // A rustup layout: cargo is a proxy that needs ~/.rustup's toolchain.
    outside_.Write("home/.cargo/bin/cargo",
                   "#!/bin/sh\ncat \"$HOME/.rustup/toolchains/stable/marker\"\n", 0755);
    outside_.Write("home/.rustup/toolchains/stable/marker", "RUSTUP-TOOLCHAIN\n");
    outside_.Write("home/.cargo/credentials.toml", "[registry]\ntoken = \"" + token_ + "\"\n");
    // A pyenv shim that /usr/bin/python3 would silently stand in for.
    outside_.Write("home/.pyenv/shims/python3", "#!/bin/sh\necho PYENV-PYTHON\n", 0755);
    // nvm's Node, with a token in the npmrc it keeps next to itself.
    outside_.Write("home/.nvm/versions/node/v20.1.0/bin/nodefake", "#!/bin/sh\necho NVM-NODE\n", 0755);
    outside_.Write("home/.nvm/versions/node/v20.1.0/etc/npmrc", "//registry.npmjs.org/:_authToken=" + token_ + "\n");
  }

  // HOME is the fake home, PATH puts its toolchains first, as a shell
  // profile would.
  SpawnOptions Home(std::map<std::string, std::string> extra = {}) const {
    std::map<std::string, std::string> env = {
        {"HOME", home_},
        {"PATH", home_ + "/.pyenv/shims:" + home_ + "/.cargo/bin:" + home_ +
                     "/.nvm/versions/node/v20.1.0/bin:/usr/local/bin:/usr/bin:/bin"}};
    env.insert(extra.begin(), extra.end());
    return WithEnv(env);
  }

  void ExpectTokenAbsent(const Outcome& outcome) const {
    EXPECT_EQ(outcome.out.find(token_), std::string::npos) << outcome.Describe();
    EXPECT_EQ(outcome.err.find(token_), std::string::npos) << outcome.Describe();
    EXPECT_EQ(ReadFile(audit_path()).value_or("").find(token_), std::string::npos);
  }

  const std::string token_ = RandomToken("TOOLCHAINSECRET");
  const std::string home_ = outside_ / "home";
};

TEST_F(Toolchains, ANamedToolchainRunsInsideWithItsCredentialsHidden) {
  Outcome outcome = RunIn({"--allow-toolchain", "rustup"},
                          {"sh", "-c", "cargo; cat \"$HOME/.cargo/credentials.toml\"; true"}, Home());
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_NE(outcome.out.find("RUSTUP-TOOLCHAIN"), std::string::npos) << "cargo ran its ~/.rustup " << outcome.Describe();
  ExpectTokenAbsent(outcome);
  // Read-only: the toolchain cannot be changed from inside.
  Outcome write = RunIn({"--allow-toolchain", "rustup"}, {"sh", "-c", "echo x > \"$HOME/.cargo/bin/cargo\""}, Home());
  EXPECT_NE(write.exit_code, 0) << write.Describe();
  EXPECT_EQ(ReadFile(home_ + "/.cargo/bin/cargo").value_or("").find("x\n"), std::string::npos);
}

// The npmrc a Node keeps in its own etc/ is hidden by the toolchain's table
// alone (no home-wide pattern names it), as is cargo's credentials file
// where $CARGO_HOME moves it: the toolchain_secrets mutant shows both.
TEST_F(Toolchains, TheToolchainsOwnSecretFilesAreHidden) {
  Outcome node = RunIn({"--allow-toolchain", "nvm"},
                       {"sh", "-c", "nodefake; cat \"$HOME\"/.nvm/versions/node/*/etc/npmrc; true"}, Home());
  EXPECT_NE(node.out.find("NVM-NODE"), std::string::npos) << "control: nvm's node ran " << node.Describe();
  ExpectTokenAbsent(node);
  // pyenv-virtualenv links a virtualenv into versions/: its pip.conf too.
  outside_.Write("home/.pyenv/versions/3.11.4/envs/venv/pip.conf", "index-url = https://u:" + token_ + "@x\n");
  ASSERT_EQ(::symlink((home_ + "/.pyenv/versions/3.11.4/envs/venv").c_str(), (home_ + "/.pyenv/versions/venv").c_str()),
            0);
  Outcome venv = RunIn({"--allow-toolchain", "pyenv"},
                       {"sh", "-c", "python3; cat \"$HOME\"/.pyenv/versions/venv/pip.conf "
                                    "\"$HOME\"/.pyenv/versions/3.11.4/envs/venv/pip.conf; true"},
                       Home());
  EXPECT_NE(venv.out.find("PYENV-PYTHON"), std::string::npos) << "control: pyenv ran " << venv.Describe();
  ExpectTokenAbsent(venv);
  // --home real shows nvm without naming it: the same file stays hidden.
  Outcome real = RunIn({"--home", "real"},
                       {"sh", "-c", "nodefake; cat \"$HOME\"/.nvm/versions/node/*/etc/npmrc; true"}, Home());
  EXPECT_NE(real.out.find("NVM-NODE"), std::string::npos) << "control: --home real shows nvm " << real.Describe();
  ExpectTokenAbsent(real);

  outside_.Write("home/.local/share/cargo/bin/cargo", "#!/bin/sh\necho MOVED-CARGO\n", 0755);
  outside_.Write("home/.local/share/cargo/credentials.toml", "token = \"" + token_ + "\"\n");
  const std::string moved = home_ + "/.local/share/cargo";
  Outcome cargo = RunIn({"--allow-toolchain", "rustup"},
                        {"sh", "-c", moved + "/bin/cargo; cat " + moved + "/credentials.toml; true"},
                        Home({{"CARGO_HOME", moved}}));
  EXPECT_NE(cargo.out.find("MOVED-CARGO"), std::string::npos) << "control: $CARGO_HOME is granted " << cargo.Describe();
  ExpectTokenAbsent(cargo);
}

TEST_F(Toolchains, AutoGrantsTheToolchainsOnPath) {
  Outcome outcome =
      RunIn({"--allow-toolchain", "auto"}, {"sh", "-c", "python3; cargo; nodefake; cat \"$HOME\"/.nvm/versions/node/*/etc/npmrc; true"},
            Home());
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  for (const char* marker : {"PYENV-PYTHON", "RUSTUP-TOOLCHAIN", "NVM-NODE"}) {
    EXPECT_NE(outcome.out.find(marker), std::string::npos) << marker << " " << outcome.Describe();
  }
  EXPECT_EQ(outcome.err.find("warning"), std::string::npos) << "nothing resolves differently " << outcome.Describe();
  ExpectTokenAbsent(outcome);
}

TEST_F(Toolchains, AProgramThatResolvesElsewhereInsideIsNamedWithItsFix) {
  // pyenv's python3 outside, /usr/bin's inside: said, then run as it is.
  Outcome fallback = RunIn({}, {"python3", "-c", "print('SYSTEM-PYTHON')"}, Home());
  EXPECT_NE(fallback.out.find("SYSTEM-PYTHON"), std::string::npos) << fallback.Describe();
  EXPECT_NE(fallback.err.find("corral: warning: python3 is ~/.pyenv/shims/python3 outside but /usr/bin/python3 "
                              "inside; --allow-toolchain pyenv would fix it"),
            std::string::npos)
      << fallback.Describe();
  // Not found inside at all.
  Outcome missing = RunIn({}, {"cargo"}, Home());
  EXPECT_NE(missing.exit_code, 0) << missing.Describe();
  EXPECT_NE(missing.err.find("cargo is ~/.cargo/bin/cargo outside but not found inside; --allow-toolchain rustup "
                             "would fix it"),
            std::string::npos)
      << missing.Describe();
  // Half a toolchain: ~/.cargo without the ~/.rustup its proxies run.
  Outcome half = RunIn({"--allow-exec", home_ + "/.cargo"}, {"cargo"}, Home());
  EXPECT_NE(half.err.find("cargo is from the rustup toolchain, but ~/.rustup is not visible inside; "
                          "--allow-toolchain rustup would fix it"),
            std::string::npos)
      << half.Describe();
  // A PATH entry that shadows what a script will run: one line.
  Outcome script = RunIn({}, {"sh", "-c", "true"}, Home());
  EXPECT_EQ(script.exit_code, 0) << script.Describe();
  EXPECT_NE(script.err.find("corral: warning: python3 resolves to another program inside: ~/.pyenv/shims is not "
                            "visible there; --allow-toolchain pyenv would fix it"),
            std::string::npos)
      << script.Describe();
  size_t lines = 0;
  for (char c : script.err) lines += c == '\n';
  EXPECT_EQ(lines, 1u) << "one line per run " << script.Describe();
  // explain lists every hidden entry with its fix.
  Outcome explain = Corral({"explain", "--", "sh"}, Home());
  EXPECT_NE(explain.out.find("not visible inside: ~/.cargo/bin (--allow-toolchain rustup)"), std::string::npos)
      << explain.Describe();
}

// The comparison is worked out while the sandbox starts (cli/run.cc), but
// its line is written before the command may begin: it never lands after
// (or inside) what the command writes.
TEST_F(Toolchains, TheWarningComesBeforeAnythingTheCommandWrites) {
  for (int round = 0; round < 5; ++round) {
    Outcome outcome = RunIn({}, {"sh", "-c", "echo FROM-THE-COMMAND >&2"}, Home());
    EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
    const size_t warning = outcome.err.find("corral: warning: python3 resolves to another program inside");
    const size_t command = outcome.err.find("FROM-THE-COMMAND");
    ASSERT_NE(warning, std::string::npos) << outcome.Describe();
    ASSERT_NE(command, std::string::npos) << outcome.Describe();
    EXPECT_LT(warning, command) << outcome.Describe();
  }
}

// Runs started together all list PATH through the one listing cache of the
// state directory (policy/listing_cache.h): each says the same line, and
// what they leave is one private cache file, no temporary beside it, that
// the next run reads to the same line.
TEST_F(Toolchains, ConcurrentRunsShareThePathListings) {
  const std::string line = "corral: warning: python3 resolves to another program inside: ~/.pyenv/shims is not "
                           "visible there; --allow-toolchain pyenv would fix it";
  constexpr size_t kRuns = 8;
  // The state directory exists, as after any earlier run: a run whose trail
  // goes to --audit opens it but does not make it (cli/run.cc), so eight
  // first runs that start together would otherwise keep no listings at all.
  ASSERT_EQ(::mkdir((state_ / "corral").c_str(), 0700), 0);
  std::vector<std::unique_ptr<Process>> runs;
  for (size_t i = 0; i < kRuns; ++i) {
    runs.push_back(std::make_unique<Process>(RunArgv({}, {"sh", "-c", "true"}), Defaults(Home())));
  }
  for (auto& run : runs) {
    const Outcome& outcome = run->Wait();
    EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
    EXPECT_NE(outcome.err.find(line), std::string::npos) << outcome.Describe();
  }
  const std::string state = state_ / "corral";
  struct stat st;
  ASSERT_EQ(::lstat((state + "/listings").c_str(), &st), 0) << "no listings were kept";
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  std::unique_ptr<DIR, int (*)(DIR*)> dir(::opendir(state.c_str()), ::closedir);
  ASSERT_TRUE(dir);
  while (const dirent* entry = ::readdir(dir.get())) {
    EXPECT_FALSE(std::string(entry->d_name).starts_with("listings.new-")) << entry->d_name << " was left";
  }
  Outcome after = RunIn({}, {"sh", "-c", "true"}, Home());
  EXPECT_NE(after.err.find(line), std::string::npos) << after.Describe();
}

TEST_F(Toolchains, AnEverydayPathIsQuiet) {
  Outcome outcome = RunIn({}, {"sh", "-c", "true"}, WithEnv({{"HOME", home_}, {"PATH", "/usr/bin:/bin"}}));
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_EQ(outcome.err, "") << outcome.Describe();
}

TEST_F(Toolchains, AnUnknownOrMissingToolchainIsRefusedWithNoChild) {
  const std::string canary = workspace_ / "canary";
  Outcome unknown = RunIn({"--allow-toolchain", "rustc"}, {"touch", canary}, Home());
  EXPECT_EQ(unknown.exit_code, 64) << unknown.Describe();
  EXPECT_NE(unknown.err.find("--allow-toolchain rustc: not a toolchain corral knows; the names are rustup, pyenv"),
            std::string::npos)
      << unknown.Describe();
  Outcome missing = RunIn({"--allow-toolchain", "sdkman"}, {"touch", canary}, Home());
  EXPECT_EQ(missing.exit_code, 64) << missing.Describe();
  EXPECT_NE(missing.err.find("--allow-toolchain sdkman: it is not installed here"), std::string::npos)
      << missing.Describe();
  EXPECT_FALSE(Exists(canary));
}

// The user config may name toolchains; the project file only repeats them.
TEST_F(Toolchains, AProjectFileCannotAddAToolchain) {
  config_.Write("corral/config.toml", "[sandbox]\nallow_toolchain = [\"pyenv\"]\n");
  workspace_.Write("corral.toml", "[sandbox]\nallow_toolchain = [\"pyenv\", \"rustup\"]\n");
  const std::string canary = workspace_ / "canary";
  Outcome widened = RunIn({}, {"touch", canary}, Home());
  EXPECT_NE(widened.exit_code, 0) << widened.Describe();
  EXPECT_NE(widened.err.find("cannot grant the toolchain rustup"), std::string::npos) << widened.Describe();
  EXPECT_FALSE(Exists(canary));
  workspace_.Write("corral.toml", "[sandbox]\nallow_toolchain = [\"pyenv\"]\n");
  Outcome repeated = RunIn({}, {"python3"}, Home());
  EXPECT_NE(repeated.out.find("PYENV-PYTHON"), std::string::npos) << repeated.Describe();
}

}  // namespace
}  // namespace corral_it
