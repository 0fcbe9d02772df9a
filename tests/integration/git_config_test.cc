// `git config` and `git remote add` inside the sandbox on an existing
// repository (repair/git_config_stage.h): the run writes its own copy of
// .git/config, and only the changes of safe keys land in the real one. Every
// verdict is read from outside, with the host's git, after the run.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "harness.h"

namespace corral_it {
namespace {

class GitConfigWrite : public SandboxTest {
 protected:
  Outcome HostGit(const std::string& dir, const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"/usr/bin/git", "-C", dir, "-c", "user.email=t@t", "-c", "user.name=t"};
    argv.insert(argv.end(), args.begin(), args.end());
    return Execute(argv);
  }
  void MakeRepo() {
    HostGit(workspace_.path(), {"init", "-q", "."});
    HostGit(workspace_.path(), {"commit", "-q", "--allow-empty", "-m", "init"});
  }
  // What the real config says for `key` (read by the host's git, from the file only).
  std::string RealValue(const std::string& key) {
    Outcome get = Execute({"/usr/bin/git", "config", "--file", workspace_ / ".git/config", "--get-all", key});
    return get.out;
  }
  std::string RealConfig() { return ReadFile(workspace_ / ".git/config").value_or("<unreadable>"); }
  ino_t ConfigInode() {
    struct stat st;
    return ::lstat((workspace_ / ".git/config").c_str(), &st) == 0 ? st.st_ino : 0;
  }
  // Nothing of the staged copies is left behind but what the quarantine keeps.
  bool StageLeft() { return Exists(state_ / "corral/git-config") && !std::filesystem::is_empty(state_ / "corral/git-config"); }

