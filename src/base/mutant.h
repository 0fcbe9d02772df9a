// Mutants: switching one named defence off, to prove that the tests which
// claim it can see it break.
//
// Only a build configured with -DCORRAL_MUTANTS=ON (never a release build:
// CMake refuses the pair) compiles the switch in. There, CORRAL_MUTANT=<name>
// in corral's environment turns the defence <name> off for that process and
// the sandbox it starts; scripts/mutants.sh runs the tests SECURITY.md names
// for each claim under each mutant and reports which survived. In every other
// build MutantActive() is a constant false, so no environment can weaken a
// real corral.
//
// Each mutant removes exactly one layer and leaves every other in place.
#pragma once

#include <string_view>

namespace corral {

enum class Mutant {
  kNone,
  kFdClose,          // inherited descriptors are not closed in the child
  kLandlock,         // the Landlock ruleset is built but never enforced
  kSeccomp,          // no seccomp filter is installed
  kSeccompPtrace,    // the filter allows ptrace
  kSeccompKeyctl,    // the filter allows keyctl, add_key and request_key
  kCapabilities,     // the capability sets are not emptied
  kNetNamespace,     // no network namespace
  kEnvScrub,         // the whole environment passes into the sandbox
  kInitDumpable,     // the sandbox's init stays dumpable
  kLifeline,         // the sandbox's init outlives corral (no parent-death signal)
  kReadOnlyBinds,    // read-only grants and system trees are bound read-write
  kEtcMasks,         // the /etc secret masks are not mounted, nor root's /etc idmapped
  kForbidMasks,      // the forbid_read masks are not mounted
  kProtectedBinds,   // existing protected paths are not bound read-only
  kSweep,            // nothing is swept after the run
  kSweepRoots,       // the sweep opens the roots by path when it runs, following symlinks
  kNoexecBinds,      // grant binds without exec are not mounted noexec
  kTmpfsCaps,        // the private tmpfs mounts get no size or inode cap
  kTerminalRestore,  // the caller's terminal is not put back after the run
  kPinCheck,         // the child does not check a grant's (dev, inode) before binding it
  kSeccompSetId,     // the filter allows set-user-ID and set-group-ID modes
  kSeccompTty,       // the filter allows TIOCSTI, TIOCLINUX, TIOCSETD and TIOCEXCL
  kSeccompSockets,   // the filter allows every socket family
  kSeccompArch,      // the filter allows foreign architectures and x32
  kSeccompMount,     // the filter allows the mount family and chroot
  kSeccompNamespaces,  // the filter allows setns and clone/unshare of namespaces
  kDeviceBinds,      // the host's device nodes are bound read-write
  kTimeoutKill,      // --timeout's deadline passes without killing anything
  kInitReap,         // init reports the command's exit without killing the rest, and stays
  kSignalForward,    // init does not pass forwarded signals on to the command
  kExitSignal,       // a command killed by a signal is reported as exiting with the signal's number
  kControlsEscape,   // EscapeControls passes every byte through
  kPlanFailClosed,   // a missing Landlock, user namespaces or seccomp (or a spawn's refused namespaces) is dropped without --best-effort
  kWorkspaceVet,     // any directory is accepted as the workspace
  kPinSha256,        // --pin-sha256 accepts a program whatever it hashes to
  kEnforceCheck,     // a backend that lacks a required guarantee wraps anyway
  kPrivateTmp,       // the host's /tmp is bound read-write instead of a private tmpfs
  kStateWriteGrant,  // a writable grant holding corral's own state is accepted
  kStateInnerGrant,  // a grant inside corral's own state is accepted
  kGrantDotDot,      // a grant path with "." or ".." components is accepted
  kConfigUnknownKeys,  // an unknown key in a config table is ignored
  kJsonBytes,        // strings that are not UTF-8 go into JSON as they are
  kApprovalFlush,    // type-ahead is not flushed before an approval question
  kProjectNetwork,   // a project config may open the network
  kProjectAcceptRung,  // a project config's accept_rung is honoured
  kDegradedReport,   // under --best-effort a missing mechanism is dropped without saying so
  kRunnerBackend,    // `corral run` runs whatever sandbox.backend says
  kInitSeccomp,      // the sandbox's init runs without its own allowlist filter
  kProcMasks,          // the root-only /proc files are not masked
  kCredentialMasks,    // the home's credential stores are not masked inside a grant that shows them
  kCredentialGrants,   // a grant naming a credential store (or inside one) is not refused
  kHomeView,           // --home real shows the whole real home, not its allowlist
  kUselessGrants,      // a grant under /dev or /proc, or one a forbid_read pattern hides, is not refused
  kStateMasks,         // corral's own state is not hidden inside a read grant
  kForbidWalkMoves,    // the mask walk does not look for a tree that moved while it looked
  kHideUnreadable,     // a directory the mask walk cannot read is not hidden whole
  kStdioCheck,         // a directory or O_PATH handle on stdio is not refused
  kProtectedAnchors,   // the directories above a protected path are not pinned by a bind
  kGitPointers,        // discovery does not follow a git config's includes and core.hooksPath
  kNestedProtect,      // discovery does not walk below the top of a writable root
  kResolveInRoots,     // a symlink in a writable root is trusted and followed out of the roots
  kDiscoveryMoved,     // a root that moved while discovery looked in it is not refused
  kSweepIdentity,      // the sweep leaves a new object at an existing protected path alone
  kSweepJournal,       // the next run does not recover what a killed run's journal recorded
  kStateDirChecks,     // an unsafe state directory does not refuse the run
  kSweepLeftExit,      // what the sweep could not move does not make corral exit 79
  kApprovalGate,       // the approval gate allows every command
  kEscalationWider,    // an escalation need not be wider than the current mode
  kGrantCheck,         // a single-use grant is not verified
  kConfigNarrow,       // a project config may widen the mode
  kPresetCeiling,      // the user's preset is no ceiling for the project config
  kProfileCeiling,     // --mode or the session may widen a profile's mode
  kDangerAck,          // danger-full-access needs no acknowledgement
  kAuditChecks,        // the --audit file is not refused as a symlink, a non-regular file or a second link
  kAuditInGrant,       // an --audit file inside a writable grant is not refused
  kOwnFilesMasks,      // the files corral trusts (--audit trail, user config, profile) are not hidden
  kAuditArgs,          // the spawned record carries the command's arguments
  kHiddenDirsEmpty,    // mounts inside a hidden directory are kept (and the run cannot start)
  kGitFileBounds,      // a git file discovery reads is opened blocking (a FIFO hangs corral)
  kMountView,          // the view holds each grant's parent directory too
  kUsageRecord,        // a run refused for its flags writes its failed record to stderr, not to --audit FILE
  kGatedGrant,         // the gate admits a Gated dimension without asking for its grant
  kHostProc,           // the host's /proc is bound into the sandbox instead of a fresh procfs
  kPolicyFileCommand,  // a compiled policy file runs any command, not only the one it was wrapped for
  kPolicyFileHome,     // a compiled policy file compiled for another home is loaded as it is
  kUnsearchableStores,  // a credential store linked into a directory the caller cannot search adds nothing
  kTrailMode,          // a trail file readable by others is not narrowed to 0600
  kTrailAppend,        // the trail is opened without O_APPEND: each run writes from the start of the file
  kTrailOneWrite,      // a trail record goes out in two writes (the line, then its newline)
  kTrailStallDeaf,     // a trail on a stream nobody drains is waited on past a stop the run holds pending
  kTrailRotateLock,    // the trail is rotated without taking audit.lock
  kProjectAuditTrail,  // a project config's audit.trail is taken as the user's would be
  kAuditRelative,      // a relative --audit or audit.trail path is accepted
  kRestoreNofollow,    // quarantine restore follows symlinks on the way to PATH
  kRestoreNoreplace,   // quarantine restore replaces what is at PATH without --overwrite
  kSweepRecheck,       // the sweep moves what it located without resolving the path again from the root
  kSweepMoveByPath,    // the sweep moves what is at the path's name now (from /, symlinks followed), not what its descriptors hold
  kPtyStdio,           // the command keeps the caller's terminal on its descriptors beside its own pty
  kApprovalAnswerParse,  // the approval channel takes any answer line as allow-once
  kSessionApprovalScope,  // an allow-for-session answer covers its class in every mode and workspace
  kRepeatedSignalKill,    // a repeated signal to corral is only passed on, with no SIGCONT: a stopped or deaf command keeps corral
  kApprovalClose,         // corral keeps the approval channel open after the gate has decided
  kFreshRepositoryCheck,  // a repository the run created is put back in the tree without being checked
  kRepositoryTopOwner,    // the top of a repository another user owns becomes the workspace
  kWorktreeClaim,         // a linked worktree's repository is granted although its gitdir does not point back at the workspace
  kToolchainSecrets,      // a toolchain's own credential files (cargo's credentials.toml, a Node's etc/npmrc) are not hidden
  kSeccompRawSockets,     // the filter allows INET sockets of every type (raw ones and SOCK_PACKET)
  kEgressRules,           // the egress proxy allows every host and port the client names (--allow-host ignored)
  kEgressAddressCheck,    // the egress proxy connects to any address a name resolves to (no private-range check)
  kServicesGo,            // the sandbox's init runs the command without waiting for corral to serve its egress proxy
  kLandlockConnectPorts,  // under --allow-port Landlock does not handle TCP: every port of every host is reachable
  kSeccompTcpOnly,        // under --allow-port the filter allows INET datagram sockets (UDP) and listening
  kGitConfigSafeKeys,     // every key a run changed in a repository's config lands, not only those on the safe list
  kGitConfigFollow,       // the landing opens the run's copy of a config following symlinks, blocking and unbounded
  kGitConfigMerge,        // the landing writes the run's whole copy, not its changed keys over the config as it is now
  kSeccompPassCred,       // under --allow-port the filter allows SO_PASSCRED and SO_PASSPIDFD (autobind to an abstract name)
  kEgressTrailInline,     // the egress proxy's thread writes each trail record itself, waiting on a stalled trail
  kFenceBeneath,          // the file tools' fence resolves without RESOLVE_BENEATH: `..` and symlinks leave the root
  kFenceHidden,           // the fence shows hidden paths (masks, forbid_read) to the file tools
  kFenceProtected,        // the fence lets the file tools write protected paths and inside .git/.hg
  kToolAskFallback,       // a tool the policy asks about runs when the MCP client cannot be asked
  kMcpEscalationOnce,     // an approved escalation widens every later call of the MCP session
  kCancelKill,            // an MCP cancellation does not kill the running bash tree
  kApparmorTarget,        // `corral setup apparmor` names /usr/bin/corral, not the binary that runs
  kSeccompUnixSockets,    // without a mount view the filter allows socket(AF_UNIX): every host socket is reachable
  kOverlayView,        // --overlay binds the real workspace, writable, instead of the overlay
  kApplyProtected,     // apply lands changes to protected paths without --include-protected
  kApplyConflict,      // apply overwrites a real file that changed since the run
  kApplyDeepConflict,  // apply compares only each changed path: not the dirs above it, nor a deleted tree
  kApplyNoFollow,      // apply opens the real tree and the upper by path, following symlinks
  kApplySpecial,       // apply copies special files and set-user-ID bits
  kOverlayLock,        // runs and applies on one overlay take no lock
  kMaskedProcView,        // the masked-proc rung binds the host's /proc instead of an empty one
  kHostRuleMasks,         // without a mount view Landlock's rules cover the masked paths (/etc's root-only files, credential stores)
  kOverlayStackBaseline,   // a run stacked with --overlay-on replaces its run's conflict baseline
  kOverlayStackWorkspace,  // --overlay-on stacks on a run that overlays another workspace
  kWarmLandlock,           // a warm sandbox's call runs without its fresh Landlock domain
  kWarmSeccomp,            // a warm sandbox's init (and so each call) installs no seccomp filter
  kWarmFingerprint,        // a warm run does not compare its plan with the warm sandbox's
  kExecutorScratchOwner,   // an executor set's scratch root owned by another user is accepted
  kExecutorCwd,            // an executor call's directory is not resolved beneath the workspace (.. and symlinks lead out)
  kExecutorGate,           // executor calls are admitted with the allow-all approval policy (the approver is never asked)
  kExecutorCancel,         // closing an executor set neither kills the running trees nor waits for them
  kResourceLimits,         // the command runs without the rlimits of --max-procs, --max-memory, ... (kernel/rlimits.h)
  kReapLast,               // corral returns without reaping the sandbox's init: its zombie is left to whoever reaps orphans
  kProjectLimits,          // a project config may raise a resource limit (max_procs, max_memory, ...) the user set
  kEgressAskUnanswered,    // a connection held for a network approval goes through without an answer
  kWarmCgroup,             // a warm sandbox starts for a plan that needs a cgroup of its own (its limits unheld)
  kExecutorWarmReap,       // closing an executor leaves its warm sandbox running
  kProjectCpus,            // a project config may raise the max_cpus the user set (config_merge.cc)
  kRemoveTreeDepth,        // RemoveTreeAt descends a tree as deep as it is, a descriptor and a stack frame per level
  kWarmRlimits,            // a warm sandbox takes the next call after a call lowered its init's rlimits
  kSnapshotInPlace,        // the --overlay --best-effort copied snapshot binds the real tree, writable, not the copy
  kAbsentNamesFold,        // a directory listing proves a name absent by exact bytes (".GIT" hides ".git")
  kWarmPlanRecompile,      // a warm call that runs cold after all spawns the plan compiled only for comparison
  kJournalKeptDone,        // a kept sweep journal slot's record stays active between runs (a later recovery sweeps the user's files)
  kJournalBytes,           // a sweep journal record writes a name that is not UTF-8 as raw bytes (the recovery cannot parse it)
  kJournalOptional,        // a run whose sweep journal cannot be written goes on without it
  kGitConfigNoReserve,     // a landing repository config is overwritten in place without its blocks taken first
  kEgressLoopbackOwn,      // a loopback address no interface lists (127.0.0.2) is not one of the host's own
  kEgressUnspecified,      // an unspecified address (0.0.0.0, ::) may be allowed by --allow-private
  kScratchAlone,           // an executor's scratch may be or hold the workspace (whose protected paths then go unguarded)
  kForbidQuote,            // a path put into a forbid_read pattern (the workspace, the home, a store) is not quoted: its `[` is a wildcard
  kDerivationStale,        // an executor call reuses the policy derived before although what it looked at changed
  kProcWritable,           // the sandbox's own procfs is mounted read-write (a root caller's chmod there is the host's)
  kStdioDevices,           // a view device given as stdio (/dev/null) reaches the command as the caller's own node
  kStdioModes,             // the modes of the caller's files on the command's stdio are not put back after the run
  kStdioRecords,           // overlapping runs do not share the first mode of a stdio file: each puts back the mode it saw
};

// The names CORRAL_MUTANT takes ("fd_close", "landlock", ...), in enum order
// after kNone.
std::string_view MutantName(Mutant mutant);

#if defined(CORRAL_MUTANTS) && CORRAL_MUTANTS
// The mutant named by CORRAL_MUTANT when the process started (kNone without
// it). Safe in the child after clone: it reads a value fixed at start-up.
Mutant ActiveMutant();
inline bool MutantActive(Mutant mutant) { return ActiveMutant() == mutant; }
#else
constexpr Mutant ActiveMutant() { return Mutant::kNone; }
constexpr bool MutantActive(Mutant) { return false; }
#endif

}  // namespace corral
