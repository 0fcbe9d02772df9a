// The home view: credential stores stay hidden inside every grant that shows
// them, a grant of one needs --allow-credential (said on stderr and audited),
// and --home real shows only the toolchains and caches of an allowlist.
// Judged from outside: the secret's bytes are not in the output or the trail.
#include "harness.h"

namespace corral_it {
namespace {

class HomeView : public SandboxTest {
 protected:
  HomeView() {
    outside_.Write("home/.ssh/id_ed25519", token_ + "\n");
    outside_.Write("home/.config/gh/hosts.yml", "oauth_token: " + token_ + "\n");
    outside_.Write("home/.kaggle/kaggle.json", "{\"key\": \"" + token_ + "\"}\n");
    outside_.Write("home/.env", "API_KEY=" + token_ + "\n");
    outside_.Write("home/.envrc", "export API_KEY=" + token_ + "\n");
    outside_.Write("home/notes.txt", "NOTES\n");
  }

  void ExpectTokenAbsent(const Outcome& outcome) {
    EXPECT_EQ(outcome.out.find(token_), std::string::npos) << outcome.Describe();
    EXPECT_EQ(outcome.err.find(token_), std::string::npos) << outcome.Describe();
    EXPECT_EQ(ReadFile(audit_path()).value_or("").find(token_), std::string::npos);
  }

  SpawnOptions Home() const { return WithEnv({{"HOME", home_}}); }

  const std::string token_ = RandomToken("HOMESECRET");
  const std::string home_ = outside_ / "home";
  const std::string cat_all_ =
      "cd \"$HOME\"; cat notes.txt .ssh/id_ed25519 .config/gh/hosts.yml .kaggle/kaggle.json .env .envrc; "
      "grep -r . . 2>/dev/null; true";
};

TEST_F(HomeView, ReadingTheWholeHomeShowsItButNotItsCredentials) {
  Outcome outcome = RunIn({"--allow-read", home_}, {"sh", "-c", cat_all_}, Home());
  EXPECT_NE(outcome.out.find("NOTES"), std::string::npos) << "control: the home is shown " << outcome.Describe();
  ExpectTokenAbsent(outcome);
}

TEST_F(HomeView, GrantingACredentialStoreNeedsTheLoudFlag) {
  for (const std::string flag : {"--allow-read", "--allow-write", "--allow-exec"}) {
    Outcome refused = RunIn({flag, home_ + "/.ssh"}, {"cat", home_ + "/.ssh/id_ed25519"}, Home());
    EXPECT_NE(refused.exit_code, 0) << refused.Describe();
    EXPECT_NE(refused.err.find("--allow-credential"), std::string::npos) << refused.Describe();
    ExpectTokenAbsent(refused);
  }
  // Inside a store too.
  Outcome inside = RunIn({"--allow-read", home_ + "/.ssh/id_ed25519"}, {"cat", home_ + "/.ssh/id_ed25519"}, Home());
  EXPECT_NE(inside.exit_code, 0) << inside.Describe();
  ExpectTokenAbsent(inside);
  // The loud flag shows it, says so on stderr and records it.
  Outcome allowed = RunIn({"--allow-credential", home_ + "/.ssh"}, {"cat", home_ + "/.ssh/id_ed25519"}, Home());
  EXPECT_NE(allowed.out.find(token_), std::string::npos) << allowed.Describe();
  EXPECT_NE(allowed.err.find("--allow-credential " + home_ + "/.ssh: the command can read"), std::string::npos)
      << allowed.Describe();
  std::vector<nlohmann::json> records = AuditEvents("credential");
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].value("path", ""), home_ + "/.ssh");
  // It shows that store only: the others stay hidden inside a home grant.
  Outcome with_home = RunIn({"--allow-read", home_, "--allow-credential", home_ + "/.ssh"},
                            {"sh", "-c", "cat \"$HOME\"/.ssh/id_ed25519; cat \"$HOME\"/.kaggle/kaggle.json"}, Home());
  EXPECT_NE(with_home.out.find(token_), std::string::npos) << with_home.Describe();
  EXPECT_EQ(with_home.out.find("\"key\""), std::string::npos) << with_home.Describe();
  EXPECT_NE(with_home.err.find("--allow-credential " + home_ + "/.ssh: the command can read"), std::string::npos)
      << "announced inside a home grant too " << with_home.Describe();
  EXPECT_EQ(AuditEvents("credential").size(), 1u);
  // A path that is no credential store is not for this flag.
  Outcome not_a_store = RunIn({"--allow-credential", home_ + "/notes.txt"}, {"true"}, Home());
  EXPECT_NE(not_a_store.exit_code, 0) << not_a_store.Describe();
}

