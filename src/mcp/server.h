// The stdio MCP server behind `corral mcp`: the agent's tools
// (tools/catalog.h), confined, for any MCP client.
//
// Protocol: JSON-RPC 2.0, one message per line (mcp/json_rpc.h), messages of
// at most 32 MiB. initialize negotiates the protocol version: a version the
// server speaks (2025-06-18, 2025-03-26, 2024-11-05) is answered in kind,
// any other with the newest one (the client then decides, as the
// specification says). Then ping, tools/list, tools/call, logging/setLevel;
// notifications/cancelled kills a running bash tree; a bash call whose
// params carry _meta.progressToken gets notifications/progress every 5
// seconds while it runs; anything else is -32601. logging/setLevel is
// accepted; the server sends no log messages (corral's own go to stderr). A bad message gets its error and the session goes on.
//
// Each tools/call, on a thread of its own (at most 16 at once; another is
// refused with -32600 until one answers):
//   1. the arguments are checked (tools/catalog.h)       -> -32602
//   2. the policy is resolved again from the server's request (flags,
//      config, preset): a config edited during the session applies to the
//      next call, and nothing is remembered between calls (no
//      allow-for-session in MCP: an answer covers its one call)
//   3. the tool rule (gate/tool_rules.h): allow, deny, or ask. "Ask" is an
//      elicitation/create request to the client, when it declared the
//      elicitation capability; accept runs this one call. A client without
//      it gets a denial saying so; nothing falls back to allow.
//   4. an escalation (sandbox_permissions + justification) is asked the
//      same way (gate/escalation.h) and widens this one call's mode only
//   5. the tool runs: the file tools behind a Fence made from that policy,
//      bash through gate::Admit and RunConfined
//   6. one `tool` audit record: tool, decision, outcome, reason, policy
//      fingerprint; never file contents or command output
// The result's content is text; structuredContent carries `outcome` (ok,
// denied, failed) and the tool's data; isError is set unless ok.
#pragma once

#include <optional>
#include <string>

#include "audit/audit.h"
#include "policy/roots.h"
#include "resolve/request.h"

namespace corral::mcp {

struct ServerOptions {
  RunRequest request;  // the policy flags, config and preset, resolved per call
  HostContext host;
  const AuditTrail* trail = nullptr;      // not owned
  std::optional<std::string> state_home;  // RunOptions::state_home
  int in_fd = 0;
  int out_fd = 1;
};

// Serves until the input ends; returns the exit status (0).
int Serve(const ServerOptions& options);

}  // namespace corral::mcp
