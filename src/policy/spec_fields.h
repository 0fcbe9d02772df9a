// The sandbox settings, each described once: the scalars and the lists.
//
// A scalar is one `Setting<T>` below, a list one `ListSetting`: its key (the
// PolicySpec member, the JSON key and the [sandbox] key of a config file), its
// flag, its default, the doc line of docs/config.md, and how a project file
// may narrow it. The lists CORRAL_SANDBOX_SETTINGS (scalars) and
// CORRAL_CONFIG_LISTS / CORRAL_FLAG_ONLY_LISTS (lists; CORRAL_SANDBOX_LISTS is
// both) name each one with its PolicySpec member and its PolicyBuilder method.
// Everything else is expanded from them, not written again:
//
//   the members of PolicySpec, Config, ConfigLayer, SpecOverrides, PolicyFlags
//   the PolicyBuilder setters and adders               (policy/policy.cc)
//   the JSON of a spec                                 (policy/spec_json.cc)
//   the TOML keys and their parsing                    (config/config_file.cc)
//   the user file's values and the project's narrowing (config/config_merge.cc)
//   Config::ApplyTo, CheckPaths and the overrides      (config/config.cc, resolve/request.cc)
//   the CLI flags, and which ones conflict with --profile (cli/policy_flags.cc, resolve/request.cc)
//   docs/config.md's rows          (rendered by RenderDocRow / RenderNarrowingRow(s);
//                                   spec_fields_test.cc fails when the document
//                                   says otherwise)
//
// Adding a setting: its description here, one line in its list, and its rows
// in docs/config.md (the test prints them). For example, a scalar and a list:
//
//   inline constexpr Setting<std::chrono::seconds, std::optional<std::chrono::seconds>> kCpuTimeSetting{
//       .key = "cpu_time", .flag = "--cpu-time", .project = ProjectRule::kLowerOnly, ...};
//   #define CORRAL_SANDBOX_SETTINGS(X) ... X(cpu_time, CpuTime, kCpuTimeSetting)
//
//   inline constexpr ListSetting kAllowHostList{.key = "allow_host", .element = ListElement::kHost,
//       .flag = "--allow-host", .project = ProjectListRule::kUserAllows, ...};
//   #define CORRAL_CONFIG_LISTS(X) ... X(allow_host, AllowHost, kAllowHostList)
//
// The handling of each scalar kind exists already for a switch (bool, with
// the enum its setter takes), a choice enum, std::chrono::seconds or a byte
// size (uint64_t, read with ParseTmpfsSize); a new choice enum also needs its
// RenderDocRow / RenderNarrowingRow overload (one line each in
// spec_fields.cc). A list whose elements are of a new kind (a host name, a
// digest; kHost above) needs its ListElement: how config_file.cc reads one,
// its flag value and docs type in spec_fields.cc; one with a new project rule needs its
// ProjectListRule, its check in config_merge.cc and its narrowing row.
//
// The scalar kinds:
//
//   switch    bool. The flag only turns it on; an explicit override is a
//             plain bool (false: not given). `true` is the wide value
//             unless `narrow` says kOn (overlay: on only narrows). The
//             PolicyBuilder setter takes an enum (Switch<E>): E's first value
//             is off, its second on.
//   enum      a choice among `choices`; the enum's values are the names'
//             indexes, and the last name is the widest.
//   seconds   a positive number of seconds, at most `maximum` in a file and
//             on the command line; unset in the spec means no limit.
//   uint64_t  a byte size, written as "512m" or a number of bytes, between
//             `minimum` and `maximum`.
//
// A list is a std::vector<std::string>, empty by default; the flag is
// repeatable, each file's and flag's elements are added to the layers'
// (each once in a Config), and the element kind says how a file's entry is
// read: a path (canonical, checked to exist when the run resolves), an
// environment variable name, or a forbid_read pattern.
//
// Security: `project` says how far the repository's corral.toml may move a
// setting. A wrong rule lets an untrusted repository widen the sandbox, so a
// setting that opens or weakens anything must name the rule that keeps the
// wide value the user's alone (for a list: kInsideWorkspace, kUserAllows or
// kNotAConfigKey; kAdds only for a list that hides more, never grants).
//
// What is NOT here, and why each is still written by hand:
//   mode                 decided also by bash = "off", presets, sessions,
//                        --mode and a profile's ceiling (resolve/request.cc,
//                        config_merge.cc's CheckMode, CheckPreset); its
//                        narrowing compares against a ceiling from several
//                        layers, not the user file's value.
//   acknowledge_danger   its TOML key (i_understand_danger_full_access) is not
//                        its member name, and ResolveRequest records who gave
//                        it (flag, config file:line, profile) for the audit
//                        trail.
//   workspace / no_workspace  the workspace decides which project file is
//                        read at all (ResolveRequest reads the config twice),
//                        the session's cwd beats the config's workspace_root,
//                        and the flags conflict with each other.
//   pin_sha256           one optional value given only by --pin-sha256 (no
//                        key, no project rule): none of the two kinds, and
//                        the only such field.
//   sandbox.backend      not a PolicySpec field: a Config choice that `corral
//                        wrap` and `corral run` read, with its own --backend
//                        flag on wrap alone.
//   [approval]           not PolicySpec fields either (the gate reads them);
//                        their narrowing follows the strictness order and the
//                        preset's mode, across both tables.
//   system_roots, own_files, scratch_dirs, user_config_grants,
//   project_config_grants
//                        internal: no flag, key or doc row.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "base/result.h"
#include "policy/tmpfs_size.h"