// A store that is a symlink keeps its secrets where it points: that target
// is hidden inside a grant that shows it, and a grant or workspace naming it
// needs --allow-credential, as the store itself does.
TEST_F(HomeView, ASymlinkedStoreProtectsItsTarget) {
  outside_.Write("home/dotfiles/gnupg/private.key", token_ + "\n");
  outside_.Write("home/dotfiles/kube/config", "token: " + token_ + "\n");
  outside_.Write("home/dotfiles/vimrc", "VIMRC\n");
  ASSERT_EQ(::symlink("dotfiles/gnupg", (home_ + "/.gnupg").c_str()), 0);          // relative
  ASSERT_EQ(::symlink((home_ + "/dotfiles/kube").c_str(), (home_ + "/.kube").c_str()), 0);  // absolute
  const std::string dotfiles = home_ + "/dotfiles";
  auto in = [&](const std::string& dir) {
    SpawnOptions options = Home();
    options.cwd = dir;
    return options;
  };
  const std::string cat = "cat vimrc gnupg/private.key kube/config; grep -r . . 2>/dev/null; true";
  Outcome shown = RunIn({"--allow-read", dotfiles}, {"sh", "-c", "cd " + dotfiles + "; " + cat}, Home());
  EXPECT_NE(shown.out.find("VIMRC"), std::string::npos) << "control: the tree is shown " << shown.Describe();
  ExpectTokenAbsent(shown);
  Outcome workspace = RunIn({"--workspace", dotfiles}, {"sh", "-c", cat}, in(dotfiles));
  EXPECT_NE(workspace.out.find("VIMRC"), std::string::npos) << workspace.Describe();
  ExpectTokenAbsent(workspace);
  for (const std::string store : {"/gnupg", "/kube", "/gnupg/private.key"}) {
    Outcome refused = RunIn({"--allow-read", dotfiles + store}, {"cat", dotfiles + "/gnupg/private.key"}, Home());
    EXPECT_NE(refused.exit_code, 0) << refused.Describe();
    EXPECT_NE(refused.err.find("--allow-credential"), std::string::npos) << refused.Describe();
    ExpectTokenAbsent(refused);
  }
  Outcome inside = RunIn({"--workspace", dotfiles + "/gnupg"}, {"true"}, in(dotfiles + "/gnupg"));
  EXPECT_NE(inside.exit_code, 0) << inside.Describe();
  EXPECT_NE(inside.err.find("credential store"), std::string::npos) << inside.Describe();
  // The loud flag names the target; the link in the home then shows it too.
  Outcome allowed = RunIn({"--allow-read", home_, "--allow-credential", dotfiles + "/gnupg"},
                          {"sh", "-c", "cat \"$HOME\"/.gnupg/private.key"}, Home());
  EXPECT_NE(allowed.out.find(token_), std::string::npos) << allowed.Describe();
  EXPECT_EQ(allowed.out.find("token:"), std::string::npos) << "the other store stays hidden " << allowed.Describe();
  EXPECT_EQ(AuditEvents("credential").size(), 1u);
}

// A store linked into a directory the caller cannot search (~/.ssh ->
// proj/locked/ssh, locked 000, in the workspace): the command runs as the
// caller, owns `locked` and could chmod it open, and `ssh` in it might be a
// link to anywhere, so corral cannot tell where the store ends and runs
// nothing. As root (who searches every directory) the link resolves and its
// target is hidden as any linked store's is.
TEST_F(HomeView, AStoreLinkedIntoADirectoryTheCallerCannotSearchRunsNothing) {
  outside_.Write("home/proj/locked/ssh/id_rsa", token_ + "\n");
  outside_.Write("home/proj/readme", "README\n");
  ::unlink((home_ + "/.ssh/id_ed25519").c_str());
  ::rmdir((home_ + "/.ssh").c_str());
  ASSERT_EQ(::symlink("proj/locked/ssh", (home_ + "/.ssh").c_str()), 0);
  ASSERT_EQ(::chmod((home_ + "/proj/locked").c_str(), 0), 0);
  SpawnOptions options = Home();
  options.cwd = home_ + "/proj";
  Outcome outcome = RunIn({"--workspace", home_ + "/proj"},
                          {"sh", "-c", "cat readme; chmod 700 locked; cat locked/ssh/id_rsa; touch ran; true"}, options);
  ::chmod((home_ + "/proj/locked").c_str(), 0700);
  ExpectTokenAbsent(outcome);
  if (::geteuid() == 0) {
    EXPECT_NE(outcome.out.find("README"), std::string::npos) << "control: the workspace is shown " << outcome.Describe();
  } else {
    EXPECT_EQ(outcome.exit_code, 77) << outcome.Describe();
    EXPECT_NE(outcome.err.find("cannot tell where it ends"), std::string::npos) << outcome.Describe();
    EXPECT_FALSE(Exists(home_ + "/proj/ran"));
  }
}

