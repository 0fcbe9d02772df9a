#include "exec/warm_sandbox.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <utility>

#include "base/mutant.h"
#include "base/unique_fd.h"
#include "exec/warm_protocol.h"

namespace corral {

// The channel and what the calls and the sandbox share about it.
struct WarmState {
  UniqueFd control;
  std::mutex mutex;  // guards what follows, and each message sent
  bool closed = false;
  bool busy = false;
  uint32_t sequence = 0;

  // One message to init; a channel whose init is gone takes nothing, which
  // is no error: there is nothing left to signal.
  Result<void> Send(const WarmRequest& request) {
    std::lock_guard<std::mutex> lock(mutex);
    if (closed) return {};
    ssize_t n;
    do {
      n = ::send(control.get(), &request, sizeof request, MSG_NOSIGNAL);
    } while (n < 0 && errno == EINTR);
    if (n < 0 && errno != EPIPE && errno != ECONNRESET) {
      return Error::FromErrno(ErrorKind::kInternal, "cannot reach the warm sandbox's init", "send", errno);
    }
    return {};
  }
};

namespace {

// One call's side of the channel: its sequence number names it to init.
class WarmCallChannel final : public CallChannel {
 public:
  WarmCallChannel(std::shared_ptr<WarmState> state, uint32_t sequence)
      : state_(std::move(state)), sequence_(sequence) {}
  Result<void> Kill() override { return Send(WarmRequestKind::kKill, 0); }
  Result<void> Forward(int signal) override { return Send(WarmRequestKind::kSignal, signal); }
  void Ended() override {
    std::lock_guard<std::mutex> lock(state_->mutex);
    if (state_->sequence == sequence_) state_->busy = false;
  }

 private:
  Result<void> Send(WarmRequestKind kind, int signal) {
    WarmRequest request;
    request.kind = kind;
    request.sequence = sequence_;
    request.signal = signal;
    return state_->Send(request);
  }
  std::shared_ptr<WarmState> state_;
  uint32_t sequence_;
};

// Descriptors 0-2 pass into the sandbox as they are: a directory (or an
// O_PATH descriptor) there would be a way around the mount view.
Result<void> CheckStdio(int fd) {
  struct stat st;
  int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0) return Error::FromErrno(ErrorKind::kUsage, "descriptor " + std::to_string(fd) + " is not open", "fcntl", errno);
  if ((flags & O_PATH) != 0 || (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode))) {
    return Error(ErrorKind::kUsage, "descriptor " + std::to_string(fd) +
                                        " is a directory or a path handle; the command would reach outside its "
                                        "grants through it, so nothing was run");
  }
  return {};
}

Result<void> SendAll(int channel, const WarmRequest& request, const int* fds, int count, const std::string& payload) {
  alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int) * kWarmCallFds)] = {};
  struct iovec data = {const_cast<WarmRequest*>(&request), sizeof request};
  struct msghdr message = {};
  message.msg_iov = &data;
  message.msg_iovlen = 1;
  message.msg_control = control;
  message.msg_controllen = CMSG_SPACE(sizeof(int) * count);
  struct cmsghdr* header = CMSG_FIRSTHDR(&message);
  header->cmsg_level = SOL_SOCKET;
  header->cmsg_type = SCM_RIGHTS;
  header->cmsg_len = CMSG_LEN(sizeof(int) * count);
  ::memcpy(CMSG_DATA(header), fds, sizeof(int) * count);
  ssize_t n;
  do {
    n = ::sendmsg(channel, &message, MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(sizeof request)) {
    return Error::FromErrno(ErrorKind::kInternal, "the warm sandbox did not take the call", "sendmsg", errno);
  }
  for (size_t sent = 0; sent < payload.size();) {
    size_t chunk = std::min(kWarmChunk, payload.size() - sent);
    n = ::send(channel, payload.data() + sent, chunk, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n != static_cast<ssize_t>(chunk)) {
      return Error::FromErrno(ErrorKind::kInternal, "the warm sandbox did not take the call", "send", errno);
    }
    sent += chunk;
  }
  return {};
}