namespace corral {

enum class NetworkMode {
  kNone,  // an empty network namespace of the sandbox's own: only its lo, up
  kAll,   // the host's network namespace
};

// What $HOME shows inside the sandbox.
enum class HomeMode {
  kIsolated,  // an empty tmpfs (the default)
  kReal,      // the isolated home plus the real home's toolchains and caches, read-only (home_view.h)
};

// How the project file (<workspace>/corral.toml) may set a setting. Each
// refusal is a config_project_widens error at the project file's key.
enum class ProjectRule {
  kNarrowValueOnly,     // only the narrow value; the wide one is the user's alone, whatever the user file says
  kWideIfUserIsWide,    // the wide value only when the user file chose it too
  kLowerOnly,           // at most the user file's value, else the default (no default: no bound)
};

// What an explicit override of the setting does next to --profile.
enum class ProfileRule {
  kCombines,  // applies on top of the profile
  kIsAGrant,  // a grant-shaped setting: a profile is the whole authority, so the two conflict
};

// How a choice may be spelled in a config file.
enum class TomlSpelling {
  kNames,           // one of the names, as a string
  kNamesOrBoolean,  // or a boolean: false is the first name, true the last
};

// Which value of a switch is the narrow one (a project file may set it, and
// never the other): off for most (best_effort), on for overlay.
enum class NarrowSide { kOff, kOn };

// Where the command's writes to the workspace go (overlay, and
// Policy::write_view).
enum class WriteView {
  kDirect,   // into the real tree, as the command runs (the default)
  kOverlay,  // into a per-run upper layer; the real tree changes only on `corral apply` (overlay/overlay.h)
};

// What a resource limit (max_procs, max_memory, ...) counts: a limit is a
// whole number read as such, a size read like tmpfs_size ("512m"), or a
// share of CPUs ("0.5", "2": at most three decimals), held as thousandths
// of a CPU.
enum class LimitUnit { kCount, kBytes, kMilliCpus };

// Whether a run may go ahead with mechanisms the host cannot provide
// (best_effort, and PolicyBuilder::SetEnforcement).
enum class Enforcement {
  kRequired,    // fail closed (the default)
  kBestEffort,  // --best-effort: run with what the host has, and say what was dropped
};

template <typename T, typename SpecType_ = T, typename Arg_ = T>
struct Setting {
  using Value = T;            // what a file or flag sets
  using SpecType = SpecType_;  // the PolicySpec member: T, or std::optional<T> when unset means no limit
  using Arg = Arg_;            // what the PolicyBuilder setter takes: T, or a switch's enum