// The same, where the link climbs out of the locked directory again
// (`locked/../real/aws`, absolute and relative): the locked directory is
// hidden, and so is where the store ends, since the command can chmod the
// way open. As root the links resolve and the targets are hidden as usual.
TEST_F(HomeView, AStoreLinkedOutThroughADirectoryTheCallerCannotSearchIsHiddenAtBothEnds) {
  const std::string proj = home_ + "/proj";
  outside_.Write("home/proj/real/aws/credentials", token_ + "\n");
  outside_.Write("home/proj/real/netrc", token_ + "\n");
  outside_.Write("home/proj/locked/keep", "KEEP\n");
  outside_.Write("home/proj/readme", "README\n");
  ASSERT_EQ(::symlink((proj + "/locked/../real/aws").c_str(), (home_ + "/.aws").c_str()), 0);
  ASSERT_EQ(::symlink("proj/locked/../real/netrc", (home_ + "/.netrc").c_str()), 0);
  ASSERT_EQ(::chmod((proj + "/locked").c_str(), 0), 0);
  SpawnOptions options = Home();
  options.cwd = proj;
  Outcome outcome = RunIn({"--workspace", proj},
                          {"sh", "-c", "cat readme real/aws/credentials real/netrc; chmod 700 locked; true"}, options);
  struct stat st;
  ASSERT_EQ(::stat((proj + "/locked").c_str(), &st), 0);
  ::chmod((proj + "/locked").c_str(), 0700);
  EXPECT_NE(outcome.out.find("README"), std::string::npos) << "control: the workspace is shown " << outcome.Describe();
  ExpectTokenAbsent(outcome);
  if (::geteuid() != 0) {
    EXPECT_EQ(st.st_mode & 07777, 0u) << "the command opened the locked directory on the host " << outcome.Describe();
  }
}

// A link that needs a lookup inside a directory the caller cannot search
// (`locked/inner`, itself a link out) cannot be followed: corral cannot
// tell where the store ends, so it runs nothing rather than guess. Root,
// who searches every directory, follows it and hides the target.
TEST_F(HomeView, AStoreThatCannotBeFollowedPastALockedDirectoryRunsNothing) {
  const std::string proj = home_ + "/proj";
  outside_.Write("home/proj/real/gnupg/key", token_ + "\n");
  outside_.Write("home/proj/readme", "README\n");
  outside_.Mkdir("home/proj/locked");
  ASSERT_EQ(::symlink("../real/gnupg", (proj + "/locked/inner").c_str()), 0);
  ASSERT_EQ(::symlink((proj + "/locked/inner").c_str(), (home_ + "/.gnupg").c_str()), 0);
  ASSERT_EQ(::chmod((proj + "/locked").c_str(), 0), 0);
  SpawnOptions options = Home();
  options.cwd = proj;
  Outcome outcome = RunIn({"--workspace", proj},
                          {"sh", "-c", "cat readme real/gnupg/key; touch ran; true"}, options);
  ::chmod((proj + "/locked").c_str(), 0700);
  ExpectTokenAbsent(outcome);
  if (::geteuid() == 0) {
    EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
    EXPECT_NE(outcome.out.find("README"), std::string::npos) << outcome.Describe();
  } else {
    EXPECT_EQ(outcome.exit_code, 77) << outcome.Describe();  // kExitPolicy
    EXPECT_NE(outcome.err.find("cannot tell where it ends"), std::string::npos) << outcome.Describe();
    EXPECT_FALSE(Exists(proj + "/ran"));
  }
}

TEST_F(HomeView, RealHomeShowsTheAllowlistOnlyAndItsToolchainsRun) {
  outside_.Write("home/.cargo/bin/tool", "#!/bin/sh\necho TOOLCHAIN-RAN\n", 0755);
  outside_.Write("home/.cargo/registry/index/crate.txt", "CACHED\n");
  outside_.Write("home/.cargo/credentials.toml", "token = \"" + token_ + "\"\n");
  Outcome outcome = RunIn({"--home", "real"},
                          {"sh", "-c", "\"$HOME\"/.cargo/bin/tool; cat \"$HOME\"/.cargo/registry/index/crate.txt; " +
                                           cat_all_ + "; cat .cargo/credentials.toml; echo x > \"$HOME\"/planted"},
                          Home());
  EXPECT_NE(outcome.out.find("TOOLCHAIN-RAN"), std::string::npos) << outcome.Describe();
  EXPECT_NE(outcome.out.find("CACHED"), std::string::npos) << outcome.Describe();
  EXPECT_EQ(outcome.out.find("NOTES"), std::string::npos) << "outside the allowlist " << outcome.Describe();
  ExpectTokenAbsent(outcome);
  EXPECT_FALSE(Exists(home_ + "/planted")) << "the home's writes stay in the sandbox";
}

}  // namespace
}  // namespace corral_it
