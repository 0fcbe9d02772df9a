#include "cli/approval_flags.h"

#include <CLI/CLI.hpp>

#include "gate/channel_approver.h"
#include "gate/network_approval.h"
#include "gate/tty_approver.h"

namespace corral::cli {

void ApprovalFlags::Register(CLI::App& app) {
  app.add_option("--approval-fd", fd,
                 "ask the harness on socket N (one end of a socketpair) instead of the terminal, one JSON line "
                 "each way (docs/approval.md); closed before the command runs, unless the run asks about its "
                 "connections there (docs/network.md)")
      ->type_name("N");
  app.add_option("--approval-timeout", timeout_seconds,
                 "with --approval-fd: deny when no answer comes within SECONDS (default 300)")
      ->type_name("SECONDS");
}

void ApprovalFlags::RegisterNetwork(CLI::App& app) {
  app.add_option("--network-approval-timeout", network_timeout_seconds,
                 "under --allow-host with an approval policy that asks: refuse a connection to a host no rule names "
                 "when no answer comes within SECONDS (default " +
                     std::to_string(gate::kDefaultNetworkApprovalTimeout.count()) + ")")
      ->type_name("SECONDS");
}

Result<std::chrono::milliseconds> ApprovalFlags::NetworkTimeout() const {
  if (!network_timeout_seconds) return std::chrono::milliseconds(gate::kDefaultNetworkApprovalTimeout);
  if (*network_timeout_seconds < 1 || *network_timeout_seconds > gate::kMaxNetworkApprovalTimeout.count()) {
    return Error(ErrorKind::kUsage, "--network-approval-timeout: must be between 1 and " +
                                        std::to_string(gate::kMaxNetworkApprovalTimeout.count()) + " seconds");
  }
  return std::chrono::milliseconds(std::chrono::seconds(*network_timeout_seconds));
}

Result<std::unique_ptr<Approver>> ApprovalFlags::MakeApprover() const {
  if (!fd) {
    if (timeout_seconds) return Error(ErrorKind::kUsage, "--approval-timeout needs --approval-fd");
    return std::unique_ptr<Approver>(std::make_unique<TtyApprover>());
  }
  std::chrono::seconds timeout = ChannelApprover::kDefaultTimeout;
  if (timeout_seconds) {
    if (*timeout_seconds < 1 || *timeout_seconds > ChannelApprover::kMaxTimeout.count()) {
      return Error(ErrorKind::kUsage, "--approval-timeout: must be between 1 and " +
                                          std::to_string(ChannelApprover::kMaxTimeout.count()) + " seconds");
    }
    timeout = std::chrono::seconds(*timeout_seconds);
  }
  CORRAL_ASSIGN_OR_RETURN(ChannelApprover channel, ChannelApprover::FromFd(*fd, timeout));
  return std::unique_ptr<Approver>(std::make_unique<ChannelApprover>(std::move(channel)));
}

}  // namespace corral::cli
