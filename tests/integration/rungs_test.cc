// The rungs (confine/rung.h, docs/hosts.md) on hosts simulated from outside,
// through the real code paths:
//   - no user namespaces: corral started by probe_host_no_userns, a seccomp
//     filter like Docker's default profile that fails clone and unshare with
//     CLONE_NEWUSER;
//   - AppArmor's restriction (a user namespace without capabilities):
//     CORRAL_TEST_USERNS_WITHOUT_CAPS=1 empties the child's capability sets
//     the moment its namespace exists, and the kernel refuses the rest;
//   - an older kernel's Landlock: CORRAL_TEST_LANDLOCK_ABI=N caps the ABI
//     corral negotiates (both only in a CORRAL_HOST_SIMULATION build, never a
//     release one: this suite fails, not skips, in a build without it).
// Every refusal is checked by its text and by what did not happen outside;
// every run that goes ahead by the rung it names and by denials seen outside.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <iterator>

#include "harness.h"

namespace corral_it {
namespace {

class Rungs : public SandboxTest {
 protected:
  Rungs() { outside_.Write("secret.txt", secret_ + "\n"); }

  // `corral ARGS` on a host whose container forbids user namespaces.
  Outcome WithoutUserNamespaces(const std::vector<std::string>& grants, const std::vector<std::string>& command,
                                SpawnOptions options = {}) {
    std::vector<std::string> argv = RunArgv(grants, command);
    argv.insert(argv.begin(), ProbePath("host_no_userns"));
    return Execute(argv, Defaults(std::move(options)));
  }

  // `corral explain --json` with the Landlock ABI capped at `abi`.
  nlohmann::json PlanAt(int abi, const std::vector<std::string>& flags = {}) {
    std::vector<std::string> args = {"explain", "--json"};
    args.insert(args.end(), flags.begin(), flags.end());
    args.insert(args.end(), {"--", "true"});
    Outcome outcome = Corral(args, WithEnv({{"CORRAL_TEST_LANDLOCK_ABI", std::to_string(abi)}}));
    EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
    nlohmann::json out = nlohmann::json::parse(outcome.out, nullptr, false);
    EXPECT_FALSE(out.is_discarded()) << outcome.Describe();
    return out.is_discarded() ? nlohmann::json() : out["plan"];
  }

  static std::string Status(const nlohmann::json& plan, const std::string& feature) {
    for (const auto& entry : plan["report"]) {
      if (entry["feature"] == feature) return entry["status"].get<std::string>();
    }
    return "absent";
  }

