#include "gate/dangerous_command.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace corral {
namespace {

struct Case {
  std::vector<std::string> argv;
  const char* category;  // nullptr: not dangerous
};

void ExpectTable(const std::vector<Case>& cases) {
  for (const Case& test : cases) {
    std::string shown;
    for (const std::string& arg : test.argv) shown += "[" + arg + "]";
    std::optional<CommandDanger> danger = ClassifyDangerousCommand(test.argv);
    if (test.category == nullptr) {
      EXPECT_FALSE(danger.has_value()) << shown << " -> " << (danger ? danger->category : "");
      EXPECT_FALSE(IsDangerousCommand(test.argv)) << shown;
    } else {
      ASSERT_TRUE(danger.has_value()) << shown;
      EXPECT_EQ(danger->category, test.category) << shown;
      EXPECT_FALSE(danger->reason.empty()) << shown;
      EXPECT_TRUE(IsDangerousCommand(test.argv)) << shown;
    }
  }
}

TEST(ApprovalClassifier, OrdinaryCommandsAreNotDangerous) {
  ExpectTable({
      {{"ls", "-la"}, nullptr},
      {{"cat", "README.md"}, nullptr},
      {{"make", "-j4", "test"}, nullptr},
      {{"rm", "build/out.o"}, nullptr},
      {{"git", "status"}, nullptr},
      {{"git", "-C", "sub", "log", "--oneline"}, nullptr},
      {{"git", "commit", "-m", "fix: thing"}, nullptr},
      {{"git", "reset", "HEAD~1"}, nullptr},
      {{"git", "config", "--get", "user.name"}, nullptr},
      {{"git", "branch", "-d", "merged"}, nullptr},
      {{"chmod", "644", "file"}, nullptr},
      {{"chmod", "-w", "file"}, nullptr},
      {{"npm", "install"}, nullptr},
      {{"npm", "test"}, nullptr},
      {{"cargo", "build", "--release"}, nullptr},
      {{"python3", "script.py"}, nullptr},
      {{"python3", "-m", "pytest", "-q"}, nullptr},
      {{"find", ".", "-name", "*.cc"}, nullptr},
      {{"find", ".", "-exec", "grep", "-l", "x", "{}", ";"}, nullptr},
      {{"timeout", "5", "make"}, nullptr},
      {{"env", "FOO=1", "make", "check"}, nullptr},
      {{"awk", "{print $1}", "file"}, nullptr},
      {{"bash", "-c", "ls -la"}, nullptr},
      {{"sh", "-c", "make && make test"}, nullptr},
      {{"bash", "-lc", "cd src; make"}, nullptr},
  });
}

TEST(ApprovalClassifier, TheDocumentedDangerousClasses) {
  ExpectTable({
      {{}, "empty-command"},
      {{""}, "empty-command"},
      {{"sudo", "ls"}, "privilege"},
      {{"su", "-c", "id"}, "privilege"},
      {{"rm", "-rf", "build"}, "rm-recursive-or-force"},
      {{"rm", "-r", "build"}, "rm-recursive-or-force"},
      {{"rm", "-f", "x"}, "rm-recursive-or-force"},
      {{"rm", "-vR", "x"}, "rm-recursive-or-force"},
      {{"/bin/rm", "--recursive", "x"}, "rm-recursive-or-force"},
      {{"rm", "--rec", "x"}, "rm-recursive-or-force"},
      {{"rm", "--no-preserve-root", "/"}, "rm-recursive-or-force"},
      {{"shred", "secret"}, "destroy-data"},
      {{"truncate", "-s", "0", "db.sqlite"}, "destroy-data"},
      {{"dd", "if=/dev/zero", "of=/dev/sda"}, "disk"},
      {{"mkfs.ext4", "/dev/sdb1"}, "disk"},
      {{"mkfs", "-t", "ext4", "/dev/sdb1"}, "disk"},
      {{"chmod", "-R", "777", "."}, "recursive-permissions"},
      {{"chown", "--recursive", "me", "."}, "recursive-permissions"},
      {{"chgrp", "-Rv", "staff", "."}, "recursive-permissions"},
      {{"curl", "https://example.com"}, "network-transfer"},
      {{"wget", "-qO-", "https://x"}, "network-transfer"},
      {{"nc", "-l", "4444"}, "network-transfer"},
      {{"ssh", "host", "id"}, "remote-access"},
      {{"scp", "f", "host:"}, "remote-access"},
      {{"rsync", "-a", "--delete", "a/", "b/"}, "remote-access"},
      {{"git", "push"}, "git-push"},
      {{"git", "push", "--force", "origin", "main"}, "git-push"},
      {{"git", "-C", "repo", "push"}, "git-push"},
      {{"git", "--git-dir", "x/.git", "push"}, "git-push"},
      {{"git", "reset", "--hard", "HEAD"}, "git-reset-hard"},
      {{"git", "clean", "-fdx"}, "git-clean"},
      {{"git", "branch", "-D", "topic"}, "git-branch-force-delete"},
      {{"git", "branch", "--delete", "--force", "topic"}, "git-branch-force-delete"},
      {{"git", "stash", "clear"}, "git-stash-drop"},
      {{"git", "filter-branch", "--all"}, "git-rewrite-history"},
      {{"git", "-c", "core.pager=sh -c id", "log"}, "git-config-override"},
      {{"git", "-ccore.sshCommand=x", "fetch"}, "git-config-override"},
      {{"git", "--exec-path=/tmp/evil", "status"}, "git-config-override"},
      {{"git", "config", "core.hooksPath", "/tmp/hooks"}, "git-config-override"},
      {{"git", "submodule", "foreach", "rm -rf ."}, "unparsed-shell"},
      {{"npm", "publish"}, "package-publish"},
      {{"npm", "--registry", "x", "publish"}, "package-publish"},
      {{"cargo", "publish"}, "package-publish"},
      {{"cargo", "+nightly", "publish"}, "package-publish"},
      {{"twine", "upload", "dist/*"}, "package-publish"},
      {{"python3", "-m", "twine", "upload", "dist/x"}, "package-publish"},
      {{"docker", "push", "img"}, "package-publish"},
      {{"gem", "push", "x.gem"}, "package-publish"},
      {{"uv", "publish"}, "package-publish"},
      {{"yarn", "npm", "publish"}, "package-publish"},
      {{"systemctl", "stop", "sshd"}, "system"},
      {{"pkill", "-9", "node"}, "system"},
      {{"crontab", "-r"}, "system"},
      {{"find", ".", "-delete"}, "find-delete"},
      {{"find", ".", "-exec", "rm", "-rf", "{}", "+"}, "rm-recursive-or-force"},
      {{"find", ".", "-name", "*.o", "-exec", "rm", "{}", ";"}, "bulk-delete"},
      {{"find", ".", "-execdir", "/bin/unlink", "{}", ";"}, "bulk-delete"},
      {{"find", ".", "-exec", "shred", "{}", "+"}, "destroy-data"},
      {{"python3", "-c", "import os"}, "inline-code"},
      {{"python", "-Ic", "x"}, "inline-code"},
      {{"python3", "-W", "ignore", "-c", "x"}, "inline-code"},
      {{"python3", "-"}, "inline-code"},
      {{"perl", "-ne", "print"}, "inline-code"},
      {{"node", "-e", "1"}, "inline-code"},
      {{"node", "--eval=1"}, "inline-code"},
      {{"ruby", "-e", "1"}, "inline-code"},
      {{"php", "-r", "1;"}, "inline-code"},
      {{"awk", "BEGIN{system(\"id\")}"}, "inline-code"},
      {{"eval", "x"}, "unparsed-shell"},
      {{"source", "env.sh"}, "unparsed-shell"},
      {{"watch", "make"}, "unparsed-shell"},
      {{"env", "-S", "rm -rf /"}, "unparsed-shell"},
  });
}

// Commands that throw away work or data without rm: git discarding the
// working tree, archivers deleting their inputs, /dev/null as a file.
TEST(ApprovalClassifier, DiscardingWorkAndDataIsDangerous) {
  ExpectTable({
      {{"git", "checkout", "--", "."}, "git-discard-changes"},
      {{"git", "checkout", "--", "src/main.cc"}, "git-discard-changes"},
      {{"git", "checkout", "."}, "git-discard-changes"},
      {{"git", "checkout", "HEAD", "--", "a.c", "b.c"}, "git-discard-changes"},
      {{"git", "checkout", "main", "./src"}, "git-discard-changes"},
      {{"git", "checkout", "*.cc"}, "git-discard-changes"},
      {{"git", "checkout", ":/"}, "git-discard-changes"},
      {{"git", "checkout", "--theirs", "conflicted.c"}, "git-discard-changes"},
      {{"git", "checkout", "--pathspec-from-file=list"}, "git-discard-changes"},
      {{"git", "checkout", "-f", "main"}, "git-discard-changes"},
      {{"git", "checkout", "-qf", "main"}, "git-discard-changes"},
      {{"git", "-C", "repo", "checkout", "--", "."}, "git-discard-changes"},
      {{"git", "restore", "."}, "git-discard-changes"},
      {{"git", "restore", "src/main.cc"}, "git-discard-changes"},
      {{"git", "restore", "--source", "HEAD~2", "f"}, "git-discard-changes"},
      {{"git", "restore", "--staged", "--worktree", "f"}, "git-discard-changes"},
      {{"git", "restore", "-SW", "f"}, "git-discard-changes"},
      {{"git", "switch", "--discard-changes", "main"}, "git-discard-changes"},
      {{"git", "switch", "-f", "main"}, "git-discard-changes"},
      {{"git", "update-ref", "-d", "refs/heads/topic"}, "git-delete-ref"},
      {{"git", "update-ref", "--stdin"}, "git-delete-ref"},
      {{"git", "reset", "--hard"}, "git-reset-hard"},
      {{"git", "-C", "repo", "reset", "-q", "--hard", "origin/main"}, "git-reset-hard"},
      {{"git", "clean", "-f"}, "git-clean"},
      {{"git", "clean", "-ffdx"}, "git-clean"},
      {{"git", "stash", "drop"}, "git-stash-drop"},
      {{"git", "stash", "drop", "stash@{1}"}, "git-stash-drop"},
      {{"tar", "--remove-files", "-czf", "a.tgz", "src"}, "bulk-delete"},
      {{"tar", "-czf", "a.tgz", "src", "--remove-files"}, "bulk-delete"},
      {{"tar", "cf", "a.tar", "--remove", "logs"}, "bulk-delete"},
      {{"zip", "-rm", "a.zip", "dir"}, "bulk-delete"},
      {{"zip", "--move", "a.zip", "f"}, "bulk-delete"},
      {{"7z", "a", "-sdel", "a.7z", "dir"}, "bulk-delete"},
      {{"mv", "notes.txt", "/dev/null"}, "destroy-data"},
      {{"mv", "-f", "data", "/dev/null"}, "destroy-data"},
      {{"mv", "-t", "/dev/null", "f"}, "destroy-data"},
      {{"mv", "--target-directory=/dev/null", "f"}, "destroy-data"},
      {{"mv", "/dev/null", "f"}, "destroy-data"},
      {{"cp", "/dev/null", "db.sqlite"}, "destroy-data"},
      {{"cp", "-f", "/dev/null", "db.sqlite"}, "destroy-data"},
      {{"truncate", "--size=0", "log"}, "destroy-data"},
      {{"dd", "of=disk.img"}, "disk"},
      {{"find", ".", "-name", "*.o", "-delete"}, "find-delete"},
      {{"env", "tar", "--remove-files", "-cf", "a.tar", "x"}, "bulk-delete"},
      {{"sh", "-c", "make && git checkout -- ."}, "git-discard-changes"},
      // Shell redirections are not parsed at all: they already ask.
      {{"sh", "-c", "cat /dev/null > f"}, "unparsed-shell"},
      {{"bash", "-c", ": > f"}, "unparsed-shell"},
  });
}

// The near misses of the rules above stay quiet.
TEST(ApprovalClassifier, DiscardRulesKeepFalsePositivesLow) {
  ExpectTable({
      {{"git", "checkout", "main"}, nullptr},
      {{"git", "checkout", "feature/login"}, nullptr},
      {{"git", "checkout", "-b", "topic"}, nullptr},
      {{"git", "checkout", "-bfix", "origin/fix"}, nullptr},  // -b's value, not -f
      {{"git", "checkout", "-B", "fix", "origin/fix"}, nullptr},
      {{"git", "checkout", "-"}, nullptr},
      {{"git", "checkout", "HEAD~1"}, nullptr},
      {{"git", "checkout", "v1.2.3"}, nullptr},
      {{"git", "checkout", "--"}, nullptr},
      {{"git", "switch", "main"}, nullptr},
      {{"git", "switch", "-c", "fix"}, nullptr},
      {{"git", "switch", "-cfix"}, nullptr},
      {{"git", "restore", "--staged", "f"}, nullptr},
      {{"git", "restore", "-S", "."}, nullptr},
      {{"git", "restore", "--staged", "--source=HEAD~1", "--", "f"}, nullptr},
      {{"git", "restore", "-s", "WIP", "--staged", "f"}, nullptr},  // -s's value, not -W
      {{"git", "update-ref", "refs/heads/topic", "HEAD"}, nullptr},
      {{"git", "update-ref", "-m", "-d", "refs/heads/x", "HEAD"}, nullptr},  // -m's value
      {{"git", "stash"}, nullptr},
      {{"git", "stash", "pop"}, nullptr},
      {{"git", "stash", "list"}, nullptr},
      {{"tar", "-czf", "a.tgz", "src"}, nullptr},
      {{"tar", "xf", "a.tar"}, nullptr},
      {{"tar", "--recursion", "-cf", "a.tar", "src"}, nullptr},
      {{"zip", "-r", "a.zip", "dir"}, nullptr},
      {{"7z", "x", "a.7z"}, nullptr},
      {{"mv", "a", "b"}, nullptr},
      {{"cp", "a", "b"}, nullptr},
      {{"cp", "a", "/dev/null"}, nullptr},  // reads a, writes nowhere
      {{"cat", "/dev/null"}, nullptr},
      {{"npm", "ci"}, nullptr},
      {{"pip", "install", "-r", "requirements.txt"}, nullptr},
  });
}

TEST(ApprovalClassifier, ShellsAreSeenThroughOrCountAsDangerous) {
  ExpectTable({
      {{"bash", "-c", "rm -rf build"}, "rm-recursive-or-force"},
      {{"sh", "-c", "make; git push"}, "git-push"},
      {{"sh", "-ec", "ls && curl x"}, "network-transfer"},
      {{"bash", "-c", "ls | sudo tee x"}, "privilege"},
      {{"bash", "-c", "FOO=1 rm -rf x"}, "rm-recursive-or-force"},
      {{"bash", "-c", "if true; then rm -rf x; fi"}, "rm-recursive-or-force"},
      {{"bash", "-c", "exec git push"}, "git-push"},
      // Anything the splitter cannot read is dangerous.
      {{"bash", "-c", "echo \"hi\""}, "unparsed-shell"},
      {{"bash", "-c", "echo $HOME"}, "unparsed-shell"},
      {{"bash", "-c", "ls > out"}, "unparsed-shell"},
      {{"bash", "-c", "$(echo rm) -rf /"}, "unparsed-shell"},
      {{"bash", "-c", "ls `id`"}, "unparsed-shell"},
      {{"bash", "-c", "r\\m -rf x"}, "unparsed-shell"},
      {{"bash", "-c", "ls *"}, "unparsed-shell"},
      {{"bash", "-c", ":(){ :|:& };:"}, "unparsed-shell"},
      {{"bash", "-c", "ls\x1b[2K"}, "unparsed-shell"},
      {{"bash", "-c"}, "unparsed-shell"},
      {{"bash", "--rcfile", "x", "-c", "ls"}, "unparsed-shell"},
      {{"zsh", "-o", "errexit", "-c", "git push"}, "git-push"},
      {{"bash", "script.sh"}, "shell-script"},
      {{"bash"}, "shell-script"},
      {{"sh", "-s"}, "shell-script"},
      {{"/usr/bin/dash", "-c", "ls"}, nullptr},
  });
}

TEST(ApprovalClassifier, WrappersAreSeenThrough) {
  ExpectTable({
      {{"env", "FOO=1", "rm", "-rf", "x"}, "rm-recursive-or-force"},
      {{"timeout", "-s", "KILL", "5", "git", "push"}, "git-push"},
      {{"nice", "-n", "10", "curl", "x"}, "network-transfer"},
      {{"nohup", "sh", "-c", "ls; dd if=x of=y"}, "disk"},
      {{"xargs", "rm", "-f"}, "rm-recursive-or-force"},
      {{"xargs", "rm"}, "bulk-delete"},
      {{"xargs", "-0", "-n1", "/usr/bin/rm"}, "bulk-delete"},
      {{"xargs", "truncate", "-s0"}, "destroy-data"},
      {{"xargs", "grep", "-l", "rm"}, "bulk-delete"},  // errs towards asking
      {{"env", "env", "env", "sudo", "id"}, "privilege"},
      {{"busybox", "rm", "-rf", "/"}, "rm-recursive-or-force"},
      {{"flock", "/tmp/l", "-c", "git push"}, "git-push"},
      {{"command", "ls"}, nullptr},
  });
}

TEST(ApprovalClassifier, AdversarialInputsStayBoundedAndDangerous) {
  std::vector<std::string> deep;
  for (int i = 0; i < 2000; ++i) deep.push_back(i % 2 ? "find" : "env");
  EXPECT_TRUE(IsDangerousCommand(deep));  // too many arguments
  std::vector<std::string> nested;
  for (int i = 0; i < 200; ++i) {
    nested.insert(nested.end(), {"env", "find", ".", "-exec"});
  }
  nested.push_back("ls");
  std::optional<CommandDanger> danger = ClassifyDangerousCommand(nested);
  ASSERT_TRUE(danger.has_value());
  EXPECT_EQ(danger->category, "too-complex");
  EXPECT_EQ(ClassifyDangerousCommand({"bash", "-c", std::string(70000, 'a')})->category, "too-complex");
}

}  // namespace
}  // namespace corral