Error Lost() {
  return Error(ErrorKind::kInternal,
               "the warm sandbox's init has ended (killed from outside, or it failed); start a new one")
      .WithCode("warm_lost");
}

}  // namespace

Result<void> WarmSandbox::Supports(const Plan& plan) {
  if (!plan.mechanisms().namespaces) {
    return Error(ErrorKind::kUnsupported,
                 "a warm sandbox needs namespaces of its own (its PID namespace is what proves that nothing of a "
                 "call survives into the next), and this plan has none; run the command cold")
        .WithCode("warm_unsupported");
  }
  if (plan.services().Forwards()) {
    return Error(ErrorKind::kUnsupported,
                 "a warm sandbox does not carry corral's egress proxy yet (--allow-host, --allow-local, captured "
                 "ports); run the command cold")
        .WithCode("warm_unsupported");
  }
  // A cgroup bounds one run's sandbox as a whole, and its counters say
  // which limit ended that run; a warm sandbox would share both among its
  // calls. Such a plan runs cold, where the limits hold as documented.
  if (plan.cgroup().wanted() && !MutantActive(Mutant::kWarmCgroup)) {
    return Error(ErrorKind::kUnsupported,
                 "a warm sandbox does not run in a cgroup of its own: --max-procs and --max-memory with the host's "
                 "cgroup bound each run's whole sandbox, so they run cold")
        .WithCode("warm_unsupported");
  }
  return {};
}

Result<std::unique_ptr<WarmSandbox>> WarmSandbox::Start(const Plan& plan) {
  CORRAL_TRY(Supports(plan));
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) != 0) {
    return Error::FromErrno(ErrorKind::kInternal, "cannot create the warm sandbox's channel", "socketpair", errno);
  }
  UniqueFd ours(fds[0]);
  UniqueFd theirs(fds[1]);
  Command start;
  start.warm_control_fd = theirs.get();
  Result<SandboxProcess> init = Spawn(plan, start, SpawnMode::kWarm);
  theirs.Reset();
  if (!init.ok()) return std::move(init).error();
  std::unique_ptr<WarmSandbox> sandbox(new WarmSandbox());
  sandbox->init_ = std::move(init).value();
  sandbox->state_ = std::make_shared<WarmState>();
  sandbox->state_->control = std::move(ours);
  sandbox->fingerprint_ = plan.Fingerprint();
  sandbox->etc_view_ = plan.etc_view();
  return sandbox;
}

WarmSandbox::~WarmSandbox() { Close(); }

void WarmSandbox::Close() {
  if (state_) {
    std::lock_guard<std::mutex> lock(state_->mutex);
    state_->closed = true;
  }
  (void)init_.Kill();
  init_.Reap();
}

bool WarmSandbox::lost() const {
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    if (state_->closed) return false;
  }
  struct pollfd init = {init_.pidfd(), POLLIN, 0};
  return ::poll(&init, 1, 0) != 0;
}

uint32_t WarmSandbox::calls() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->sequence;
}

