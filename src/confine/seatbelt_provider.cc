#include "confine/seatbelt_provider.h"

#include "confine/etc_view.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "confine/wrap_env.h"

namespace corral {
namespace {

// The macOS trees every program needs: the dynamic linker, its shared
// cache, the frameworks, the shells and the developer tools.
const std::vector<std::string> kSystemExecTrees = {
    "/System", "/usr", "/bin", "/sbin", "/Library/Apple", "/Library/Developer/CommandLineTools",
    "/opt/homebrew", "/private/var/select",
};
// Configuration programs read but never run.
const std::vector<std::string> kSystemReadTrees = {"/private/etc", "/private/var/db/timezone", "/Library/Preferences"};
// Directories (and the /etc, /tmp, /var symlinks) a path lookup passes through.
const std::vector<std::string> kTraversed = {"/", "/etc", "/private", "/private/var", "/tmp", "/var"};
const std::vector<std::string> kReadWriteDevices = {"/dev/null", "/dev/zero", "/dev/tty", "/dev/dtracehelper"};
const std::vector<std::string> kReadDevices = {"/dev/random", "/dev/urandom"};

// An SBPL string literal.
Result<std::string> Quote(const std::string& path) {
  std::string out = "\"";
  for (char c : path) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return Error(ErrorKind::kUsage, "seatbelt: cannot express a path with control characters in SBPL: " + path);
    }
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// One filter of a rule: (subpath "/dir") or (literal "/file").
struct Filter {
  std::string kind;
  std::string path;
};

Filter Subpath(const std::string& path) { return {"subpath", path}; }
Filter Literal(const std::string& path) { return {"literal", path}; }
Filter PathFilter(const std::string& path, bool tree) { return tree ? Subpath(path) : Literal(path); }

std::vector<Filter> Each(Filter (*make)(const std::string&), const std::vector<std::string>& paths) {
  std::vector<Filter> out;
  for (const std::string& path : paths) out.push_back(make(path));
  return out;
}

class ProfileWriter {
 public:
  void Comment(const std::string& text) { text_ += "\n; " + text + "\n"; }
  void Line(const std::string& line) { text_ += line + "\n"; }
  // `(verb operations (filter "path") ...)`, one filter per line; nothing
  // when there is no filter (a rule without one would match everything).
  Status Rule(const std::string& verb, const std::string& operations, const std::vector<Filter>& filters) {
    if (filters.empty()) return Ok();
    text_ += "(" + verb + " " + operations;
    for (const Filter& filter : filters) {
      CORRAL_ASSIGN_OR_RETURN(std::string quoted, Quote(filter.path));
      text_ += "\n  (" + filter.kind + " " + quoted + ")";
    }
    text_ += ")\n";
    return Ok();
  }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

std::vector<std::string> SeatbeltGaps(const Policy& policy, const std::string& private_tmp) {
  std::vector<std::string> gaps = {
      "process boundary: no PID namespace; host processes are visible and the command's tree is not torn down "
      "together",
      "mount view: no private /tmp or $HOME; writes go to " + private_tmp +
          ", which outlives the run, and $HOME is unreadable rather than empty",
      "seccomp: no syscall filter",
      "privilege drop: no no_new_privs; set-uid programs inside the granted trees keep their privileges",
      "resource limits: core dumps are not disabled",
      "masks: deny-read masks are computed at wrap time; a file created later inside a granted tree is not hidden",
      "pins: sandbox-exec resolves paths when it starts, so a grant swapped between wrap and spawn is followed, "
      "not refused",
  };
  if (policy.timeout()) gaps.push_back("timeout: --timeout is not enforced (sandbox-exec has no deadline)");
  if (policy.limits().any()) {
    gaps.push_back("limits: " + policy.limits().Describe() + " not applied (sandbox-exec sets no rlimits and no cgroup)");
  }
  if (policy.pin_sha256()) {
    gaps.push_back("pin: --pin-sha256 is not checked; the program is resolved by path inside the sandbox");
  }
  return gaps;
}

// What the profile enforces: (deny default) with path rules for reads,
// writes and process-exec, and the network only when granted; `env -i`.
Guarantees SeatbeltGuarantees(const Policy& policy) {
  Guarantees provided;
  provided.Add(Guarantee::kWriteBoundary);
  provided.Add(Guarantee::kReadBoundary);
  provided.Add(Guarantee::kExecBoundary);
  provided.Add(Guarantee::kEnvScrub);
  if (policy.network() == NetworkMode::kNone) provided.Add(Guarantee::kNetworkBoundary);
  // Never: process boundary, syscall filter, privilege drop, resource limits
  // (see SeatbeltGaps).
  return provided;
}

std::string DefaultPrivateTmp(const Policy& policy) {
  return "/private/tmp/corral-" + std::to_string(::getuid()) + "-" + policy.fingerprint().substr(0, 16);
}

}  // namespace

Result<std::string> SeatbeltProfile(const Policy& policy, const std::string& private_tmp) {
  ProfileWriter sb;
  sb.Line("(version 1)");
  sb.Line("(deny default)");
  sb.Comment("processes: fork; signals and process information only inside this sandbox");
  sb.Line("(allow process-fork)");
  sb.Line("(allow signal (target same-sandbox))");
  sb.Line("(allow process-info* (target same-sandbox))");
  sb.Line("(allow sysctl-read)");
  sb.Line("(allow pseudo-tty)");
  sb.Comment("the macOS system trees: read and exec");
  CORRAL_TRY(sb.Rule("allow", "file-read* process-exec", Each(Subpath, kSystemExecTrees)));
  sb.Comment("system configuration: read only");
  CORRAL_TRY(sb.Rule("allow", "file-read*", Each(Subpath, kSystemReadTrees)));
  sb.Comment("path lookup through the top-level directories");
  CORRAL_TRY(sb.Rule("allow", "file-read-metadata", Each(Literal, kTraversed)));
  sb.Comment("devices");
  CORRAL_TRY(sb.Rule("allow", "file-read* file-write-data file-ioctl", Each(Literal, kReadWriteDevices)));
  CORRAL_TRY(sb.Rule("allow", "file-read*", Each(Literal, kReadDevices)));

  sb.Comment("the policy's grants (" + std::string(ModeName(policy.mode())) + ")");
  for (const PathGrant& grant : policy.grants()) {
    if (grant.origin == GrantOrigin::kSystem) continue;  // replaced by the macOS trees above
    std::string operations = "file-read*";
    if (Has(grant.access, Access::kExec)) operations += " process-exec";
    if (Has(grant.access, Access::kWrite)) operations += " file-write*";
    CORRAL_TRY(sb.Rule("allow", operations, {PathFilter(grant.path.path, grant.path.is_dir())}));
  }
  sb.Comment("the private tmp (TMPDIR)");
  CORRAL_TRY(sb.Rule("allow", "file-read* file-write*", {Subpath(private_tmp)}));

  if (policy.network() == NetworkMode::kAll) {
    sb.Comment("network: all");
    sb.Line("(allow network*)");
    sb.Line("(allow system-socket)");
    sb.Line("(allow mach-lookup (global-name \"com.apple.dnssd.service\"))");
  } else {
    sb.Comment("network: none (denied by default)");
  }

  // In SBPL the last matching rule wins: the denials come after the allows.
  std::vector<Filter> masks;
  CORRAL_ASSIGN_OR_RETURN(std::vector<MaskedPath> hidden, MasksWithoutIdmap(policy));
  for (const MaskedPath& mask : hidden) masks.push_back(PathFilter(mask.path, mask.is_dir));
  if (!masks.empty()) sb.Comment("masks: hidden even inside the grants above");
  CORRAL_TRY(sb.Rule("deny", "file-read* file-write*", masks));
  const ProtectedSet& protected_paths = policy.protected_paths();
  std::vector<Filter> protected_filters, anchors;
  for (const ProtectedPath& entry : protected_paths.paths) {
    bool tree = entry.state == ProtectedPath::State::kDirectory || entry.state == ProtectedPath::State::kMissing;
    protected_filters.push_back(PathFilter(entry.path, tree));
  }
  for (const PinnedPath& anchor : protected_paths.anchors) anchors.push_back(Literal(anchor.path));
  if (!protected_filters.empty() || !anchors.empty()) {
    sb.Comment("protected paths: never written, created or removed (missing ones included); the directories "
               "above them are not renamed away");
  }
  CORRAL_TRY(sb.Rule("deny", "file-write*", protected_filters));
  CORRAL_TRY(sb.Rule("deny", "file-write-unlink", anchors));
  return sb.text();
}

Result<ConfinedArgv> SeatbeltProvider::Confine(const std::vector<std::string>& argv, const Policy& policy) {
  CORRAL_TRY(CheckConfinable(argv, policy));
  CORRAL_TRY(CheckWithoutEgressProxy(policy, name()));
  if (argv[0].find('=') != std::string::npos || argv[0].front() == '-') {
    return Error(ErrorKind::kUsage, "seatbelt: the program name " + argv[0] + " would be read by env(1) as an "
                                    "assignment or an option; name the program by its path");
  }
  std::string private_tmp = options_.private_tmp.empty() ? DefaultPrivateTmp(policy) : options_.private_tmp;
  ConfinedArgv confined;
  confined.backend = std::string(name());
  confined.coverage = ConfinedArgv::Coverage::kPartial;
  confined.gaps = SeatbeltGaps(policy, private_tmp);
  confined.required = RequiredGuarantees(policy);
  confined.provided = SeatbeltGuarantees(policy);
  CORRAL_TRY(CheckEnforceable(confined, policy));
  CORRAL_ASSIGN_OR_RETURN(std::string profile, SeatbeltProfile(policy, private_tmp));
#if defined(__APPLE__)
  if (options_.private_tmp.empty()) {
    // /private/tmp is shared: refuse a directory someone else put there.
    struct stat st;
    if ((::mkdir(private_tmp.c_str(), 0700) != 0 && errno != EEXIST) || ::lstat(private_tmp.c_str(), &st) != 0 ||
        !S_ISDIR(st.st_mode) || st.st_uid != ::getuid()) {
      return Error(ErrorKind::kIo, "seatbelt: cannot use " + private_tmp + " as the private tmp (it must be a "
                                   "directory you own)");
    }
  }
#endif
  confined.argv = {options_.sandbox_exec_path, "-p", profile, "--", "/usr/bin/env", "-i"};
  for (const std::string& entry : ScrubForWrap(policy, options_.environment)) {
    if (!entry.starts_with("TMPDIR=")) confined.argv.push_back(entry);
  }
  confined.argv.push_back("TMPDIR=" + private_tmp);
  confined.argv.insert(confined.argv.end(), argv.begin(), argv.end());
  // EPERM is how seatbelt reports a denied operation.
  confined.denial_signatures = {"Operation not permitted", "Permission denied", "Read-only file system"};
  RunnerFailureRule rule;
  // sandbox-exec exits 71 (EX_OSERR) when it cannot apply the profile
  // ("sandbox-exec: sandbox_apply: ..."), and, following sysexits, 65
  // (EX_DATAERR) when the profile does not compile; both print its prefix.
  rule.allowed_exit_codes = {65, 71};
  rule.fatal_signatures = {"sandbox-exec: ", "sandbox_apply", "sandbox_compile"};
  confined.runner_failure_rules = {rule};
  return confined;
}

}  // namespace corral
