// `--approval-fd N` and `--approval-timeout SECONDS`, shared by `run` and
// `wrap`: who answers the gate's questions. Without them, the person at the
// terminal (TtyApprover); with them, the harness at the other end of the
// socket N (ChannelApprover, gate/channel_approver.h). There is no fallback
// from a channel to the terminal: a channel that fails denies.
#pragma once

#include <chrono>
#include <memory>
#include <optional>

#include "base/result.h"
#include "gate/approval.h"

namespace CLI {
class App;
}

namespace corral::cli {

struct ApprovalFlags {
  std::optional<int> fd;
  std::optional<long long> timeout_seconds;
  std::optional<long long> network_timeout_seconds;

  void Register(CLI::App& app);
  // `--network-approval-timeout SECONDS` (run only): how long a connection
  // held for a network approval waits for its answer.
  void RegisterNetwork(CLI::App& app);
  // The flag's value, or gate::kDefaultNetworkApprovalTimeout; out of 1 to
  // gate::kMaxNetworkApprovalTimeout is ErrorKind::kUsage.
  Result<std::chrono::milliseconds> NetworkTimeout() const;
  // The approver the flags name. A bad descriptor or timeout is an
  // ErrorKind::kUsage error. Destroying a channel approver closes its
  // descriptor: callers do so as soon as the gate has decided.
  Result<std::unique_ptr<Approver>> MakeApprover() const;
};

}  // namespace corral::cli
