#include "gate/dangerous_command.h"

#include <algorithm>
#include <initializer_list>
#include <string_view>

namespace corral {
namespace {

constexpr int kMaxDepth = 6;
// Classify calls one command may cost before it counts as too complex: the
// wrapper and find -exec rules try many sub-commands, and an adversarial argv
// must not turn that into a denial of service.
constexpr int kMaxSteps = 4096;
constexpr size_t kMaxArguments = 1024;
constexpr size_t kMaxShellString = 64 * 1024;

using Args = std::span<const std::string>;
using Finding = std::optional<CommandDanger>;

Finding Danger(std::string category, std::string reason) {
  return CommandDanger{std::move(category), std::move(reason)};
}

bool OneOf(std::string_view word, std::initializer_list<std::string_view> set) {
  return std::find(set.begin(), set.end(), word) != set.end();
}

std::string_view Basename(std::string_view program) {
  size_t slash = program.rfind('/');
  return slash == std::string_view::npos ? program : program.substr(slash + 1);
}

bool IsShortCluster(std::string_view arg) { return arg.size() > 1 && arg[0] == '-' && arg[1] != '-'; }

// A long option `--name[=value]` whose name is a non-empty prefix of `full`
// (getopt_long accepts unambiguous abbreviations).
bool IsLongOption(std::string_view arg, std::string_view full) {
  if (arg.size() < 3 || arg.substr(0, 2) != "--") return false;
  std::string_view name = arg.substr(2, arg.find('=') == std::string_view::npos ? std::string_view::npos : arg.find('=') - 2);
  return !name.empty() && full.substr(0, name.size()) == name;
}

// Options before "--": any short cluster holding one of `letters`, or a long
// option abbreviating one of `longs`. A letter in `value_letters` takes a
// value: the rest of its cluster (or the next argument) is that value.
bool HasOption(Args args, std::string_view letters, std::initializer_list<std::string_view> longs,
               std::string_view value_letters = {}) {
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (arg == "--") return false;
    if (IsShortCluster(arg)) {
      for (size_t j = 1; j < arg.size(); ++j) {
        if (letters.find(arg[j]) != std::string_view::npos) return true;
        if (value_letters.find(arg[j]) != std::string_view::npos) {
          if (j + 1 == arg.size()) ++i;
          break;
        }
      }
      continue;
    }
    for (std::string_view full : longs) {
      if (IsLongOption(arg, full)) return true;
    }
  }
  return false;
}

bool Contains(Args args, std::string_view word) { return std::find(args.begin(), args.end(), word) != args.end(); }

// The first argument that is not an option (or "+toolchain").
std::string_view FirstOperand(Args args) {
  for (const std::string& arg : args) {
    if (arg.empty() || (arg[0] != '-' && arg[0] != '+')) return arg;
  }
  return {};
}

bool IsAssignment(std::string_view word) {
  size_t equals = word.find('=');
  if (equals == 0 || equals == std::string_view::npos) return false;
  for (size_t i = 0; i < equals; ++i) {
    char c = word[i];
    bool ok = c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

// Where a classification is: its nesting depth, and the steps spent so far
// (shared by every nested call of one top-level classification).
struct Walk {
  int depth = 0;
  int* steps = nullptr;
  Walk Deeper() const { return {depth + 1, steps}; }
};

Finding Classify(Args argv, Walk walk);

Finding Unparsed(std::string_view what) {
  return Danger("unparsed-shell", std::string(what) + " runs shell code that cannot be checked before it runs");
}

// A shell -c string: split into simple commands when it has no quoting,
// substitution, redirection, globbing or escapes; otherwise dangerous.
Finding ClassifyShellString(std::string_view text, Walk walk) {
  if (text.size() > kMaxShellString) return Danger("too-complex", "a shell command string too long to check");
  for (char c : text) {
    bool control = (static_cast<unsigned char>(c) < 0x20 && c != ' ' && c != '\t' && c != '\n') || c == 0x7f;
    if (control || std::string_view("$`()<>{}\\'\"*?[]~!#").find(c) != std::string_view::npos) {
      return Unparsed("a shell string with quoting, substitution, redirection or globbing");
    }
  }
  std::vector<std::string> words;
  auto flush = [&]() -> Finding {
    size_t start = 0;
    // Leading assignments and reserved words do not name the program.
    while (start < words.size() &&
           (IsAssignment(words[start]) ||
            OneOf(words[start], {"if", "then", "else", "elif", "fi", "do", "done", "while", "until", "for", "in",
                                 "case", "esac", "time", "function", "select", "coproc"}))) {
      ++start;
    }
    Finding finding;
    if (start < words.size()) finding = Classify(Args(words).subspan(start), walk.Deeper());
    words.clear();
    return finding;
  };
  std::string word;
  for (size_t i = 0; i <= text.size(); ++i) {
    char c = i < text.size() ? text[i] : ';';
    bool separator = c == ';' || c == '&' || c == '|' || c == '\n';
    if (separator || c == ' ' || c == '\t') {
      if (!word.empty()) words.push_back(std::move(word));
      word.clear();
      if (separator) {
        if (Finding finding = flush()) return finding;
      }
      continue;
    }
    word += c;
  }
  return std::nullopt;
}

Finding ClassifyShell(std::string_view shell, Args args, Walk walk) {
  bool has_c = false;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (arg == "--" || arg == "-") {
      if (!has_c) return Danger("shell-script", std::string(shell) + " reading commands from a file or its input");
      return i + 1 < args.size() ? ClassifyShellString(args[i + 1], walk) : Unparsed(shell);
    }
    if (arg.substr(0, 2) == "--") {
      if (IsLongOption(arg, "rcfile") || IsLongOption(arg, "init-file")) return Unparsed(shell);
      if (arg == "--command") has_c = true;  // fish, zsh spell it out
      continue;
    }
    if (arg == "-o" || arg == "+o" || arg == "-O" || arg == "+O") {
      ++i;
      continue;
    }
    if (!arg.empty() && (arg[0] == '-' || arg[0] == '+') && arg.size() > 1) {
      if (arg[0] == '-' && arg.find('c', 1) != std::string_view::npos) has_c = true;
      continue;
    }
    if (!has_c) return Danger("shell-script", std::string(shell) + " running the script " + std::string(arg));
    return ClassifyShellString(arg, walk);
  }
  if (has_c) return Unparsed(shell);
  return Danger("shell-script", std::string(shell) + " reading commands from its input");
}

// An operand that can only be a pathspec: check-ref-format forbids a leading
// dot, `*`, `?`, `[` and a leading `:`, so `git checkout .` names paths and
// `git checkout feature/x` names a branch.
bool IsPathspec(std::string_view arg) {
  return arg == "." || arg == ".." || arg.substr(0, 2) == "./" || arg.substr(0, 3) == "../" ||
         (!arg.empty() && arg[0] == ':') || arg.find_first_of("*?[") != std::string_view::npos;
}

// True when `args` name paths: an operand after "--", a pathspec-shaped
// operand before it, or --pathspec-from-file.
bool NamesPaths(Args args) {
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (arg == "--") return i + 1 < args.size();
    if (IsLongOption(arg, "pathspec-from-file")) return true;
    if (!arg.empty() && arg[0] != '-' && IsPathspec(arg)) return true;
  }
  return false;
}

Finding DiscardChanges(std::string_view what) {
  return Danger("git-discard-changes", std::string(what) + " overwrites uncommitted changes in the working tree");
}

// checkout and restore with paths, and a forced checkout or switch, replace
// working-tree files with their committed or staged versions: edits that
// were never committed are gone. Switching branches stays safe (git refuses
// when it would lose changes), and so does restore --staged alone (it only
// resets the index).
Finding ClassifyGitDiscard(std::string_view sub, Args rest) {
  if (sub == "checkout") {
    if (HasOption(rest, "f", {"force"}, "bB")) return DiscardChanges("git checkout --force");
    if (HasOption(rest, "", {"ours", "theirs"}) || NamesPaths(rest)) return DiscardChanges("git checkout with paths");
  }
  if (sub == "switch" && HasOption(rest, "f", {"force", "discard-changes"}, "cC")) {
    return DiscardChanges("git switch --discard-changes");
  }
  if (sub == "restore" && (!HasOption(rest, "S", {"staged"}, "s") || HasOption(rest, "W", {"worktree"}, "s"))) {
    return DiscardChanges("git restore (without --staged alone)");
  }
  return std::nullopt;
}

Finding ClassifyGit(Args args) {
  size_t i = 0;
  for (; i < args.size() && !args[i].empty() && args[i][0] == '-'; ++i) {
    std::string_view arg = args[i];
    if (arg.substr(0, 2) == "-c" || IsLongOption(arg, "config-env") || arg.substr(0, 12) == "--exec-path=") {
      return Danger("git-config-override", "git -c, --config-env and --exec-path can name programs git then runs");
    }
    if (OneOf(arg, {"-C", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--list-cmds"})) ++i;
  }
  if (i >= args.size()) return std::nullopt;
  std::string_view sub = args[i];
  Args rest = args.subspan(i + 1);
  if (sub == "push") return Danger("git-push", "git push publishes commits to a remote");
  if (sub == "reset" && Contains(rest, "--hard")) {
    return Danger("git-reset-hard", "git reset --hard discards uncommitted work");
  }
  if (sub == "clean") return Danger("git-clean", "git clean deletes untracked files");
  if (sub == "branch" && (HasOption(rest, "D", {}) || (HasOption(rest, "d", {"delete"}) && HasOption(rest, "f", {"force"})))) {
    return Danger("git-branch-force-delete", "git branch -D deletes a branch even if it is not merged");
  }
  if (sub == "stash" && !rest.empty() && OneOf(rest[0], {"drop", "clear"})) {
    return Danger("git-stash-drop", "git stash drop/clear discards stashed work");
  }
  if (Finding finding = ClassifyGitDiscard(sub, rest)) return finding;
  if (sub == "update-ref" && HasOption(rest, "d", {"stdin"}, "m")) {
    return Danger("git-delete-ref", "git update-ref -d (or --stdin) deletes refs without the checks git branch -d makes");
  }
  if (OneOf(sub, {"filter-branch", "filter-repo"})) {
    return Danger("git-rewrite-history", "git " + std::string(sub) + " rewrites history");
  }
  if (sub == "config" && !HasOption(rest, "l", {"get", "get-all", "get-regexp", "get-urlmatch", "list"})) {
    return Danger("git-config-override", "git config can name programs git later runs (core.pager, hooks, aliases)");
  }
  if (sub == "submodule" && Contains(rest, "foreach")) return Unparsed("git submodule foreach");
  return std::nullopt;
}

struct Publisher {
  std::string_view program;
  std::initializer_list<std::string_view> subcommands;
};

Finding ClassifyPublish(std::string_view program, Args args) {
  static const Publisher kPublishers[] = {
      {"npm", {"publish", "unpublish"}}, {"pnpm", {"publish", "unpublish"}}, {"bun", {"publish"}},
      {"yarn", {"publish"}},             {"cargo", {"publish", "yank", "owner"}}, {"uv", {"publish"}},
      {"poetry", {"publish"}},           {"flit", {"publish"}},          {"hatch", {"publish"}},
      {"twine", {"upload"}},             {"gem", {"push", "yank"}},      {"docker", {"push"}},
      {"podman", {"push"}},              {"mvn", {"deploy"}},            {"gradle", {"publish"}},
  };
  // Any argument naming the subcommand counts, not just the first operand:
  // an option's value (npm --registry URL publish) must not hide it.
  for (const Publisher& publisher : kPublishers) {
    if (publisher.program != program) continue;
    for (std::string_view sub : publisher.subcommands) {
      if (Contains(args, sub)) {
        return Danger("package-publish", std::string(program) + " " + std::string(sub) + " publishes to a registry");
      }
    }
  }
  return std::nullopt;
}

Finding InlineCode(std::string_view program) {
  return Danger("inline-code", std::string(program) + " running inline code that cannot be checked before it runs");
}

Finding ClassifyInterpreter(std::string_view program, Args args, Walk walk, bool* handled) {
  *handled = true;
  if (program.substr(0, 6) == "python") {
    for (size_t i = 0; i < args.size(); ++i) {
      std::string_view arg = args[i];
      if (arg == "-") return InlineCode(program);  // the program comes from stdin
      if (arg == "-W" || arg == "-X") {
        ++i;
        continue;
      }
      if (!IsShortCluster(arg)) break;
      if (arg.find('c') != std::string_view::npos) return InlineCode(program);
      // -m module: the module is the program (python -m twine upload).
      if (arg.back() == 'm') return i + 1 < args.size() ? Classify(args.subspan(i + 1), walk.Deeper()) : std::nullopt;
    }
    return std::nullopt;
  }
  if (OneOf(program, {"perl", "ruby", "lua", "Rscript", "osascript"})) {
    for (const std::string& arg : args) {
      if (IsShortCluster(arg) && arg.find_first_of("eE", 1) != std::string::npos) return InlineCode(program);
    }
    return std::nullopt;
  }
  if (OneOf(program, {"node", "nodejs", "deno"})) {
    if (program == "deno" && FirstOperand(args) == "eval") return InlineCode(program);
    if (HasOption(args, "ep", {"eval", "print"})) return InlineCode(program);
    return std::nullopt;
  }
  if (program == "php") return HasOption(args, "r", {}) ? InlineCode(program) : std::nullopt;
  if (OneOf(program, {"awk", "gawk", "mawk", "nawk", "busybox-awk"})) {
    for (const std::string& arg : args) {
      if (arg.find("system") != std::string::npos || arg.find("getline") != std::string::npos ||
          arg.find('|') != std::string::npos || arg.find('>') != std::string::npos) {
        return InlineCode(program);
      }
    }
    return std::nullopt;
  }
  *handled = false;
  return std::nullopt;
}

bool IsWrapper(std::string_view program) {
  return OneOf(program, {"env", "nice", "nohup", "timeout", "time", "command", "exec", "builtin", "stdbuf", "ionice",
                         "setsid", "xargs", "busybox", "chrt", "taskset", "unbuffer", "strace", "ltrace", "chronic",
                         "nsenter", "unshare", "chroot", "flock"});
}

bool IsShell(std::string_view program) {
  return OneOf(program, {"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh"});
}

// rm, unlink and friends run once per file a list names: harmless alone,
// but under xargs or find -exec they delete whatever the list holds.
bool IsDeleter(std::string_view program) { return OneOf(Basename(program), {"rm", "unlink", "rmdir", "shred", "truncate"}); }

Finding BulkDelete(std::string_view how) {
  return Danger("bulk-delete", std::string(how) + " deletes or destroys every file the list names");
}

// Archivers that delete what they archive: tar --remove-files, zip -m,
// 7z -sdel. Extracting or creating an archive alone stays safe.
Finding ClassifyArchiver(std::string_view program, Args args) {
  bool deletes = (program == "tar" && HasOption(args, "", {"remove-files"})) ||
                 (program == "zip" && HasOption(args, "m", {"move"})) ||
                 (OneOf(program, {"7z", "7za", "7zr", "7zz"}) && Contains(args, "-sdel"));
  if (!deletes) return std::nullopt;
  return Danger("bulk-delete", std::string(program) + " deletes every file it puts in the archive");
}

bool NamesDevNull(std::string_view arg) {
  return arg.size() >= 9 && arg.substr(arg.size() - 9) == "/dev/null";
}

// mv to or from /dev/null throws a file away; cp /dev/null FILE empties FILE.
// (cp FILE /dev/null only reads. `cat /dev/null > f` and `: > f` are shell
// redirections, which the shell-string rule already counts as unparsed.)
Finding ClassifyDevNull(std::string_view program, Args args) {
  if (program == "mv" && std::any_of(args.begin(), args.end(), [](const std::string& a) { return NamesDevNull(a); })) {
    return Danger("destroy-data", "mv with /dev/null throws the file away");
  }
  if (program == "cp" && !args.empty() &&
      std::any_of(args.begin(), args.end() - 1, [](const std::string& a) { return NamesDevNull(a); })) {
    return Danger("destroy-data", "cp /dev/null empties the file it copies onto");
  }
  return std::nullopt;
}

Finding ClassifyWrapper(std::string_view program, Args args, Walk walk) {
  if (program == "env" && HasOption(args, "S", {"split-string"})) return Unparsed("env -S");
  if (program == "flock") {
    for (size_t i = 0; i + 1 < args.size(); ++i) {
      if (args[i] == "-c" || IsLongOption(args[i], "command")) return ClassifyShellString(args[i + 1], walk);
    }
  }
  // Try every later argument as the wrapped command's start. Arguments that
  // are themselves wrappers are skipped: their suffixes are tried here anyway.
  for (size_t i = 0; i < args.size(); ++i) {
    if (IsWrapper(Basename(args[i]))) continue;
    if (Finding finding = Classify(args.subspan(i), walk.Deeper())) {
      finding->reason += " (run through " + std::string(program) + ")";
      return finding;
    }
  }
  if (program == "xargs" && std::any_of(args.begin(), args.end(), [](const std::string& arg) { return IsDeleter(arg); })) {
    return BulkDelete("xargs with rm, unlink, shred or truncate");
  }
  return std::nullopt;
}

Finding ClassifyFind(Args args, Walk walk) {
  if (Contains(args, "-delete")) return Danger("find-delete", "find -delete removes every file it matches");
  for (size_t i = 0; i + 1 < args.size(); ++i) {
    if (OneOf(args[i], {"-exec", "-execdir", "-ok", "-okdir"})) {
      size_t end = i + 1;
      while (end < args.size() && args[end] != ";" && args[end] != "+") ++end;
      if (Finding finding = Classify(args.subspan(i + 1, end - i - 1), walk.Deeper())) {
        finding->reason += " (run by find " + args[i] + ")";
        return finding;
      }
      if (i + 1 < end && IsDeleter(args[i + 1])) return BulkDelete("find " + args[i] + " " + args[i + 1]);
    }
  }
  return std::nullopt;
}

Finding Classify(Args argv, Walk walk) {
  if (walk.depth > kMaxDepth || ++*walk.steps > kMaxSteps) {
    return Danger("too-complex", "a command nested too deeply to check");
  }
  if (argv.size() > kMaxArguments) return Danger("too-complex", "a command with too many arguments to check");
  if (argv.empty() || argv[0].empty()) return Danger("empty-command", "an empty command cannot be checked");
  std::string_view program = Basename(argv[0]);
  Args args = argv.subspan(1);

  if (OneOf(program, {"sudo", "su", "doas", "pkexec", "runuser", "run0"})) {
    return Danger("privilege", std::string(program) + " runs a command with other privileges");
  }
  if (IsShell(program)) return ClassifyShell(program, args, walk);
  if (OneOf(program, {"eval", "source", "."})) return Unparsed(program);
  if (program == "watch") return Unparsed("watch");
  if (IsWrapper(program)) return ClassifyWrapper(program, args, walk);
  if (program == "rm" && HasOption(args, "rRf", {"recursive", "force", "no-preserve-root"})) {
    return Danger("rm-recursive-or-force", "rm -r/-f deletes whole trees without asking");
  }
  if (OneOf(program, {"shred", "truncate", "wipefs", "blkdiscard"})) {
    return Danger("destroy-data", std::string(program) + " destroys data beyond recovery");
  }
  if (Finding finding = ClassifyDevNull(program, args)) return finding;
  if (Finding finding = ClassifyArchiver(program, args)) return finding;
  if (program == "dd" || program.substr(0, 4) == "mkfs" ||
      OneOf(program, {"mke2fs", "mkswap", "fdisk", "sfdisk", "parted", "sgdisk", "losetup", "mount", "umount"})) {
    return Danger("disk", std::string(program) + " writes disks, partitions or mounts");
  }
  if (OneOf(program, {"chmod", "chown", "chgrp"}) && HasOption(args, "R", {"recursive"})) {
    return Danger("recursive-permissions", std::string(program) + " -R changes a whole tree's ownership or modes");
  }
  if (OneOf(program, {"curl", "wget", "aria2c", "nc", "ncat", "netcat", "socat", "telnet", "ftp"})) {
    return Danger("network-transfer", std::string(program) + " moves data to or from the network");
  }
  if (OneOf(program, {"ssh", "scp", "sftp", "rsync", "sshpass"})) {
    return Danger("remote-access", std::string(program) + " reaches or copies to other machines");
  }
  if (program == "git") return ClassifyGit(args);
  if (program == "find") return ClassifyFind(args, walk);
  if (OneOf(program, {"reboot", "shutdown", "halt", "poweroff", "systemctl", "service", "init", "telinit", "killall",
                      "pkill", "crontab", "iptables", "ip6tables", "nft", "insmod", "rmmod", "modprobe", "useradd",
                      "userdel", "usermod", "passwd", "chpasswd", "visudo"})) {
    return Danger("system", std::string(program) + " changes the system beyond the project");
  }
  bool handled = false;
  Finding interpreted = ClassifyInterpreter(program, args, walk, &handled);
  if (handled) return interpreted;
  return ClassifyPublish(program, args);
}

}  // namespace

std::optional<CommandDanger> ClassifyDangerousCommand(std::span<const std::string> argv) {
  int steps = 0;
  return Classify(argv, Walk{0, &steps});
}

bool IsDangerousCommand(std::span<const std::string> argv) { return ClassifyDangerousCommand(argv).has_value(); }

}  // namespace corral