Result<SandboxProcess> WarmSandbox::Run(Command& command) {
  if (command.argv.empty() || command.argv[0].empty()) return Error(ErrorKind::kUsage, "empty command");
  if (command.pty) {
    return Error(ErrorKind::kUnsupported,
                 "a warm sandbox gives a call no pty of its own; the command was not run (run it cold)")
        .WithCode("tty_unsupported");
  }
  if (command.cwd.empty() || command.cwd[0] != '/') {
    return Error(ErrorKind::kUsage, "a warm call's working directory must be an absolute path inside the sandbox");
  }
  const int stdio[3] = {command.stdin_fd >= 0 ? command.stdin_fd : 0, command.stdout_fd >= 0 ? command.stdout_fd : 1,
                        command.stderr_fd >= 0 ? command.stderr_fd : 2};
  for (int fd : stdio) CORRAL_TRY(CheckStdio(fd));
  std::string payload;
  for (const std::string& arg : command.argv) payload.append(arg).push_back('\0');
  for (const std::string& entry : command.env) payload.append(entry).push_back('\0');
  payload.append(command.cwd).push_back('\0');
  if (payload.size() > kWarmPayloadMax) {
    return Error(ErrorKind::kUsage, "the command's arguments, environment and working directory take " +
                                        std::to_string(payload.size()) + " bytes; a warm call carries at most " +
                                        std::to_string(kWarmPayloadMax) + ". The command was not run (run it cold)")
        .WithCode("warm_too_large");
  }
  WarmRequest request;
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    if (state_->closed) {
      return Error(ErrorKind::kUnsupported, "the warm sandbox is closed; start a new one").WithCode("warm_closed");
    }
    if (state_->busy) {
      return Error(ErrorKind::kUsage, "a warm sandbox runs one call at a time, and its previous call is still running")
          .WithCode("warm_busy");
    }
    struct pollfd init = {init_.pidfd(), POLLIN, 0};
    if (::poll(&init, 1, 0) != 0) return Lost();
    state_->busy = true;
    request.sequence = ++state_->sequence;
  }
  // Until the call runs, a failure frees the sandbox for the next one.
  struct Unbusy {
    WarmState* state;
    ~Unbusy() {
      if (state == nullptr) return;
      std::lock_guard<std::mutex> lock(state->mutex);
      state->busy = false;
    }
  } unbusy{state_.get()};

  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    return Error::FromErrno(ErrorKind::kInternal, "cannot create a pipe", "pipe2", errno);
  }
  UniqueFd status_read(pipe_fds[0]);
  UniqueFd status_write(pipe_fds[1]);
  request.kind = WarmRequestKind::kCall;
  request.argc = static_cast<uint32_t>(command.argv.size());
  request.envc = static_cast<uint32_t>(command.env.size());
  request.payload = static_cast<uint32_t>(payload.size());
  int fds[kWarmCallFds] = {stdio[0], stdio[1], stdio[2], status_write.get(), command.program.get()};
  int count = 4;
  if (command.program) {
    request.flags = WarmCallFlags::kPinnedProgram;
    count = 5;
  }
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    Result<void> sent = SendAll(state_->control.get(), request, fds, count, payload);
    if (!sent.ok()) return Lost();
  }
  status_write.Reset();
  WarmReply reply;
  ssize_t n;
  do {
    n = ::recv(state_->control.get(), &reply, sizeof reply, 0);
  } while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(sizeof reply) || reply.sequence != request.sequence) return Lost();
  if (reply.started == 0) {
    if (reply.report.stage == ChildStage::kChdir) {
      return Error(ErrorKind::kUsage, "the working directory " + command.cwd +
                                          " is not a directory inside the sandbox's view; the command was not run",
                   "chdir", reply.report.error);
    }
    static const MountPlan kNoMounts;
    return TranslateReport(kNoMounts, reply.report);
  }
  SandboxProcess call;
  call.own_pid_namespace_ = true;
  call.pid_ = init_.pid();
  call.pidfd_.Reset(::fcntl(init_.pidfd(), F_DUPFD_CLOEXEC, 3));
  if (!call.pidfd_) {
    (void)WarmCallChannel(state_, request.sequence).Kill();
    return Error::FromErrno(ErrorKind::kInternal, "cannot watch the warm sandbox", "fcntl", errno);
  }
  call.status_ = std::move(status_read);
  call.dns_ = init_.dns_;
  call.call_ = std::make_shared<WarmCallChannel>(state_, request.sequence);
  unbusy.state = nullptr;  // busy until the call is reaped
  return call;
}

}  // namespace corral