  const std::string secret_ = RandomToken("SECRET");
};

// Without --best-effort a host without user namespaces runs nothing, and
// says which rung --best-effort would give and why the container refuses.
TEST_F(Rungs, WithoutUserNamespacesTheRunIsRefusedNamingTheRung) {
  Outcome outcome = WithoutUserNamespaces({}, {"sh", "-c", "echo ran > canary"});
  EXPECT_NE(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_NE(outcome.err.find("namespaces: the kernel refused to create the sandbox's namespaces"), std::string::npos)
      << outcome.Describe();
  EXPECT_NE(outcome.err.find("--best-effort runs it on the no-userns rung"), std::string::npos) << outcome.Describe();
  EXPECT_FALSE(Exists(workspace_ / "canary")) << outcome.Describe();
}

// `corral check` on that host: refused, the rung --best-effort would give,
// and a fix line about user namespaces.
TEST_F(Rungs, CheckNamesTheRungAndTheFixWithoutUserNamespaces) {
  Outcome outcome = Execute({ProbePath("host_no_userns"), CorralBin(), "check", "--json"}, Defaults({}));
  EXPECT_NE(outcome.exit_code, 0) << outcome.Describe();
  nlohmann::json host = nlohmann::json::parse(outcome.out, nullptr, false);
  ASSERT_FALSE(host.is_discarded()) << outcome.Describe();
  EXPECT_EQ(host["rung"], "refused") << host;
  EXPECT_TRUE(host["probe"]["user_namespaces_refused"].get<bool>()) << host;
  EXPECT_NE(host["best_effort_rung"].get<std::string>().find("no-userns"), std::string::npos) << host;
  EXPECT_EQ(host["host"]["outer_seccomp_filter"], true) << host;
  bool named = false;
  for (const auto& line : host["advice"]) {
    named = named || line.get<std::string>().find("user namespaces") != std::string::npos;
  }
  EXPECT_TRUE(named) << host;
}

// --best-effort on that host: the no-userns rung, named in the trail, still
// denies a write outside the workspace, a read of a secret outside the
// grants, an INET socket and a connection to a host daemon's unix socket
// (no mount view hides it: seccomp refuses socket(AF_UNIX)); each judged
// outside the sandbox.
TEST_F(Rungs, WithoutUserNamespacesBestEffortStillDeniesFromOutside) {
  Listener listener = Listener::Tcp();
  Listener host_socket = Listener::UnixPath(outside_ / "host.sock");  // a host daemon's socket, Docker's say
  std::string target = outside_ / "written";
  std::string script = ProbePath("write_file") + " " + target + "; " + ProbePath("read_file") + " " +
                       (outside_ / "secret.txt") + "; " + ProbePath("tcp_connect") + " " +
                       std::to_string(listener.port()) + "; " + ProbePath("unix_connect") + " " +
                       (outside_ / "host.sock") + "; echo ran > canary";
  Outcome outcome = WithoutUserNamespaces({"--best-effort", "--allow-exec", ProbesDir()}, {"sh", "-c", script});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_TRUE(Exists(workspace_ / "canary")) << outcome.Describe();  // it did run
  EXPECT_FALSE(Exists(target)) << outcome.Describe();
  EXPECT_EQ(outcome.out.find(secret_), std::string::npos) << outcome.Describe();
  EXPECT_EQ(outcome.err.find(secret_), std::string::npos) << outcome.Describe();
  EXPECT_FALSE(listener.GotSomething()) << outcome.Describe();
  EXPECT_FALSE(host_socket.GotSomething()) << outcome.Describe();
  // Refused by the filter itself, not only by Landlock's TCP rules behind it.
  EXPECT_NE(outcome.out.find("socket(AF_INET, SOCK_STREAM): blocked (Operation not permitted)"), std::string::npos)
      << outcome.Describe();
  EXPECT_NE(outcome.out.find("socket(AF_UNIX): blocked (Operation not permitted)"), std::string::npos)
      << outcome.Describe();
  EXPECT_NE(outcome.err.find("it ran without namespaces"), std::string::npos) << outcome.Describe();
  std::vector<nlohmann::json> spawned = AuditEvents("spawned");
  ASSERT_FALSE(spawned.empty());
  EXPECT_NE(spawned.back()["rung"].get<std::string>().find("no-userns"), std::string::npos) << spawned.back();
}

// No mount view on the no-userns rung, so no mask hides anything: Landlock's
// rules leave the masked paths out instead (mutant host_rule_masks). Seen
// outside: a credential store under a granted $HOME (any caller) and, for a
// root caller, a root-only file in /etc (as /etc/shadow and the ssh host
// keys) give none of their bytes, while the files beside them still read.
TEST_F(Rungs, WithoutUserNamespacesMaskedPathsStayUnreadable) {
  const std::string key = RandomToken("SSHKEY");
  const std::string notes = RandomToken("NOTES");
  outside_.Write("home/.ssh/id_ed25519", key + "\n");
  outside_.Write("home/notes.txt", notes + "\n");
  const std::string home = outside_ / "home";
  std::string script = "cat " + home + "/notes.txt; cat " + home + "/.ssh/id_ed25519; ";
  // Root's own: a 0600 file in /etc, which others may not read.
  const std::string etc_secret = RandomToken("ETCSECRET");
  std::string etc_path;
  struct Remove {
    std::string path;
    ~Remove() {
      if (!path.empty()) ::unlink(path.c_str());
    }
  } remove;
  if (::geteuid() == 0) {
    etc_path = "/etc/" + RandomToken("corral-rungs-secret");
    int fd = ::open(etc_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    ASSERT_GE(fd, 0) << etc_path;
    remove.path = etc_path;
    std::string line = etc_secret + "\n";
    ASSERT_EQ(::write(fd, line.data(), line.size()), static_cast<ssize_t>(line.size()));
    ::close(fd);
    script += "cat " + etc_path + "; ";
  } else {
    std::cerr << "[ NOTE ] as uid " << ::getuid() << " /etc's root-only files are the kernel's to refuse: only the "
              << "credential store is checked here; the root pass checks /etc\n";
  }
  script += "head -c 5 /etc/passwd; echo; echo ran > canary";
  Outcome outcome = WithoutUserNamespaces({"--best-effort", "--allow-read", home}, {"sh", "-c", script},
                                          WithEnv({{"HOME", home}}));
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_TRUE(Exists(workspace_ / "canary")) << outcome.Describe();
  EXPECT_NE(outcome.err.find("it ran without namespaces"), std::string::npos) << outcome.Describe();
  // The controls: the grant and /etc still read, entry by entry.
  EXPECT_NE(outcome.out.find(notes), std::string::npos) << outcome.Describe();
  EXPECT_NE(outcome.out.find("root:"), std::string::npos) << outcome.Describe();
  for (const std::string& secret : {key, etc_secret}) {
    EXPECT_EQ(outcome.out.find(secret), std::string::npos) << outcome.Describe();
    EXPECT_EQ(outcome.err.find(secret), std::string::npos) << outcome.Describe();
  }
  EXPECT_NE(outcome.err.find("Permission denied"), std::string::npos) << outcome.Describe();
}

// A user namespace created without capabilities inside (Ubuntu's AppArmor
// restriction): the refusal names the sysctl and the one-command fix, and
// nothing ran; --best-effort runs the no-userns rung instead.
TEST_F(Rungs, AUserNamespaceWithoutCapabilitiesNamesTheAppArmorSysctlAndTheFix) {
  SpawnOptions simulated = WithEnv({{"CORRAL_TEST_USERNS_WITHOUT_CAPS", "1"}});
  Outcome refused = RunIn({}, {"sh", "-c", "echo ran > canary"}, simulated);
  EXPECT_NE(refused.exit_code, 0) << refused.Describe();
  for (const char* part : {"no capabilities inside it", "kernel.apparmor_restrict_unprivileged_userns=1",
                           "sudo corral setup apparmor --install", "no-userns rung"}) {
    EXPECT_NE(refused.err.find(part), std::string::npos) << part << "\n" << refused.Describe();
  }
  EXPECT_FALSE(Exists(workspace_ / "canary")) << refused.Describe();

  Outcome degraded = RunIn({"--best-effort"}, {"sh", "-c", "echo ran > canary"}, simulated);
  EXPECT_EQ(degraded.exit_code, 0) << degraded.Describe();
  EXPECT_TRUE(Exists(workspace_ / "canary")) << degraded.Describe();
  EXPECT_NE(degraded.err.find("it ran without namespaces"), std::string::npos) << degraded.Describe();
}

// Landlock ABI 5 and 3: the rung is named and each right the ABI lacks is
// reported as narrowed, not claimed; the namespaces keep every guarantee, so
// the run is full and goes ahead.
TEST_F(Rungs, OlderLandlockAbisAreNamedAndNarrowed) {
  nlohmann::json five = PlanAt(5);
  EXPECT_EQ(five["rung"], "landlock-4-5") << five;
  EXPECT_EQ(five["mechanisms"]["landlock_abi"], 5) << five;
  EXPECT_EQ(five["level"], "full") << five;
  EXPECT_EQ(Status(five, "landlock scopes"), "narrowed") << five;
  EXPECT_EQ(Status(five, "landlock ioctl"), "enforced") << five;

  nlohmann::json three = PlanAt(3);
  EXPECT_EQ(three["rung"], "landlock-1-3") << three;
  EXPECT_EQ(three["mechanisms"]["landlock_abi"], 3) << three;
  EXPECT_EQ(Status(three, "landlock ioctl"), "narrowed") << three;
  EXPECT_EQ(Status(three, "landlock filesystem"), "enforced") << three;

  nlohmann::json one = PlanAt(1);
  EXPECT_EQ(one["rung"], "landlock-1-3") << one;
  EXPECT_EQ(Status(one, "landlock filesystem"), "narrowed") << one;
}

// At ABI 1 the sandbox still runs with the ruleset the ABI takes, and a
// write outside the workspace is still denied (seen outside); the trail
// names the rung.
TEST_F(Rungs, AtAbiOneTheRunNamesItsRungAndStillDeniesWritesOutside) {
  std::string target = outside_ / "written";
  Outcome outcome = RunIn({"--allow-exec", ProbesDir()}, {ProbePath("write_file"), target},
                          WithEnv({{"CORRAL_TEST_LANDLOCK_ABI", "1"}}));
  EXPECT_EQ(outcome.exit_code, kProbeBlocked) << outcome.Describe();
  EXPECT_FALSE(Exists(target));
  std::vector<nlohmann::json> spawned = AuditEvents("spawned");
  ASSERT_FALSE(spawned.empty());
  EXPECT_EQ(spawned.back()["rung"], "landlock-1-3") << spawned.back();
}

// What an older ABI cannot do is refused, never dropped: --allow-port needs
// Landlock's TCP rules (ABI 4).
TEST_F(Rungs, AllowPortBeforeAbiFourIsRefused) {
  Outcome outcome = RunIn({"--allow-port", "443"}, {"sh", "-c", "echo ran > canary"},
                          WithEnv({{"CORRAL_TEST_LANDLOCK_ABI", "3"}}));
  EXPECT_NE(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_NE(outcome.err.find("--allow-port needs Landlock's TCP rules (ABI 4"), std::string::npos)
      << outcome.Describe();
  EXPECT_NE(outcome.err.find("rung landlock-1-3"), std::string::npos) << outcome.Describe();
  EXPECT_FALSE(Exists(workspace_ / "canary"));
}

// Before ABI 6 the host's network would show the host's abstract unix
// sockets (no scopes): --network all is refused, naming the rung.
TEST_F(Rungs, TheHostsNetworkBeforeAbiSixIsRefused) {
  Outcome outcome = RunIn({"--network", "all"}, {"sh", "-c", "echo ran > canary"},
                          WithEnv({{"CORRAL_TEST_LANDLOCK_ABI", "5"}}));
  EXPECT_NE(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_NE(outcome.err.find("cannot keep the command from the host's abstract unix sockets"), std::string::npos)
      << outcome.Describe();
  EXPECT_NE(outcome.err.find("rung landlock-4-5"), std::string::npos) << outcome.Describe();
  EXPECT_FALSE(Exists(workspace_ / "canary"));
}

// No Landlock at all: refused, naming the rung; under --best-effort the
// no-landlock rung runs and its report says the exec boundary is only the
// mount view's.
TEST_F(Rungs, WithoutLandlockTheRunIsRefusedAndBestEffortSaysWhatIsLeft) {
  SpawnOptions simulated = WithEnv({{"CORRAL_TEST_LANDLOCK_ABI", "0"}});
  Outcome refused = RunIn({}, {"sh", "-c", "echo ran > canary"}, simulated);
  EXPECT_NE(refused.exit_code, 0) << refused.Describe();
  EXPECT_NE(refused.err.find("landlock: this kernel does not offer Landlock"), std::string::npos)
      << refused.Describe();
  EXPECT_NE(refused.err.find("rung no-landlock"), std::string::npos) << refused.Describe();
  EXPECT_FALSE(Exists(workspace_ / "canary"));

  Outcome check = Corral({"check", "--json"}, simulated);
  nlohmann::json host = nlohmann::json::parse(check.out, nullptr, false);
  ASSERT_FALSE(host.is_discarded()) << check.Describe();
  EXPECT_EQ(host["rung"], "refused") << host;
  EXPECT_NE(host["best_effort_rung"].get<std::string>().find("no-landlock"), std::string::npos) << host;

  nlohmann::json plan = PlanAt(0, {"--best-effort"});
  EXPECT_EQ(plan["rung"], "no-landlock") << plan;
  EXPECT_EQ(plan["level"], "degraded") << plan;
  EXPECT_EQ(Status(plan, "exec boundary"), "narrowed") << plan;
  EXPECT_EQ(Status(plan, "read boundary"), "enforced") << plan;

  std::string target = outside_ / "written";
  Outcome degraded = RunIn({"--best-effort", "--allow-exec", ProbesDir()}, {ProbePath("write_file"), target},
                           simulated);
  EXPECT_EQ(degraded.exit_code, kProbeBlocked) << degraded.Describe();  // the mount view alone
  EXPECT_FALSE(Exists(target));
}

// A host that masks parts of its /proc (Docker's default) makes the kernel
// refuse the sandbox a fresh one; simulated by CORRAL_TEST_PROC_MOUNT_REFUSED=1,
// which fails that mount as the kernel would. Without --best-effort nothing
// runs and the error names the rung and the fix. With it the masked-proc rung
// runs on an empty read-only /proc: a host process's cmdline canary is not in
// the output (judged outside; mutant masked_proc_view binds the host's
// /proc), /proc cannot be written, and the trail names the rung.
TEST_F(Rungs, AMaskedProcIsRefusedAndBestEffortShowsAnEmptyOne) {
  SpawnOptions simulated = WithEnv({{"CORRAL_TEST_PROC_MOUNT_REFUSED", "1"}});
  Outcome refused = RunIn({}, {"sh", "-c", "echo ran > canary"}, simulated);
  EXPECT_NE(refused.exit_code, 0) << refused.Describe();
  for (const char* part : {"cannot mount a fresh /proc", "masked-proc rung", "systempaths=unconfined",
                           "procMount: Unmasked"}) {
    EXPECT_NE(refused.err.find(part), std::string::npos) << part << "\n" << refused.Describe();
  }
  EXPECT_FALSE(Exists(workspace_ / "canary")) << refused.Describe();

  const std::string canary = RandomToken("HOSTPROC");
  Process host({"/bin/sh", "-c", "sleep 60; :", canary}, {});  // sh stays, $0 the canary
  auto cmdline = [&] {  // procfs files have no size: read to the end
    std::ifstream in("/proc/" + std::to_string(host.pid()) + "/cmdline", std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  // The control: the canary is in the host's /proc.
  ASSERT_TRUE(WaitFor([&] { return cmdline().find(canary) != std::string::npos; }, std::chrono::seconds(5)));
  std::string script =
      "ls -a /proc; cat /proc/[0-9]*/cmdline; echo; (: > /proc/x) 2>/dev/null || echo proc-read-only; "
      "echo ran > canary";
  Outcome degraded = RunIn({"--best-effort"}, {"sh", "-c", script}, simulated);
  ::kill(host.pid(), SIGKILL);
  host.Wait();
  EXPECT_EQ(degraded.exit_code, 0) << degraded.Describe();
  EXPECT_TRUE(Exists(workspace_ / "canary")) << degraded.Describe();
  EXPECT_EQ(degraded.out.find(canary), std::string::npos) << degraded.Describe();
  EXPECT_EQ(degraded.err.find(canary), std::string::npos) << degraded.Describe();
  EXPECT_NE(degraded.out.find("proc-read-only"), std::string::npos) << degraded.Describe();
  EXPECT_NE(degraded.err.find("an empty read-only /proc stands in"), std::string::npos) << degraded.Describe();
  std::vector<nlohmann::json> spawned = AuditEvents("spawned");
  ASSERT_FALSE(spawned.empty());
  EXPECT_EQ(spawned.back()["rung"], "masked-proc") << spawned.back();
}

// --accept-rung no-userns on a host without user namespaces: that rung runs
// without --best-effort, and still says so (stderr, the degraded and spawned
// records); a write outside lands nowhere, judged outside.
TEST_F(Rungs, AnAcceptedRungRunsAndReportsIt) {
  std::string target = outside_ / "written";
  Outcome outcome =
      WithoutUserNamespaces({"--accept-rung", "no-userns", "--allow-exec", ProbesDir()},
                            {"sh", "-c", ProbePath("write_file") + " " + target + "; echo ran > canary"});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_TRUE(Exists(workspace_ / "canary")) << outcome.Describe();
  EXPECT_FALSE(Exists(target)) << outcome.Describe();
  EXPECT_NE(outcome.err.find("degraded run (--accept-rung): it ran without namespaces"), std::string::npos)
      << outcome.Describe();
  std::vector<nlohmann::json> degraded = AuditEvents("degraded");
  EXPECT_FALSE(degraded.empty());
  std::vector<nlohmann::json> spawned = AuditEvents("spawned");
  ASSERT_FALSE(spawned.empty());
  EXPECT_NE(spawned.back()["rung"].get<std::string>().find("no-userns"), std::string::npos) << spawned.back();
}

// Accepting one rung accepts no other: no-landlock accepted does not run the
// no-userns rung, and no-userns accepted does not run the masked-proc one.
TEST_F(Rungs, AcceptingOneRungStillRefusesAnother) {
  Outcome outcome = WithoutUserNamespaces({"--accept-rung", "no-landlock"}, {"sh", "-c", "echo ran > canary"});
  EXPECT_NE(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_NE(outcome.err.find("no-userns"), std::string::npos) << outcome.Describe();
  EXPECT_FALSE(Exists(workspace_ / "canary")) << outcome.Describe();

  Outcome masked = RunIn({"--accept-rung", "no-userns"}, {"sh", "-c", "echo ran > canary"},
                         WithEnv({{"CORRAL_TEST_PROC_MOUNT_REFUSED", "1"}}));
  EXPECT_NE(masked.exit_code, 0) << masked.Describe();
  EXPECT_NE(masked.err.find("masked-proc rung"), std::string::npos) << masked.Describe();
  EXPECT_FALSE(Exists(workspace_ / "canary")) << masked.Describe();

  Outcome accepted = RunIn({"--accept-rung", "masked-proc"}, {"sh", "-c", "echo ran > canary"},
                           WithEnv({{"CORRAL_TEST_PROC_MOUNT_REFUSED", "1"}}));
  EXPECT_EQ(accepted.exit_code, 0) << accepted.Describe();
  EXPECT_TRUE(Exists(workspace_ / "canary")) << accepted.Describe();
  EXPECT_NE(accepted.err.find("an empty read-only /proc stands in"), std::string::npos) << accepted.Describe();
}

// An unknown name is one clear error, and nothing runs.
TEST_F(Rungs, AnUnknownRungNameIsRefused) {
  Outcome outcome = RunIn({"--accept-rung", "no-seccomp"}, {"sh", "-c", "echo ran > canary"});
  EXPECT_NE(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_NE(outcome.err.find("\"no-seccomp\" is not a rung that can be accepted; the names are no-userns, "
                             "no-landlock, masked-proc"),
            std::string::npos)
      << outcome.Describe();
  EXPECT_FALSE(Exists(workspace_ / "canary")) << outcome.Describe();
}

// A project file cannot accept a rung for the user (mutant
// project_accept_rung): refused naming the key and the file, nothing run,
// even on a host where the rung would be needed.
TEST_F(Rungs, AProjectFileCannotAcceptARung) {
  workspace_.Write("corral.toml", "[sandbox]\naccept_rung = [\"no-userns\"]\n");
  Outcome outcome = WithoutUserNamespaces({}, {"sh", "-c", "echo ran > canary"});
  EXPECT_NE(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_NE(outcome.err.find("corral.toml:2:"), std::string::npos) << outcome.Describe();
  EXPECT_NE(outcome.err.find("sandbox.accept_rung[0]: the project config cannot accept the rung no-userns"),
            std::string::npos)
      << outcome.Describe();
  EXPECT_FALSE(Exists(workspace_ / "canary")) << outcome.Describe();
}

// `corral setup apparmor` names the binary that runs, by its real path, and
// --install writes exactly that profile and prints the command that loads it.
TEST_F(Rungs, SetupAppArmorNamesThisBinary) {
  Outcome printed = Corral({"setup", "apparmor"});
  EXPECT_EQ(printed.exit_code, 0) << printed.Describe();
  EXPECT_NE(printed.out.find("profile corral \"" + CorralBin() + "\" flags=(unconfined) {"), std::string::npos)
      << printed.Describe();
  EXPECT_NE(printed.out.find("\n  userns,\n"), std::string::npos) << printed.Describe();

  TempDir directory("corral-apparmor");
  Outcome installed = Corral({"setup", "apparmor", "--install", "--directory", directory.path()});
  EXPECT_EQ(installed.exit_code, 0) << installed.Describe();
  EXPECT_EQ(ReadFile(directory / "corral"), printed.out);
  EXPECT_NE(installed.out.find("sudo apparmor_parser -r " + (directory / "corral")), std::string::npos)
      << installed.Describe();
}

}  // namespace
}  // namespace corral_it