  const std::string canary_ = outside_ / "PWNED";
};

TEST_F(GitConfigWrite, SettingUserNameInsideLandsInTheRealConfig) {
  MakeRepo();
  ino_t before = ConfigInode();
  Outcome outcome = RunIn({}, {"sh", "-c", "git config user.name bob && git config user.name && readlink .git/config"});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_EQ(outcome.out, "bob\n/.corral-git/0/config\n") << outcome.Describe();
  Outcome outside = Execute({"/usr/bin/git", "-C", workspace_.path(), "config", "user.name"});
  EXPECT_EQ(outside.out, "bob\n") << outside.Describe() << RealConfig();
  EXPECT_EQ(ConfigInode(), before) << "the landing replaced the file instead of writing it in place";
  EXPECT_FALSE(Exists(workspace_ / ".git/config.lock"));
  EXPECT_FALSE(StageLeft());
  std::vector<nlohmann::json> records = AuditEvents("git_config");
  ASSERT_EQ(records.size(), 1u) << outcome.Describe();
  EXPECT_EQ(records[0]["landed"], nlohmann::json::array({"user.name"}));
  EXPECT_EQ(outcome.err.find(".git/config"), std::string::npos) << "a clean landing says nothing: " << outcome.err;
}

TEST_F(GitConfigWrite, RemoteAddInsideLandsInTheRealConfig) {
  MakeRepo();
  Outcome outcome = RunIn({}, {"git", "remote", "add", "origin", "https://example.com/x.git"});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  Outcome url = Execute({"/usr/bin/git", "-C", workspace_.path(), "remote", "get-url", "origin"});
  EXPECT_EQ(url.out, "https://example.com/x.git\n") << url.Describe() << RealConfig();
  EXPECT_EQ(RealValue("remote.origin.fetch"), "+refs/heads/*:refs/remotes/origin/*\n") << RealConfig();
}

// Removing a key and renaming a remote land too (keys removed, keys added).
TEST_F(GitConfigWrite, UnsettingAKeyAndRenamingARemoteLand) {
  MakeRepo();
  HostGit(workspace_.path(), {"config", "user.name", "alice"});
  HostGit(workspace_.path(), {"remote", "add", "origin", "https://example.com/x.git"});
  Outcome outcome = RunIn({}, {"sh", "-c", "git config --unset user.name && git remote rename origin upstream"});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_EQ(RealValue("user.name"), "") << RealConfig();
  Outcome remotes = Execute({"/usr/bin/git", "-C", workspace_.path(), "remote", "-v"});
  EXPECT_EQ(remotes.out, "upstream\thttps://example.com/x.git (fetch)\nupstream\thttps://example.com/x.git (push)\n")
      << RealConfig();
  EXPECT_EQ(RealValue("remote.upstream.fetch"), "+refs/heads/*:refs/remotes/upstream/*\n") << RealConfig();
}

// A key that makes a host git run something never lands; the safe key set
// in the same run does; the refusal names the key, in one stderr line and in
// the audit record, and the run's copy is in the quarantine.
TEST_F(GitConfigWrite, HooksPathSetInsideNeverLands) {
  MakeRepo();
  outside_.Mkdir("hooks");
  WriteFile(outside_ / "hooks/pre-commit", "#!/bin/sh\ntouch " + canary_ + "\n", 0755);
  Outcome outcome = RunIn({}, {"sh", "-c", "git config core.hooksPath " + outside_ / "hooks" +
                                                 " && git config user.name bob && git config core.hooksPath"});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_EQ(outcome.out, outside_ / "hooks" + "\n") << "inside, git reads its own copy";
  EXPECT_EQ(RealValue("core.hooksPath"), "") << RealConfig();
  EXPECT_EQ(RealValue("user.name"), "bob\n") << RealConfig();
  EXPECT_NE(outcome.err.find(workspace_ / ".git/config: not written, since git could run code it names outside the "
                                          "sandbox: core.hookspath (line"),
            std::string::npos)
      << outcome.err;
  std::vector<nlohmann::json> records = AuditEvents("git_config");
  ASSERT_EQ(records.size(), 1u) << outcome.Describe();
  EXPECT_NE(records[0]["refused"].dump().find("core.hookspath"), std::string::npos) << records[0].dump();
  ASSERT_TRUE(records[0].contains("moved_to")) << records[0].dump();
  EXPECT_NE(ReadFile(records[0]["moved_to"].get<std::string>()).value_or("").find("hooksPath"), std::string::npos);
  HostGit(workspace_.path(), {"commit", "-q", "--allow-empty", "-m", "after"});
  EXPECT_FALSE(Exists(canary_)) << "the hooks path the run set ran on the host";
}

TEST_F(GitConfigWrite, BangAliasSetInsideNeverLands) {
  MakeRepo();
  Outcome outcome = RunIn({}, {"git", "config", "alias.x", "!touch " + canary_});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_EQ(RealValue("alias.x"), "") << RealConfig();
  EXPECT_NE(outcome.err.find("alias.x (line"), std::string::npos) << outcome.err;
  HostGit(workspace_.path(), {"x"});
  EXPECT_FALSE(Exists(canary_)) << "the alias the run set ran on the host";
}

TEST_F(GitConfigWrite, IncludePathSetInsideNeverLands) {
  MakeRepo();
  std::string script = "printf '[core]\\n\\tfsmonitor = \"touch " + canary_ +
                       "; false\"\\n' > evil.cfg && git config include.path ../evil.cfg";
  Outcome outcome = RunIn({}, {"sh", "-c", script});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_EQ(RealValue("include.path"), "") << RealConfig();
  EXPECT_NE(outcome.err.find("include.path (line"), std::string::npos) << outcome.err;
  HostGit(workspace_.path(), {"status"});
  EXPECT_FALSE(Exists(canary_)) << "the include the run set ran on the host";
}

// A real .git/config that is a symlink out of the workspace is not staged,
// and nothing the run does reaches its target.
TEST_F(GitConfigWrite, ASymlinkedRealConfigIsNotFollowed) {
  MakeRepo();
  const std::string elsewhere = outside_ / "shared.cfg";
  std::filesystem::rename(workspace_ / ".git/config", elsewhere);
  ASSERT_EQ(::symlink(elsewhere.c_str(), (workspace_ / ".git/config").c_str()), 0);
  std::string before = ReadFile(elsewhere).value_or("");
  Outcome outcome = RunIn({}, {"sh", "-c", "git config user.name bob; git config core.hooksPath /tmp/x; true"});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_EQ(ReadFile(elsewhere).value_or(""), before);
  EXPECT_TRUE(AuditEvents("git_config").empty());
}

// The real config replaced by a symlink while the run goes on (as another
// process could): the landing opens it with no symlink followed and lands
// nothing; the symlink's target keeps its bytes.
TEST_F(GitConfigWrite, ARealConfigSwappedForASymlinkDuringTheRunGetsNothing) {
  MakeRepo();
  const std::string elsewhere = outside_ / "victim.cfg";
  WriteFile(elsewhere, "[core]\n\tbare = false\n");
  Process run(RunArgv({}, {"sh", "-c", "git config user.name bob && touch ready && sleep 2"}), Defaults({}));
  ASSERT_TRUE(WaitFor([&] { return Exists(workspace_ / "ready"); }, 20s));
  std::filesystem::rename(workspace_ / ".git/config", outside_ / "original.cfg");
  ASSERT_EQ(::symlink(elsewhere.c_str(), (workspace_ / ".git/config").c_str()), 0);
  const Outcome& outcome = run.Wait();
  EXPECT_EQ(ReadFile(elsewhere).value_or(""), "[core]\n\tbare = false\n") << outcome.Describe();
  EXPECT_NE(outcome.err.find("nothing landed"), std::string::npos) << outcome.err;
  EXPECT_EQ(ReadFile(outside_ / "original.cfg").value_or("").find("bob"), std::string::npos);
}

// The run's copy replaced by a symlink, a FIFO or a file past the bound:
// one clear error, nothing lands, and the landing does not hang.
TEST_F(GitConfigWrite, ACopyReplacedBySomethingElseLandsNothing) {
  MakeRepo();
  std::string before = RealConfig();
  workspace_.Write("planted.cfg", "[user]\n\tname = evil\n");
  struct Plant {
    std::string script;
    std::string error;
  };
  for (const Plant& plant : std::vector<Plant>{
           {"ln -s " + workspace_ / "planted.cfg" + " \"$c\"", "cannot be read (it is a symlink)"},
           {"mkfifo \"$c\"", "cannot be read (it is not a regular file)"},
           {"{ printf '[user]\\n\\tname = evil\\n'; head -c 1100000 /dev/zero | tr '\\0' '\\n'; } > \"$c\"",
            "cannot be read (it is larger than 1048576 bytes)"},
       }) {
    SpawnOptions options;
    options.timeout = 30s;
    Outcome outcome =
        RunIn({}, {"sh", "-c", "git config user.name bob && c=$(readlink .git/config) && rm \"$c\" && " + plant.script},
              options);
    EXPECT_FALSE(outcome.timed_out) << plant.script;
    EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
    EXPECT_NE(outcome.err.find(workspace_ / ".git/config: the run's copy of the config " + plant.error +
                               ": nothing of it landed"),
              std::string::npos)
        << plant.script << "\n" << outcome.err;
    EXPECT_EQ(RealConfig(), before) << plant.script;
  }
}

// Two runs in one workspace, each setting a different key while the other
// runs: both keys land, neither clobbers the other.
TEST_F(GitConfigWrite, ConcurrentRunsEachLandTheirOwnKey) {
  MakeRepo();
  auto script = [](const std::string& set, const std::string& mine, const std::string& theirs) {
    return set + " && touch " + mine + " && i=0; while [ ! -e " + theirs + " ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done";
  };
  Process a(RunArgv({}, {"sh", "-c", script("git config user.name bob", "a_ready", "b_ready")}), Defaults({}));
  Process b(RunArgv({}, {"sh", "-c", script("git config user.email bob@example.com", "b_ready", "a_ready")}),
            Defaults({}));
  const Outcome& first = a.Wait();
  const Outcome& second = b.Wait();
  EXPECT_EQ(first.exit_code, 0) << first.Describe();
  EXPECT_EQ(second.exit_code, 0) << second.Describe();
  EXPECT_EQ(RealValue("user.name"), "bob\n") << RealConfig();
  EXPECT_EQ(RealValue("user.email"), "bob@example.com\n") << RealConfig();
  EXPECT_TRUE(Exists(workspace_ / ".git/config")) << "a sweep took the landed config for a new file";
  EXPECT_EQ(first.err.find("not written"), std::string::npos) << first.err;
  EXPECT_EQ(second.err.find("not written"), std::string::npos) << second.err;
}

TEST_F(GitConfigWrite, AConcurrentRunsHooksPathNeverLandsBesideAnotherRunsUserName) {
  MakeRepo();
  auto script = [](const std::string& set, const std::string& mine, const std::string& theirs) {
    return set + " && touch " + mine + " && i=0; while [ ! -e " + theirs + " ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done";
  };
  Process a(RunArgv({}, {"sh", "-c", script("git config core.hooksPath /tmp/x", "a_ready", "b_ready")}), Defaults({}));
  Process b(RunArgv({}, {"sh", "-c", script("git config user.name bob", "b_ready", "a_ready")}), Defaults({}));
  const Outcome& first = a.Wait();
  const Outcome& second = b.Wait();
  EXPECT_EQ(first.exit_code, 0) << first.Describe();
  EXPECT_EQ(second.exit_code, 0) << second.Describe();
  EXPECT_EQ(RealValue("core.hooksPath"), "") << RealConfig();
  EXPECT_EQ(RealValue("user.name"), "bob\n") << RealConfig();
  EXPECT_NE(first.err.find("core.hookspath"), std::string::npos) << first.err;
}

// The same key changed outside the run meanwhile: the run's value does not
// clobber it, and the line names the key.
TEST_F(GitConfigWrite, AKeyChangedOutsideMeanwhileIsNotClobbered) {
  MakeRepo();
  Process run(RunArgv({}, {"sh", "-c", "git config user.name bob && git config user.email in@example.com && "
                                       "touch ready && sleep 2"}),
              Defaults({}));
  ASSERT_TRUE(WaitFor([&] { return Exists(workspace_ / "ready"); }, 20s));
  // The user's own edit, in place (as an editor that keeps the file would).
  std::string text = RealConfig() + "[user]\n\tname = alice\n";
  WriteFile(workspace_ / ".git/config", text);
  const Outcome& outcome = run.Wait();
  EXPECT_EQ(RealValue("user.name"), "alice\n") << RealConfig();
  EXPECT_EQ(RealValue("user.email"), "in@example.com\n") << RealConfig();
  EXPECT_NE(outcome.err.find(".git/config: not written, since it changed outside this run meanwhile: user.name"),
            std::string::npos)
      << outcome.err;
}

// branch.<name>.remote and pushRemote may hold a URL instead of a remote's
// name, and git fetches from it: an `ext::` one runs a program on the next
// host `git fetch` or `git pull` (where the user allows that transport). They
// are judged as remote.<name>.url is: a transport or an option never lands.
TEST_F(GitConfigWrite, ABranchRemoteNamingATransportNeverLands) {
  MakeRepo();
  HostGit(workspace_.path(), {"checkout", "-q", "-b", "main"});
  const std::string ext = "ext::sh -c touch% " + canary_;
  Outcome outcome = RunIn({}, {"sh", "-c", "git config branch.main.remote '" + ext +
                                               "' && git config branch.main.pushRemote '" + ext +
                                               "' && git config branch.main.merge refs/heads/main && "
                                               "git config user.name bob"});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_EQ(RealValue("branch.main.remote"), "") << RealConfig();
  EXPECT_EQ(RealValue("branch.main.pushRemote"), "") << RealConfig();
  EXPECT_EQ(RealValue("user.name"), "bob\n") << RealConfig();
  EXPECT_NE(outcome.err.find("branch.main.remote (line"), std::string::npos) << outcome.err;
  HostGit(workspace_.path(), {"-c", "protocol.ext.allow=always", "fetch"});
  HostGit(workspace_.path(), {"-c", "protocol.ext.allow=always", "push"});
  EXPECT_FALSE(Exists(canary_)) << "the branch's remote the run set ran on the host";
}

// A line corral's reader would take for a key but git refuses (a bare key
// followed by a comment) never lands: git would refuse the whole config, and
// every host git command in the repository would fail.
TEST_F(GitConfigWrite, ALineGitRefusesNeverLands) {
  MakeRepo();
  std::string before = RealConfig();
  Outcome outcome = RunIn({}, {"sh", "-c", "printf '[user]\\n\\tname # bob\\n' >> \"$(readlink .git/config)\""});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_EQ(RealConfig(), before);
  Outcome list = Execute({"/usr/bin/git", "-C", workspace_.path(), "config", "--list"});
  EXPECT_EQ(list.exit_code, 0) << list.Describe();
  EXPECT_NE(outcome.err.find("cannot be read exactly as git would"), std::string::npos) << outcome.err;
}

// A copy of almost 1 MiB holding 36000 keys lands without making corral
// hang after the run.
TEST_F(GitConfigWrite, ACopyWithVeryManyKeysDoesNotHangTheLanding) {
  MakeRepo();
  SpawnOptions options;
  options.timeout = 60s;  // quadratic, it took minutes
  Outcome outcome = RunIn({}, {"sh", "-c", "awk 'BEGIN { for (i = 0; i < 36000; i++) printf \"[remote \\\"r%d\\\"]\\n"
                                           "\\turl = u\\n\", i }' >> \"$(readlink .git/config)\""},
                          options);
  EXPECT_FALSE(outcome.timed_out) << "the landing hung";
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_EQ(RealValue("remote.r35999.url"), "u\n") << outcome.err;
}

// What the command leaves in its copy's directory (files, a directory tree,
// a symlink, a FIFO, a name with a newline, git's own lock) is removed after
// the run without following anything, and the real config gets its key.
TEST_F(GitConfigWrite, WhatTheCommandLeavesBesideItsCopyIsRemoved) {
  MakeRepo();
  outside_.Mkdir("victim");
  WriteFile(outside_ / "victim/keep", "keep\n");
  std::string script =
      "git config user.name bob && d=$(dirname \"$(readlink .git/config)\") && touch \"$d/junk\" \"$d/config.lock\" "
      "\"$d/$(printf 'new\\nline')\" && mkdir -p \"$d/a/b\" && touch \"$d/a/b/c\" && ln -s " +
      outside_ / "victim" + " \"$d/link\" && mkfifo \"$d/fifo\" && chmod 0 \"$d/a/b\" && head -c 100000 /dev/zero > "
                            "\"$d/big\" && chmod 0 \"$d\"";
  Outcome outcome = RunIn({}, {"sh", "-c", script});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_EQ(RealValue("user.name"), "bob\n") << RealConfig();
  EXPECT_FALSE(StageLeft()) << "the copy's directory kept what the command left";
  EXPECT_EQ(ReadFile(outside_ / "victim/keep").value_or(""), "keep\n");
}

// A copy the command replaced by a symlink (to a config of its own that
// names a program), a directory or a FIFO is removed, not kept in the
// quarantine: `corral quarantine restore --overwrite` would otherwise put the
// symlink where the real config was, and the next host git would read the
// command's file through it.
TEST_F(GitConfigWrite, ACopyThatIsNotAFileIsNotKeptForRestore) {
  MakeRepo();
  std::string before = RealConfig();
  std::string script = "printf '[core]\\n\\tfsmonitor = \"touch " + canary_ +
                       "; false\"\\n' > planted.cfg && c=$(readlink .git/config) && rm \"$c\" && ln -s " +
                       workspace_ / "planted.cfg" + " \"$c\"";
  Outcome outcome = RunIn({}, {"sh", "-c", script});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_NE(outcome.err.find("cannot be read (it is a symlink): nothing of it landed"), std::string::npos)
      << outcome.err;
  Outcome listed = Corral({"quarantine", "list"});
  EXPECT_EQ(listed.out.find(".git/config"), std::string::npos) << listed.Describe();
  std::vector<nlohmann::json> records = AuditEvents("git_config");
  ASSERT_EQ(records.size(), 1u) << outcome.Describe();
  EXPECT_FALSE(records[0].contains("moved_to")) << records[0].dump();
  std::vector<nlohmann::json> spawned = AuditEvents("spawned");
  ASSERT_FALSE(spawned.empty());
  Corral({"quarantine", "restore", "--overwrite", spawned.front().value("run", ""), workspace_ / ".git/config"});
  EXPECT_EQ(RealConfig(), before);
  HostGit(workspace_.path(), {"status"});
  EXPECT_FALSE(Exists(canary_)) << "the planted config ran on the host through a restored symlink";
  EXPECT_FALSE(StageLeft());
}

// What makes the repository what it is (its format version, its object
// format, bare or not) is on the safe list for a repository the run creates,
// but changing it in an existing one only breaks the user's repository: a
// host git refuses it afterwards. It never lands; the safe key beside it
// does.
TEST_F(GitConfigWrite, WhatTheRepositoryIsDoesNotChange) {
  MakeRepo();
  Outcome outcome = RunIn({}, {"sh", "-c", "git config user.name bob && git config core.bare true && "
                                           "git config core.repositoryFormatVersion 1 && "
                                           "git config extensions.objectFormat sha256"});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_EQ(RealValue("user.name"), "bob\n") << RealConfig();
  EXPECT_EQ(RealValue("core.bare"), "false\n") << RealConfig();
  EXPECT_EQ(RealValue("core.repositoryformatversion"), "0\n") << RealConfig();
  EXPECT_EQ(RealValue("extensions.objectformat"), "") << RealConfig();
  Outcome status = HostGit(workspace_.path(), {"status", "--short"});
  EXPECT_EQ(status.exit_code, 0) << status.Describe();
  EXPECT_NE(outcome.err.find("core.repositoryformatversion (line"), std::string::npos) << outcome.err;
  EXPECT_NE(outcome.err.find("core.bare (line"), std::string::npos) << outcome.err;
}

// A `config.lock` the command leaves in the real gitdir (it may write
// there: objects and refs live beside the config) keeps the landing out:
// nothing lands, its bytes are never the config, and the line says corral
// did not make it.
TEST_F(GitConfigWrite, ALockTheCommandLeftLandsNothing) {
  MakeRepo();
  std::string before = RealConfig();
  Outcome outcome = RunIn({}, {"sh", "-c", "printf '[core]\\n\\tfsmonitor = x\\n' > .git/config.lock && "
                                           "git config user.name bob 2>&1; true"});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_EQ(RealConfig(), before);
  EXPECT_NE(outcome.err.find(workspace_ / ".git/config.lock stayed there for 2 seconds (corral did not make it"),
            std::string::npos)
      << outcome.err;
  EXPECT_FALSE(StageLeft());
}

// The real config is written in place after the run, and the command can
// fill the disk it is on: here a small tmpfs (in a user and mount namespace
// of the test's, where corral runs as that namespace's root) that the run
// leaves with room for the lock file's copy of the new text but not for the
// real config to grow as well. The landing reserves the real config's blocks
// first, so nothing lands, and no part of the new text and no config.lock is
// left (git_config_no_reserve: the config was cut at 4096 bytes, the lock
// kept). Judged after the run, in the same namespaces, from outside corral.
TEST_F(GitConfigWrite, AFullDiskNeverLeavesAPartOfTheNewConfig) {
  TempDir disk("corral-small-disk");
  const std::string script = R"sh(set -e
mount -t tmpfs -o size=256k tmpfs "$1"
cd "$1"; mkdir ws; cd ws
git init -q .
git config user.email t@t
git config branch.main.description "$(head -c 3700 /dev/zero | tr '\0' x)"
cp .git/config ../before
"$2" run -- sh -c 'git config user.name "$(head -c 500 /dev/zero | tr "\0" y)"; free=$(stat -f -c %a .); dd if=/dev/zero of=fill bs=4096 count=$((free - 2)) 2>/dev/null' || true
if cmp -s .git/config ../before; then echo config=unchanged; else echo config=changed; fi
if [ -e .git/config.lock ]; then echo lock=left; fi
git config --file .git/config --get user.name >/dev/null && echo landed || true
)sh";
  Outcome outcome = Execute({"/usr/bin/unshare", "--user", "--map-root-user", "--mount", "sh", "-c", script, "sh",
                             disk.path(), CorralBin()},
                            Defaults({}));
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_NE(outcome.out.find("config=unchanged"), std::string::npos) << outcome.Describe();
  EXPECT_EQ(outcome.out.find("lock=left"), std::string::npos) << outcome.Describe();
  EXPECT_NE(outcome.err.find("nothing landed"), std::string::npos) << outcome.Describe();
}

TEST_F(GitConfigWrite, ExplainSaysTheConfigIsStaged) {
  MakeRepo();
  Outcome explain = Corral({"explain", "--", "true"});
  EXPECT_NE(explain.out.find("staged file          " + workspace_ / ".git/config" +
                             " (the command writes a copy; only safe keys"),
            std::string::npos)
      << explain.out;
}

}  // namespace
}  // namespace corral_it