  std::string_view key{};        // the PolicySpec member, JSON key and [sandbox] key
  SpecType spec_default{};     // the PolicySpec default
  std::string_view flag{};       // "--network"
  std::string_view flag_value{}; // the flag's value in --help ("MODE"); empty for a switch
  std::string_view flag_help{};
  ProjectRule project = ProjectRule::kNarrowValueOnly;
  // kNarrowValueOnly and kWideIfUserIsWide: "the project config cannot <refusal>:
  // only the user config (<file>) can <user_action>". kLowerOnly: "the project
  // config may lower the <refusal> (...) but not raise it to ...".
  std::string_view refusal{};
  std::string_view user_action{};
  ProfileRule profile = ProfileRule::kCombines;
  std::span<const std::string_view> choices{};  // an enum's names, narrowest first
  TomlSpelling spelling = TomlSpelling::kNames;
  NarrowSide narrow = NarrowSide::kOff;  // a switch's narrow value
  T minimum{};       // seconds and sizes: the smallest value a file or flag may give
  T maximum{};       // the largest value a file or flag may give (JSON: a size's largest)
  std::string_view maximum_text{};  // seconds: the maximum in words ("one year")
  LimitUnit unit = LimitUnit::kCount;  // a limit: what it counts
  // docs/config.md: the row's type and default columns (derived for all
  // but a size, so they cannot drift from `choices` or the limits), and its
  // notes.
  std::string_view doc_type{};
  std::string_view doc_default{};
  std::string_view doc{};
};

// A switch: a bool in the spec, files and flags, and an enum in the
// PolicyBuilder setter, whose first value is off and second on (house rule:
// no bool parameters).
template <typename E>
using Switch = Setting<bool, bool, E>;

inline constexpr std::string_view kNetworkNames[] = {"none", "all"};
inline constexpr std::string_view kHomeNames[] = {"isolated", "real"};

inline constexpr Switch<Enforcement> kBestEffortSetting{
    .key = "best_effort",
    .spec_default = false,
    .flag = "--best-effort",
    .flag_help = "DANGEROUS: run even when the host cannot enforce every mechanism; the report and audit "
                 "trail say what was dropped",
    .project = ProjectRule::kNarrowValueOnly,
    .refusal = "set best_effort",
    .user_action = "set best_effort",
    .doc = "**Dangerous**: run even when the host cannot enforce every mechanism; the report says what was "
           "dropped. It also lets `corral wrap` use a partial backend (bubblewrap, seatbelt), listing its gaps.",
};

inline constexpr Switch<WriteView> kOverlaySetting{
    .key = "overlay",
    .spec_default = false,
    .flag = "--overlay",
    .flag_help = "the workspace is a copy-on-write overlay: the command's writes go to a per-run layer that "
                 "`corral diff` shows and `corral apply` or `corral discard` settles; the real tree does not change "
                 "during the run",
    .project = ProjectRule::kNarrowValueOnly,
    .refusal = "turn the overlay off",
    .user_action = "set overlay = false",
    .narrow = NarrowSide::kOn,
    .doc = "The workspace is a copy-on-write overlay (`docs/overlay.md`): the command reads the real tree and "
           "writes to a per-run upper layer in corral's state directory; review with `corral diff`, then "
           "`corral apply` or `corral discard`. Fails closed where overlayfs cannot run, unless `best_effort`: then "
           "a copied snapshot of the workspace takes the writes, said so.",
};

inline constexpr Setting<HomeMode> kHomeSetting{
    .key = "home",
    .spec_default = HomeMode::kIsolated,
    .flag = "--home",
    .flag_value = "MODE",
    .flag_help = "isolated (default: an empty $HOME) or real (the empty $HOME plus your toolchains and caches, "
                 "read-only)",
    .project = ProjectRule::kNarrowValueOnly,
    .refusal = "show the real home",
    .user_action = "set home = \"real\"",
    .profile = ProfileRule::kIsAGrant,
    .choices = kHomeNames,
    .doc = "`isolated`: an empty private `$HOME`. `real`: that private home plus, read-only, the real home's "
           "toolchains (run) and caches (read) that exist; the list is `HomeAllowlist` in "
           "`src/policy/home_view.cc`. Everything else in the home is hidden unless granted.",
};

inline constexpr Setting<NetworkMode> kNetworkSetting{
    .key = "network",
    .spec_default = NetworkMode::kNone,
    .flag = "--network",
    .flag_value = "MODE",
    .flag_help = "none (default) or all",
    .project = ProjectRule::kWideIfUserIsWide,
    .refusal = "open the network",
    .user_action = "set network = true",
    .profile = ProfileRule::kIsAGrant,
    .choices = kNetworkNames,
    .spelling = TomlSpelling::kNamesOrBoolean,
    .doc = "`true` = `\"all\"`: the host's network. `false` = `\"none\"`: an empty network namespace; only the sandbox's own loopback.",
};

inline constexpr Setting<std::chrono::seconds, std::optional<std::chrono::seconds>> kTimeoutSetting{
    .key = "timeout",
    .spec_default = std::nullopt,
    .flag = "--timeout",
    .flag_value = "SECONDS",
    .flag_help = "kill the whole process tree after SECONDS",
    .project = ProjectRule::kLowerOnly,
    .refusal = "timeout",
    .minimum = std::chrono::seconds(1),
    .maximum = std::chrono::seconds(365LL * 24 * 3600),
    .maximum_text = "one year",
    .doc_default = "no limit",
    .doc = "Kills the whole process tree when it expires.",
};

inline constexpr Setting<uint64_t> kTmpfsSizeSetting{
    .key = "tmpfs_size",
    .spec_default = kDefaultTmpfsSize,
    .flag = "--tmpfs-size",
    .flag_value = "SIZE",
    .flag_help = "cap /tmp and $HOME at SIZE each, /dev/shm at a quarter of it (host memory; default 1g)",
    .project = ProjectRule::kLowerOnly,
    .refusal = "tmpfs size",
    .minimum = kMinTmpfsSize,
    .maximum = kMaxTmpfsSize,
    .doc_type = "string: a whole number with `k`, `m`, `g` or `t` (binary units, e.g. `\"512m\"`), or an integer "
                "(bytes); 4m to 1t",
    .doc_default = "`\"1g\"`",
    .doc = "The private `/tmp` and the isolated `$HOME` are each a tmpfs of this size, with one inode per 8 KiB "
           "(131072 files for 1g); `/dev/shm` gets a quarter of it. They hold host memory, so a run holds at most "
           "2.25 GiB there by default; a write past the cap fails with \"No space left on device\" inside. "
           "`corral explain` shows it; `corral wrap` passes it on (the native backend's policy file; bubblewrap "
           "gets `--size` for `/tmp` and `$HOME`).",
};

// The resource limits (docs/limits.md): unset is no limit; a project file
// may lower the user's, or set one when the user has none, never raise it.
// Each becomes an rlimit of the command (policy/resource_limits.h), and
// max_procs and max_memory a cgroup v2 limit of the whole sandbox where the
// host gives one (confine/cgroup.h).
using LimitSetting = Setting<uint64_t, std::optional<uint64_t>>;

inline constexpr LimitSetting kMaxProcsSetting{
    .key = "max_procs",
    .spec_default = std::nullopt,
    .flag = "--max-procs",
    .flag_value = "N",
    .flag_help = "at most N processes (and threads) in the sandbox: RLIMIT_NPROC, and pids.max where corral can "
                 "make a cgroup; refused where neither holds (root without a pids cgroup) unless --best-effort",
    .project = ProjectRule::kLowerOnly,
    .refusal = "process limit",
    .minimum = 1,
    .maximum = 4194304,
    .unit = LimitUnit::kCount,
    .doc_type = "integer, 1 to 4194304",
    .doc_default = "no limit",
    .doc = "Processes and threads the command may have at once. RLIMIT_NPROC, counted per user in the sandbox's "
           "user namespace, plus `pids.max` of a cgroup of the run's own where the host gives one. Global root "
           "is exempt from RLIMIT_NPROC, so as root it needs the cgroup: refused without one unless "
           "`best_effort`. See [limits](limits.md).",
};

inline constexpr LimitSetting kMaxMemorySetting{
    .key = "max_memory",
    .spec_default = std::nullopt,
    .flag = "--max-memory",
    .flag_value = "SIZE",
    .flag_help = "cap each process's address space at SIZE (RLIMIT_AS; 512m, 2g), and the whole sandbox's memory "
                 "where corral can make a cgroup (memory.max, no swap)",
    .project = ProjectRule::kLowerOnly,
    .refusal = "memory limit",
    .minimum = 16 * 1024 * 1024,
    .maximum = 16ull * 1024 * 1024 * 1024 * 1024,
    .unit = LimitUnit::kBytes,
    .doc_type = "string: a whole number with `k`, `m`, `g` or `t` (binary units), or an integer (bytes); 16m "
                "to 16t",
    .doc_default = "no limit",
    .doc = "Each process's address space (RLIMIT_AS): an allocation past it fails inside. Where the host gives a "
           "cgroup of the run's own, also the whole sandbox's memory (`memory.max`, `memory.swap.max` 0). "
           "Without one the cap is per process, and the report says so. See [limits](limits.md).",
};

inline constexpr Setting<std::chrono::seconds, std::optional<std::chrono::seconds>> kMaxCpuSecondsSetting{
    .key = "max_cpu_seconds",
    .spec_default = std::nullopt,
    .flag = "--max-cpu-seconds",
    .flag_value = "SECONDS",
    .flag_help = "kill a process of the command that has used SECONDS of CPU time (RLIMIT_CPU: SIGXCPU)",
    .project = ProjectRule::kLowerOnly,
    .refusal = "CPU time limit",
    .minimum = std::chrono::seconds(1),
    .maximum = std::chrono::seconds(365LL * 24 * 3600),
    .maximum_text = "one year",
    .doc_default = "no limit",
    .doc = "CPU time of each process (RLIMIT_CPU): past it the kernel sends SIGXCPU, then SIGKILL a second "
           "later. The exit record names the limit. See [limits](limits.md).",
};

inline constexpr LimitSetting kMaxFileSizeSetting{
    .key = "max_file_size",
    .spec_default = std::nullopt,
    .flag = "--max-file-size",
    .flag_value = "SIZE",
    .flag_help = "no file written larger than SIZE (RLIMIT_FSIZE: the write fails and SIGXFSZ ends the process)",
    .project = ProjectRule::kLowerOnly,
    .refusal = "file size limit",
    .minimum = 1024,
    .maximum = 16ull * 1024 * 1024 * 1024 * 1024,
    .unit = LimitUnit::kBytes,
    .doc_type = "string: a whole number with `k`, `m`, `g` or `t` (binary units), or an integer (bytes); 1k to "
                "16t",
    .doc_default = "no limit",
    .doc = "The largest file a process may write (RLIMIT_FSIZE): a write past it fails and SIGXFSZ ends the "
           "process; the exit record names the limit. See [limits](limits.md).",
};

inline constexpr LimitSetting kMaxOpenFilesSetting{
    .key = "max_open_files",
    .spec_default = std::nullopt,
    .flag = "--max-open-files",
    .flag_value = "N",
    .flag_help = "at most N open descriptors per process (RLIMIT_NOFILE: the next open fails with EMFILE)",
    .project = ProjectRule::kLowerOnly,
    .refusal = "open file limit",
    .minimum = 4,
    .maximum = 1048576,
    .unit = LimitUnit::kCount,
    .doc_type = "integer, 4 to 1048576",
    .doc_default = "no limit",
    .doc = "Descriptors each process may hold (RLIMIT_NOFILE): the next open fails with \"Too many open files\". "
           "Never above the limit corral itself runs under. See [limits](limits.md).",
};

inline constexpr LimitSetting kMaxCpusSetting{
    .key = "max_cpus",
    .spec_default = std::nullopt,
    .flag = "--max-cpus",
    .flag_value = "CPUS",
    .flag_help = "the whole sandbox uses at most CPUS cores' worth of CPU time (0.5, 2): cpu.max of the run's "
                 "cgroup; refused where the host gives no cgroup with the cpu controller unless --best-effort",
    .project = ProjectRule::kLowerOnly,
    .refusal = "CPU share limit",
    .minimum = 10,        // 0.01: cpu.max's smallest quota, 1000us of a 100000us period
    .maximum = 1024000,   // 1024 CPUs
    .unit = LimitUnit::kMilliCpus,
    .doc_type = "number of CPUs, 0.01 to 1024 (at most three decimals: `0.5`, `2`, `\"1.25\"`)",
    .doc_default = "no limit",
    .doc = "The CPU time the whole sandbox may use per wall-clock second, in cores: `cpu.max` of a cgroup of the "
           "run's own (quota per 100ms period). There is no rlimit for it, so where the host gives no cgroup with "
           "the cpu controller it is refused unless `best_effort`. See [limits](limits.md).",
};

// X(member, Setter, setting): the PolicySpec member, the PolicyBuilder
// setter, the description. The order is the order of the project file's
// checks (the first refusal is the one reported).
#define CORRAL_SANDBOX_SETTINGS(X)                   \
  X(best_effort, SetEnforcement, kBestEffortSetting) \
  X(home, Home, kHomeSetting)                        \
  X(network, Network, kNetworkSetting)               \
  X(overlay, Overlay, kOverlaySetting)               \
  X(timeout, Timeout, kTimeoutSetting)               \
  X(tmpfs_size, TmpfsSize, kTmpfsSizeSetting)         \
  X(max_procs, MaxProcs, kMaxProcsSetting)            \
  X(max_memory, MaxMemory, kMaxMemorySetting)         \
  X(max_cpu_seconds, MaxCpuSeconds, kMaxCpuSecondsSetting) \
  X(max_file_size, MaxFileSize, kMaxFileSizeSetting)  \
  X(max_open_files, MaxOpenFiles, kMaxOpenFilesSetting) \
  X(max_cpus, MaxCpus, kMaxCpusSetting)

// The list settings: grants and names, each given any number of times.

// What a list holds, and so how a config file's entry is read and checked.
enum class ListElement {
  kPath,     // a path: "~" expanded, the scope's relative-path rule, canonical text (config_file.h)
  kEnvName,  // an environment variable name: letters, digits and _, not starting with a digit
  kPattern,  // a forbid_read pattern (policy/forbid.h)
  kToolchain,  // a toolchain's name, or "auto" (policy/toolchains.h)
  kAllowHost,     // an --allow-host rule, PATTERN[:PORT[,PORT]] (net/host_pattern.h)
  kDenyHost,      // a --deny-host rule, PATTERN (net/host_pattern.h)
  kPrivateRange,  // an --allow-private CIDR in a non-public range (net/destination.h)
  kLocalPort,     // an --allow-local port, 1-65535 (policy/egress_rules.h)
  kConnectPort,   // an --allow-port port, 1-65535 (policy/egress_rules.h)
  kDnsName,       // an --allow-dns name: an exact host name (policy/egress_rules.h)
  kRung,          // an --accept-rung name: one of kAcceptableRungNames (confine/rung.h)
};

// The rungs (confine/rung.h) that drop a guarantee, so that running on one
// needs --best-effort or accepting it by name; the landlock-N rungs drop
// nothing and need no acceptance.
inline constexpr std::string_view kAcceptableRungNames[] = {"no-userns", "no-landlock", "masked-proc"};
bool IsAcceptableRungName(std::string_view name);
std::string AcceptableRungNamesText();  // "no-userns, no-landlock, masked-proc"

// How the project file may touch a list. Each refusal is a
// config_project_widens error at the element (`sandbox.<key>[<i>]`).
enum class ProjectListRule {
  kInsideWorkspace,  // add paths inside the workspace (and the user's workspace_root)
  kUserAllows,       // repeat names the user config or the built-in allowlist already allows
  kAdds,             // add anything: the list only hides more, so the result is the union
  kNotAConfigKey,    // no key at all: the flag alone sets it (CORRAL_FLAG_ONLY_LISTS)
  kUserOnly,         // nothing: only the user config (or the flag) may set it
};

struct ListSetting {
  std::string_view key{};        // the PolicySpec member, JSON key and [sandbox] key
  ListElement element = ListElement::kPath;
  std::string_view flag{};       // "--allow-read"; repeatable, its value named by `element`
  std::string_view flag_help{};
  ProjectListRule project = ProjectListRule::kInsideWorkspace;
  ProfileRule profile = ProfileRule::kIsAGrant;
  std::string_view doc{};        // docs/config.md: the row's notes
};

inline constexpr ListSetting kAllowReadList{
    .key = "allow_read",
    .element = ListElement::kPath,
    .flag = "--allow-read",
    .flag_help = "grant read on PATH (repeatable)",
    .project = ProjectListRule::kInsideWorkspace,
    .doc = "Read grants.",
};

inline constexpr ListSetting kAllowWriteList{
    .key = "allow_write",
    .element = ListElement::kPath,
    .flag = "--allow-write",
    .flag_help = "grant read and write on PATH (repeatable)",
    .project = ProjectListRule::kInsideWorkspace,
    .doc = "Read and write grants (read-only under `mode = \"read-only\"`).",
};

// An --allow-write root outside the workspace made an overlay like the
// workspace (docs/overlay.md): only a root that is already a write grant.
inline constexpr ListSetting kOverlayRootList{
    .key = "overlay_root",
    .element = ListElement::kPath,
    .flag = "--overlay-root",
    .flag_help = "make the --allow-write root PATH (outside the workspace) a copy-on-write overlay too, reviewed "
                 "with the workspace's by corral diff, apply and discard (implies --overlay; repeatable)",
    .project = ProjectListRule::kInsideWorkspace,
    .profile = ProfileRule::kCombines,
    .doc = "`allow_write` roots outside the workspace that are copy-on-write overlays too (implies `overlay`); "
           "each must be an `allow_write` grant. See [docs/overlay.md](overlay.md).",
};

inline constexpr ListSetting kAllowExecList{
    .key = "allow_exec",
    .element = ListElement::kPath,
    .flag = "--allow-exec",
    .flag_help = "grant read and exec on PATH (repeatable)",
    .project = ProjectListRule::kInsideWorkspace,
    .doc = "Read and exec grants. Only these (and the workspace and system trees) run programs: a read or write "
           "grant is a `noexec` mount, so a shared library in one does not load.",
};

// Security: the variables reach the command, so a project file may only
// repeat what the user (or the built-in allowlist) passes already.
inline constexpr ListSetting kAllowEnvList{
    .key = "allow_env",
    .element = ListElement::kEnvName,
    .flag = "--allow-env",
    .flag_help = "pass environment variable NAME through (repeatable)",
    .project = ProjectListRule::kUserAllows,
    .doc = "Variables passed through besides the built-in allowlist (`PATH HOME TERM LANG LC_ALL LC_CTYPE TZ`).",
};

inline constexpr ListSetting kForbidReadList{
    .key = "forbid_read",
    .element = ListElement::kPattern,
    .flag = "--forbid-read",
    .flag_help = "hide PATTERN even inside granted trees (repeatable; globs, ~/)",
    .project = ProjectListRule::kAdds,
    .doc = "Paths hidden even inside granted trees, e.g. `\"**/.env\"`, `\"~/.ssh\"`. See "
           "[Patterns](#paths-patterns-and-).",
};

// Security: each name grants directories of the home read and exec, so a
// project file may only repeat names the user already gave.
inline constexpr ListSetting kAllowToolchainList{
    .key = "allow_toolchain",
    .element = ListElement::kToolchain,
    .flag = "--allow-toolchain",
    .flag_help = "run the toolchain NAME from your home, read-only: rustup, pyenv, nvm, volta, fnm, go, sdkman, "
                 "asdf, mise, deno, bun, local-bin, or auto (those on your PATH); its credential files stay hidden "
                 "(repeatable)",
    .project = ProjectListRule::kUserAllows,
    .doc = "Toolchains in the home granted read and exec, by name (`rustup` is `~/.cargo` and `~/.rustup`; the "
           "table is `Toolchains` in `src/policy/toolchains.cc`), or `\"auto\"`: those holding an entry of "
           "`PATH`. Their credential files (`~/.cargo/credentials.toml`, each Node's `etc/npmrc`, ...) stay "
           "hidden. See [Toolchains in your home](../README.md#toolchains-in-your-home).",
};

// Security: dangerous. Read grants of credential stores (policy/home_view.h)
// that every other grant hides; each is audited and said on stderr. Not a
// config key: a credential is shown one run at a time, by the person typing
// the command.
inline constexpr ListSetting kAllowCredentialList{
    .key = "allow_credential",
    .element = ListElement::kPath,
    .flag = "--allow-credential",
    .flag_help = "DANGEROUS: let the command read the credential store PATH (~/.ssh, ~/.aws, ...) that every grant "
                 "hides; audited and said on stderr (repeatable)",
    .project = ProjectListRule::kNotAConfigKey,
    .doc = "**Loud, flag only**: read grants of credential stores (`~/.ssh`, `~/.aws`, `~/.config/gh`, ...; "
           "`HomeCredentialPatterns` in `src/policy/home_view.cc`) that every other grant hides and refuses to "
           "name. Each is said on stderr and audited (`credential` record). Not a config key: a credential is "
           "shown one run at a time by the person typing the command.",
};

// Security: each rule opens a way out through corral's egress proxy
// (net/egress_proxy.h), so a project file may only repeat rules the user
// already gave.
inline constexpr ListSetting kAllowHostList{
    .key = "allow_host",
    .element = ListElement::kAllowHost,
    .flag = "--allow-host",
    .flag_help = "let the command reach PATTERN (a name, *.suffix, an address or a CIDR) on PORTS (default 80,443) "
                 "through corral's proxy, the sandbox's only way out (repeatable)",
    .project = ProjectListRule::kUserAllows,
    .profile = ProfileRule::kIsAGrant,
    .doc = "Places the command may reach through corral's egress proxy, which is then the empty network "
           "namespace's only way out: `\"registry.npmjs.org\"`, `\"*.pythonhosted.org:443\"`, "
           "`\"10.1.0.0/16:5432\"`, `\"[::1]:8080\"` (ports 80 and 443 unless given). Over-broad patterns "
           "(`*`, `*.com`, `*.co.uk`) are refused; not with `network = \"all\"`. See "
           "[the network page](network.md).",
};

// Hides more: a project file may add any.
inline constexpr ListSetting kDenyHostList{
    .key = "deny_host",
    .element = ListElement::kDenyHost,
    .flag = "--deny-host",
    .flag_help = "never let the command reach PATTERN, whatever --allow-host says (repeatable)",
    .project = ProjectListRule::kAdds,
    .profile = ProfileRule::kCombines,
    .doc = "Places the proxy refuses on every port, over every `allow_host` rule (`\"*.evil.test\"`, "
           "`\"10.0.0.0/8\"`); also an address an allowed name resolves to.",
};

// Security: opens the host's own networks to the proxy, so a project file
// may only repeat ranges the user already gave.
inline constexpr ListSetting kAllowPrivateList{
    .key = "allow_private",
    .element = ListElement::kPrivateRange,
    .flag = "--allow-private",
    .flag_help = "let the proxy connect into the non-public range CIDR (loopback, LAN, ...) that it refuses "
                 "otherwise, also when an allowed name resolves there (repeatable)",
    .project = ProjectListRule::kUserAllows,
    .profile = ProfileRule::kIsAGrant,
    .doc = "Non-public ranges (the host's loopback, private, link-local, CGNAT, ...) the proxy may connect into. "
           "Without one, an allowed name that resolves there is refused. The cloud metadata address is refused "
           "unless a range names it alone (`\"169.254.169.254/32\"`).",
};

// Security: each port opens one service of the host's loopback to the
// command, so a project file may only repeat ports the user already gave.
inline constexpr ListSetting kAllowLocalList{
    .key = "allow_local",
    .element = ListElement::kLocalPort,
    .flag = "--allow-local",
    .flag_help = "let the command reach the host's 127.0.0.1:PORT (a dev server, a database) at 127.0.0.1:PORT "
                 "inside, forwarded by corral; nothing else of the host's loopback (repeatable)",
    .project = ProjectListRule::kUserAllows,
    .profile = ProfileRule::kIsAGrant,
    .doc = "Ports of the host's loopback the command reaches at the same port of its own 127.0.0.1, each "
           "connection forwarded by corral (a dev server, a database). Nothing else of the host's loopback is "
           "reachable. At most 16; not 53, 1080 or 3128 (corral's own services there); not with "
           "`network = \"all\"`.",
};

// Security: each port is open to every host of every network the host
// reaches, so a project file may only repeat ports the user already gave.
inline constexpr ListSetting kAllowPortList{
    .key = "allow_port",
    .element = ListElement::kConnectPort,
    .flag = "--allow-port",
    .flag_help = "let the command open TCP connections to PORT on ANY host, from the host's network (Landlock's "
                 "TCP rules, Linux 6.7+); no UDP, no listening, nothing else (repeatable)",
    .project = ProjectListRule::kUserAllows,
    .profile = ProfileRule::kIsAGrant,
    .doc = "TCP ports the command may connect to on every host, loopback and LAN included, from the host's "
           "network namespace (Landlock's TCP rules, ABI 4, Linux 6.7+; refused on an older kernel unless "
           "best effort). Only TCP connect: no UDP, no other protocol, no bind or listen. Names resolve only "
           "through `allow_dns`. At most 16; not with `allow_host`, `allow_local` or `network = \"all\"`. See "
           "[the network page](network.md).",
};

// Security: each name becomes reachable by name, so a project file may only
// repeat names the user already gave.
inline constexpr ListSetting kAllowDnsList{
    .key = "allow_dns",
    .element = ListElement::kDnsName,
    .flag = "--allow-dns",
    .flag_help = "under --allow-port, let NAME resolve inside (corral resolves it when the run starts); no other "
                 "name does (repeatable)",
    .project = ProjectListRule::kUserAllows,
    .profile = ProfileRule::kIsAGrant,
    .doc = "Under `allow_port`, the only names that resolve inside: corral resolves each on the host when the run "
           "starts and the sandbox's `/etc/hosts` holds them (and `localhost`); no lookup leaves the sandbox. "
           "Exact names only; at most 16.",
};

// Security: each socket is a door out of the sandbox (and some hand out
// control of the host), so a project file may only repeat sockets the user
// already gave.
inline constexpr ListSetting kAllowUnixList{
    .key = "allow_unix",
    .element = ListElement::kPath,
    .flag = "--allow-unix",
    .flag_help = "show the host's unix socket PATH (ssh-agent, a database) at its path, so the command can "
                 "connect to it; explain and the run warn for sockets that hand out control of the host "
                 "(repeatable)",
    .project = ProjectListRule::kUserAllows,
    .profile = ProfileRule::kIsAGrant,
    .doc = "Host unix sockets the command may connect to (an ssh agent, a database), each bound into the view "
           "at its own path and nothing else of its directory. Must be a socket. Docker's, Podman's, the "
           "system and session buses, systemd's and libvirt's hand whoever connects control of the host: "
           "`explain`, the run's stderr and the trail say so.",
};

// Security: each name lets a run go ahead on a rung that drops a guarantee,
// so only the person running corral (the flag, the user config) may accept
// one; a project file naming it is refused.
inline constexpr ListSetting kAcceptRungList{
    .key = "accept_rung",
    .element = ListElement::kRung,
    .flag = "--accept-rung",
    .flag_help = "run on the rung NAME (no-userns, no-landlock or masked-proc) when the host gives no better, "
                 "without --best-effort; the report and audit trail say what was dropped (repeatable)",
    .project = ProjectListRule::kUserOnly,
    .profile = ProfileRule::kCombines,
    .doc = "Rungs a run may stand on without `best_effort`: `no-userns`, `no-landlock`, `masked-proc` "
           "([docs/hosts.md](hosts.md)). Each name accepts that rung alone; the run still reports it and what "
           "it dropped. User config only.",
};

// X(member, Adder, setting): the PolicySpec member, the PolicyBuilder method
// that appends one element, the description. CORRAL_CONFIG_LISTS are keys of
// [sandbox] too, in the order of the project file's checks;
// CORRAL_FLAG_ONLY_LISTS are set by their flag alone.
#define CORRAL_CONFIG_LISTS(X)                 \
  X(allow_read, AllowRead, kAllowReadList)     \
  X(allow_write, AllowWrite, kAllowWriteList)  \
  X(overlay_root, OverlayRoot, kOverlayRootList) \
  X(allow_exec, AllowExec, kAllowExecList)     \
  X(allow_env, AllowEnv, kAllowEnvList)        \
  X(allow_toolchain, AllowToolchain, kAllowToolchainList) \
  X(forbid_read, ForbidRead, kForbidReadList)  \
  X(allow_host, AllowHost, kAllowHostList)     \
  X(deny_host, DenyHost, kDenyHostList)        \
  X(allow_private, AllowPrivate, kAllowPrivateList) \
  X(allow_local, AllowLocal, kAllowLocalList) \
  X(allow_port, AllowPort, kAllowPortList)     \
  X(allow_dns, AllowDns, kAllowDnsList)       \
  X(allow_unix, AllowUnix, kAllowUnixList)     \
  X(accept_rung, AcceptRung, kAcceptRungList)
#define CORRAL_FLAG_ONLY_LISTS(X) X(allow_credential, AllowCredential, kAllowCredentialList)
#define CORRAL_SANDBOX_LISTS(X) CORRAL_CONFIG_LISTS(X) CORRAL_FLAG_ONLY_LISTS(X)

#define CORRAL_CHECK_CONFIG_LIST(member, Adder, setting) \
  static_assert(setting.key == #member && setting.project != ProjectListRule::kNotAConfigKey);
CORRAL_CONFIG_LISTS(CORRAL_CHECK_CONFIG_LIST)
#undef CORRAL_CHECK_CONFIG_LIST
#define CORRAL_CHECK_FLAG_ONLY_LIST(member, Adder, setting) \
  static_assert(setting.key == #member && setting.project == ProjectListRule::kNotAConfigKey);
CORRAL_FLAG_ONLY_LISTS(CORRAL_CHECK_FLAG_ONLY_LIST)
#undef CORRAL_CHECK_FLAG_ONLY_LIST

// The flag's value in --help: PATH, NAME or PATTERN.
std::string_view ListFlagValue(const ListSetting& setting);

// The types each place stores a setting in.
template <const auto& S>
using SettingValue = typename std::remove_cvref_t<decltype(S)>::Value;
template <const auto& S>
using SettingSpecType = typename std::remove_cvref_t<decltype(S)>::SpecType;
template <const auto& S>
using SettingArg = typename std::remove_cvref_t<decltype(S)>::Arg;
// The spec's value for a setter's argument: a switch is on for its enum's
// second value.
template <typename T, typename SpecType, typename Arg>
T SettingFromArg(const Setting<T, SpecType, Arg>&, Arg value) {
  if constexpr (std::is_same_v<T, Arg>) {
    return value;
  } else {
    static_assert(std::is_same_v<T, bool> && std::is_enum_v<Arg>, "a switch's setter takes an enum");
    return value == static_cast<Arg>(1);
  }
}
// An explicit override (SpecOverrides): a switch can only be turned on.
template <const auto& S>
using SettingOverride =
    std::conditional_t<std::is_same_v<SettingValue<S>, bool>, bool, std::optional<SettingValue<S>>>;

// A choice's name, and the value a name stands for.
template <typename E>
  requires std::is_enum_v<E>
std::string_view ChoiceName(const Setting<E>& setting, E value) {
  return setting.choices[static_cast<size_t>(value)];
}
template <typename E>
  requires std::is_enum_v<E>
std::optional<E> ParseChoice(const Setting<E>& setting, std::string_view name) {
  for (size_t i = 0; i < setting.choices.size(); ++i) {
    if (setting.choices[i] == name) return static_cast<E>(i);
  }
  return std::nullopt;
}

std::string_view NetworkModeName(NetworkMode mode);  // "none", "all"
std::string_view HomeModeName(HomeMode mode);        // "isolated", "real"

// The setting's row of docs/config.md's [sandbox] table (spec_fields_test.cc
// compares the document with these):
// | `key` | type | default | `key` | `--flag` | doc |
std::string RenderSwitchDocRow(std::string_view key, bool spec_default, std::string_view flag, std::string_view doc);
template <typename E>
std::string RenderDocRow(const Switch<E>& setting) {
  return RenderSwitchDocRow(setting.key, setting.spec_default, setting.flag, setting.doc);
}
std::string RenderDocRow(const Setting<HomeMode>& setting);
std::string RenderDocRow(const Setting<NetworkMode>& setting);
std::string RenderDocRow(const Setting<std::chrono::seconds, std::optional<std::chrono::seconds>>& setting);
std::string RenderDocRow(const Setting<uint64_t>& setting);
std::string RenderDocRow(const LimitSetting& setting);
// Its row of docs/config.md's project-narrowing table, from `project`:
// | `key` | the project config may | it may not |
std::string RenderSwitchNarrowingRow(std::string_view key, ProjectRule project, NarrowSide narrow);
template <typename E>
std::string RenderNarrowingRow(const Switch<E>& setting) {
  return RenderSwitchNarrowingRow(setting.key, setting.project, setting.narrow);
}
std::string RenderNarrowingRow(const Setting<HomeMode>& setting);
std::string RenderNarrowingRow(const Setting<NetworkMode>& setting);
std::string RenderNarrowingRow(const Setting<std::chrono::seconds, std::optional<std::chrono::seconds>>& setting);
std::string RenderNarrowingRow(const Setting<uint64_t>& setting);
std::string RenderNarrowingRow(const LimitSetting& setting);
// A limit's value as a flag or file would write it: "512m" for a size, "64"
// for a count, "0.5" for CPUs.
std::string LimitText(const LimitSetting& setting, uint64_t value);
// A limit as typed ("64", "512m", "0.5"; a size with k, m, g or t; CPUs
// with at most three decimals, returned in thousandths): kUsage outside
// the setting's minimum..maximum, naming its key.
Result<uint64_t> ParseLimit(const LimitSetting& setting, std::string_view text);
// A list's row of the [sandbox] table (a flag-only list's key column says
// "(no key)"), and the narrowing table's rows of `settings`: one per rule,
// naming every list it governs, in the order first met; flag-only lists have
// none.
std::string RenderDocRow(const ListSetting& setting);
std::vector<std::string> RenderNarrowingRows(std::span<const ListSetting* const> settings);

}  // namespace corral
