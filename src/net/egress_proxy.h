// The sandbox's only way out under --allow-host: a proxy in corral's
// supervisor, outside the sandbox, that accepts on listening sockets the
// sandbox's init made inside its own empty network namespace (127.0.0.1:3128
// for HTTP, 127.0.0.1:1080 for SOCKS5) and passed out. Nothing on the host
// can reach it: the sockets live in the sandbox's namespace. It speaks
//
//   HTTP CONNECT   the tunnel (TLS stays end to end: the proxy sees the
//                  name and port, never a path or a byte of what is sent);
//   HTTP forward   absolute-form requests (`GET http://host/path`), one
//                  request per connection: the head is rewritten to
//                  origin-form without hop-by-hop headers, `Connection:
//                  close` added, and only Content-Length bodies are sent on
//                  (a chunked request body is refused with 501);
//   SOCKS5         CONNECT with a name or an address (socks5h: the name is
//                  resolved here, not in the sandbox);
//   local          a --allow-local port: no protocol, each connection relayed
//                  to the same port of the host's 127.0.0.1 (the rule is the
//                  listener itself; the gate is not asked);
//   transparent    a client that ignores the proxy variables: it looked up
//                  an allowed name, got the name's synthetic address
//                  (net/synthetic_names.h) and connected to it, on a port a
//                  captured listener holds on every address. The address the
//                  connection was made to (getsockname) names the name; an
//                  address no name was given is refused. No protocol: the
//                  gate decides on that name and the listener's port, and
//                  a refusal, or a connection that fails, is a reset.
//
// For each connection the gate (net/egress_gate.h) decides on the name and
// port as asked, before any lookup; the name is then resolved here (the
// static names first, then the system resolver), each address is checked,
// and the proxy connects to the first address that passed: never to an
// address it did not check, never after a second lookup. A gate that asks
// (net/asking_gate.h) may hold a connection instead (EgressBasis::kAsk):
// the question runs off the proxy's thread, the other connections go on,
// and the held one goes on with the answer, or is refused when none comes
// within `ask_timeout`; an allowed answer still has its addresses checked.
// A refusal gets a
// 403 whose one-line body names the host, the port and the rule (SOCKS5: the
// "not allowed by ruleset" or "host unreachable" code), and is reported to
// `on_decision`; so is a request the readers refused (no host, the reader's
// message as the rule), and each allowed connection when it ends, with the
// bytes each way. No payload, header or URL is reported.
//
// What the client sends is untrusted: the readers are strict (net/
// http_head.h, net/socks5.h), a malformed request closes that connection
// alone with a 400 (or the SOCKS5 failure code), a head must come within
// `head_timeout`, and at most `max_connections` are open at once (one more
// is closed at once). Everything runs on the proxy's one thread; Stop (also
// the destructor) closes every connection and joins it.
//
// An allowed connection's bytes go socket to socket with splice(2) through a
// pipe, never copied into the proxy; the pipe is held only while bytes move
// (two descriptors more for each direction then). The proxy's thread blocks
// SIGPIPE, which splice into a closed socket raises. Its loopback sockets
// (the sandbox's side of each connection; a destination on 127.0.0.1) use
// the reno congestion control, which never paces its sends; any other
// keeps the host's default.
//
//   CORRAL_ASSIGN_OR_RETURN(auto proxy, EgressProxy::Start(std::move(listeners), gate, options));
//   ... the run ...
//   proxy->Stop();
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "base/unique_fd.h"
#include "net/address.h"
#include "net/egress_gate.h"
#include "net/synthetic_names.h"

namespace corral {

enum class EgressProtocol { kHttpConnect, kHttpForward, kSocks5, kLocal, kTransparent };

// "connect", "http", "socks5", "local", "transparent"
std::string_view EgressProtocolName(EgressProtocol protocol);

// One connection's decision, as the trail records it.
struct EgressDecision {
  EgressProtocol protocol = EgressProtocol::kHttpConnect;
  std::string host;  // as the client named it (normal form)
  uint16_t port = 0;
  EgressVerdict verdict = EgressVerdict::kDenied;
  std::string rule;     // EgressRuling::rule, or why the address or the connection failed
  std::string address;  // the address connected to; empty when none was
  uint64_t bytes_sent = 0;      // from the sandbox to the destination
  uint64_t bytes_received = 0;  // from the destination to the sandbox
  // A place someone was asked about (net/asking_gate.h): who answered (or
  // could not), and, when allowed, for what scope. Empty when nobody was asked.
  std::string answered_by;
  std::optional<EgressScope> scope;
};

// A --allow-local listener: a connection to it is relayed, byte for byte,
// to the same port of the host's 127.0.0.1, and nowhere else.
struct LocalListener {
  uint16_t port = 0;
  UniqueFd fd;
};

// The listening sockets the sandbox's init passed out; any may be absent.
struct EgressListeners {
  UniqueFd http;
  UniqueFd socks;
  std::vector<LocalListener> local;
  // Transparent capture: a listener on every address of the sandbox's
  // namespace, per port (the port is the connection's).
  std::vector<LocalListener> captured;
};

struct EgressOptions {
  // Names answered here, before the system resolver is asked; a name found
  // here is never sent to it.
  std::map<std::string, std::vector<Address>> names;
  size_t max_connections = 512;
  std::chrono::milliseconds head_timeout{30000};
  std::chrono::milliseconds connect_timeout{30000};
  // A name no static entry holds is looked up as an absolute name (no search
  // domain appended), on a thread of its own, at most 64 at once; one that
  // takes longer than this is refused.
  std::chrono::milliseconds lookup_timeout{10000};
  // A connection the gate holds for an answer (EgressBasis::kAsk) is
  // refused when none comes within this.
  std::chrono::milliseconds ask_timeout{60000};
  // Called on the proxy's thread: for a refusal at once, for an allowed
  // connection when it ends.
  std::function<void(const EgressDecision&)> on_decision;
  // The names behind the synthetic addresses, for the captured listeners;
  // without it every captured connection is refused.
  std::shared_ptr<const SyntheticNames> synthetic;
};

class EgressProxy {
 public:
  static Result<std::unique_ptr<EgressProxy>> Start(EgressListeners listeners,
                                                    std::shared_ptr<const EgressGate> gate, EgressOptions options);
  ~EgressProxy();
  EgressProxy(const EgressProxy&) = delete;
  EgressProxy& operator=(const EgressProxy&) = delete;

  // Closes the listeners and every connection, and joins the thread.
  // Idempotent.
  void Stop();

  class Impl;

 private:
  explicit EgressProxy(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The one-line body of a refusal: "corral: blocked connection to HOST:PORT: RULE".
std::string EgressRefusalLine(const std::string& host, uint16_t port, const std::string& rule);

}  // namespace corral
