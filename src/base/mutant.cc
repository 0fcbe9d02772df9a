#include "base/mutant.h"

#include <cstdio>
#include <cstdlib>

namespace corral {

std::string_view MutantName(Mutant mutant) {
  switch (mutant) {
    case Mutant::kNone: return "none";
    case Mutant::kFdClose: return "fd_close";
    case Mutant::kLandlock: return "landlock";
    case Mutant::kSeccomp: return "seccomp";
    case Mutant::kSeccompPtrace: return "seccomp_ptrace";
    case Mutant::kSeccompKeyctl: return "seccomp_keyctl";
    case Mutant::kCapabilities: return "capabilities";
    case Mutant::kNetNamespace: return "net_namespace";
    case Mutant::kEnvScrub: return "env_scrub";
    case Mutant::kInitDumpable: return "init_dumpable";
    case Mutant::kLifeline: return "lifeline";
    case Mutant::kReadOnlyBinds: return "readonly_binds";
    case Mutant::kEtcMasks: return "etc_masks";
    case Mutant::kForbidMasks: return "forbid_masks";
    case Mutant::kProtectedBinds: return "protected_binds";
    case Mutant::kSweep: return "sweep";
    case Mutant::kSweepRoots: return "sweep_roots";
    case Mutant::kNoexecBinds: return "noexec_binds";
    case Mutant::kTmpfsCaps: return "tmpfs_caps";
    case Mutant::kTerminalRestore: return "terminal_restore";
    case Mutant::kPinCheck: return "pin_check";
    case Mutant::kSeccompSetId: return "seccomp_setid";
    case Mutant::kSeccompTty: return "seccomp_tty";
    case Mutant::kSeccompSockets: return "seccomp_sockets";
    case Mutant::kSeccompArch: return "seccomp_arch";
    case Mutant::kSeccompMount: return "seccomp_mount";
    case Mutant::kSeccompNamespaces: return "seccomp_namespaces";
    case Mutant::kDeviceBinds: return "device_binds";
    case Mutant::kTimeoutKill: return "timeout_kill";
    case Mutant::kInitReap: return "init_reap";
    case Mutant::kSignalForward: return "signal_forward";
    case Mutant::kExitSignal: return "exit_signal";
    case Mutant::kControlsEscape: return "controls_escape";
    case Mutant::kPlanFailClosed: return "plan_fail_closed";
    case Mutant::kWorkspaceVet: return "workspace_vet";
    case Mutant::kPinSha256: return "pin_sha256";
    case Mutant::kEnforceCheck: return "enforce_check";
    case Mutant::kPrivateTmp: return "private_tmp";
    case Mutant::kStateWriteGrant: return "state_write_grant";
    case Mutant::kStateInnerGrant: return "state_inner_grant";
    case Mutant::kGrantDotDot: return "grant_dotdot";
    case Mutant::kConfigUnknownKeys: return "config_unknown_keys";
    case Mutant::kJsonBytes: return "json_bytes";
    case Mutant::kApprovalFlush: return "approval_flush";
    case Mutant::kProjectNetwork: return "project_network";
    case Mutant::kProjectAcceptRung: return "project_accept_rung";
    case Mutant::kDegradedReport: return "degraded_report";
    case Mutant::kRunnerBackend: return "runner_backend";
    case Mutant::kInitSeccomp: return "init_seccomp";
    case Mutant::kProcMasks: return "proc_masks";
    case Mutant::kCredentialMasks: return "credential_masks";
    case Mutant::kCredentialGrants: return "credential_grants";
    case Mutant::kHomeView: return "home_view";
    case Mutant::kUselessGrants: return "useless_grants";
    case Mutant::kStateMasks: return "state_masks";
    case Mutant::kForbidWalkMoves: return "forbid_walk_moves";
    case Mutant::kHideUnreadable: return "hide_unreadable";
    case Mutant::kStdioCheck: return "stdio_check";
    case Mutant::kProtectedAnchors: return "protected_anchors";
    case Mutant::kGitPointers: return "git_pointers";
    case Mutant::kNestedProtect: return "nested_protect";
    case Mutant::kResolveInRoots: return "resolve_in_roots";
    case Mutant::kDiscoveryMoved: return "discovery_moved";
    case Mutant::kSweepIdentity: return "sweep_identity";
    case Mutant::kSweepJournal: return "sweep_journal";
    case Mutant::kStateDirChecks: return "state_dir_checks";
    case Mutant::kSweepLeftExit: return "sweep_left_exit";
    case Mutant::kApprovalGate: return "approval_gate";
    case Mutant::kEscalationWider: return "escalation_wider";
    case Mutant::kGrantCheck: return "grant_check";
    case Mutant::kConfigNarrow: return "config_narrow";
    case Mutant::kPresetCeiling: return "preset_ceiling";
    case Mutant::kProfileCeiling: return "profile_ceiling";
    case Mutant::kDangerAck: return "danger_ack";
    case Mutant::kAuditChecks: return "audit_checks";
    case Mutant::kAuditInGrant: return "audit_in_grant";
    case Mutant::kOwnFilesMasks: return "own_files_masks";
    case Mutant::kAuditArgs: return "audit_args";
    case Mutant::kHiddenDirsEmpty: return "hidden_dirs_empty";
    case Mutant::kGitFileBounds: return "git_file_bounds";
    case Mutant::kMountView: return "mount_view";
    case Mutant::kUsageRecord: return "usage_record";
    case Mutant::kGatedGrant: return "gated_grant";
    case Mutant::kHostProc: return "host_proc";
    case Mutant::kPolicyFileCommand: return "policy_file_command";
    case Mutant::kPolicyFileHome: return "policy_file_home";
    case Mutant::kUnsearchableStores: return "unsearchable_stores";
    case Mutant::kTrailMode: return "trail_mode";
    case Mutant::kTrailAppend: return "trail_append";
    case Mutant::kTrailOneWrite: return "trail_one_write";
    case Mutant::kTrailStallDeaf: return "trail_stall_deaf";
    case Mutant::kTrailRotateLock: return "trail_rotate_lock";
    case Mutant::kProjectAuditTrail: return "project_audit_trail";
    case Mutant::kAuditRelative: return "audit_relative";
    case Mutant::kRestoreNofollow: return "restore_nofollow";
    case Mutant::kRestoreNoreplace: return "restore_noreplace";
    case Mutant::kSweepRecheck: return "sweep_recheck";
    case Mutant::kSweepMoveByPath: return "sweep_move_by_path";
    case Mutant::kPtyStdio: return "pty_stdio";
    case Mutant::kApprovalAnswerParse: return "approval_answer_parse";
    case Mutant::kSessionApprovalScope: return "session_approval_scope";
    case Mutant::kRepeatedSignalKill: return "repeated_signal_kill";
    case Mutant::kApprovalClose: return "approval_close";
    case Mutant::kFreshRepositoryCheck: return "fresh_repository_check";
    case Mutant::kRepositoryTopOwner: return "repository_top_owner";
    case Mutant::kWorktreeClaim: return "worktree_claim";
    case Mutant::kToolchainSecrets: return "toolchain_secrets";
    case Mutant::kSeccompRawSockets: return "seccomp_raw_sockets";
    case Mutant::kEgressRules: return "egress_rules";
    case Mutant::kEgressAddressCheck: return "egress_address_check";
    case Mutant::kServicesGo: return "services_go";
    case Mutant::kLandlockConnectPorts: return "landlock_connect_ports";
    case Mutant::kSeccompTcpOnly: return "seccomp_tcp_only";
    case Mutant::kGitConfigSafeKeys: return "git_config_safe_keys";
    case Mutant::kGitConfigFollow: return "git_config_follow";
    case Mutant::kGitConfigMerge: return "git_config_merge";
    case Mutant::kSeccompPassCred: return "seccomp_passcred";
    case Mutant::kEgressTrailInline: return "egress_trail_inline";
    case Mutant::kFenceBeneath: return "fence_beneath";
    case Mutant::kFenceHidden: return "fence_hidden";
    case Mutant::kFenceProtected: return "fence_protected";
    case Mutant::kToolAskFallback: return "tool_ask_fallback";
    case Mutant::kMcpEscalationOnce: return "mcp_escalation_once";
    case Mutant::kCancelKill: return "cancel_kill";
    case Mutant::kApparmorTarget: return "apparmor_target";
    case Mutant::kSeccompUnixSockets: return "seccomp_unix_sockets";
    case Mutant::kOverlayView: return "overlay_view";
    case Mutant::kApplyProtected: return "apply_protected";
    case Mutant::kApplyConflict: return "apply_conflict";
    case Mutant::kApplyDeepConflict: return "apply_deep_conflict";
    case Mutant::kApplyNoFollow: return "apply_nofollow";
    case Mutant::kApplySpecial: return "apply_special";
    case Mutant::kOverlayLock: return "overlay_lock";
    case Mutant::kHostRuleMasks: return "host_rule_masks";
    case Mutant::kMaskedProcView: return "masked_proc_view";
    case Mutant::kOverlayStackBaseline: return "overlay_stack_baseline";
    case Mutant::kOverlayStackWorkspace: return "overlay_stack_workspace";
    case Mutant::kWarmLandlock: return "warm_landlock";
    case Mutant::kWarmSeccomp: return "warm_seccomp";
    case Mutant::kWarmFingerprint: return "warm_fingerprint";
    case Mutant::kExecutorScratchOwner: return "executor_scratch_owner";
    case Mutant::kExecutorCwd: return "executor_cwd";
    case Mutant::kExecutorGate: return "executor_gate";
    case Mutant::kExecutorCancel: return "executor_cancel";
    case Mutant::kResourceLimits: return "resource_limits";
    case Mutant::kReapLast: return "reap_last";
    case Mutant::kProjectLimits: return "project_limits";
    case Mutant::kEgressAskUnanswered: return "egress_ask_unanswered";
    case Mutant::kWarmCgroup: return "warm_cgroup";
    case Mutant::kExecutorWarmReap: return "executor_warm_reap";
    case Mutant::kProjectCpus: return "project_cpus";
    case Mutant::kRemoveTreeDepth: return "remove_tree_depth";
    case Mutant::kWarmRlimits: return "warm_rlimits";
    case Mutant::kSnapshotInPlace: return "snapshot_in_place";
    case Mutant::kAbsentNamesFold: return "absent_names_fold";
    case Mutant::kWarmPlanRecompile: return "warm_plan_recompile";
    case Mutant::kJournalKeptDone: return "journal_kept_done";
    case Mutant::kJournalBytes: return "journal_bytes";
    case Mutant::kJournalOptional: return "journal_optional";
    case Mutant::kGitConfigNoReserve: return "git_config_no_reserve";
    case Mutant::kEgressLoopbackOwn: return "egress_loopback_own";
    case Mutant::kEgressUnspecified: return "egress_unspecified";
    case Mutant::kScratchAlone: return "scratch_alone";
    case Mutant::kForbidQuote: return "forbid_quote";
    case Mutant::kDerivationStale: return "derivation_stale";
    case Mutant::kProcWritable: return "proc_writable";
    case Mutant::kStdioDevices: return "stdio_devices";
    case Mutant::kStdioModes: return "stdio_modes";
    case Mutant::kStdioRecords: return "stdio_records";
  }
  return "none";
}

#if defined(CORRAL_MUTANTS) && CORRAL_MUTANTS
namespace {

Mutant FromEnvironment() {
  const char* name = std::getenv("CORRAL_MUTANT");
  if (name == nullptr || *name == '\0') return Mutant::kNone;
  // MutantName answers "none" past the last enumerator.
  for (int i = static_cast<int>(Mutant::kNone) + 1; MutantName(static_cast<Mutant>(i)) != "none"; ++i) {
    if (MutantName(static_cast<Mutant>(i)) == name) return static_cast<Mutant>(i);
  }
  // An unknown name must not silently test the unmutated corral.
  std::fprintf(stderr, "corral: CORRAL_MUTANT=%s names no mutant\n", name);
  std::abort();
}

// Fixed before main(), so the child of a clone only ever reads it.
const Mutant g_active = FromEnvironment();

}  // namespace

Mutant ActiveMutant() { return g_active; }
#endif

}  // namespace corral
