// The name server a --network none sandbox sees at 127.0.0.1:53: every
// query gets NXDOMAIN at once, nothing is forwarded, and corral names what
// was looked up in one line when the run ends. Under --allow-host, a name
// the rules allow is answered instead with its synthetic address on the
// sandbox's loopback (net/synthetic_names.h), still without asking anyone.
//
// The sandbox's first child binds a UDP socket and a listening TCP socket
// on 127.0.0.1:53 inside the sandbox's own network namespace (it still has
// CAP_NET_BIND_SERVICE there) and passes them out; corral's supervisor,
// outside the sandbox, polls them with everything else it waits for. A
// query that ParseDnsQuery refuses gets no answer. At most kMaxConnections
// TCP connections are served at a time (one more is closed at once), each
// buffers at most one message, and one that does not take its answer at
// once is closed: nothing the command does can make the supervisor wait.
//
//   DnsStub stub(std::move(udp), std::move(tcp));
//   stub.Fill(fds); poll(...); stub.Handle(fds);
//   if (auto line = stub.Summary("--network none")) std::fprintf(stderr, "corral: %s\n", line->c_str());
#pragma once

#include <poll.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/unique_fd.h"
#include "net/dns_message.h"
#include "net/synthetic_names.h"

namespace corral {

class DnsStub {
 public:
  static constexpr size_t kMaxConnections = 4;
  static constexpr size_t kSlots = 2 + kMaxConnections;  // pollfd entries Fill sets
  static constexpr size_t kMaxNames = 64;                // names kept; the rest are counted

  // With `synthetic` (under --allow-host), a name it gives an address to is
  // answered with that address (an A query) or no data (any other type, so
  // a client falls back to IPv4), and is not counted as refused.
  DnsStub(UniqueFd udp, UniqueFd tcp, std::shared_ptr<SyntheticNames> synthetic = nullptr);

  // Sets kSlots entries (unused ones to fd -1).
  void Fill(struct pollfd fds[kSlots]) const;
  // Serves what the poll said is ready.
  void Handle(const struct pollfd fds[kSlots]);

  // The distinct names looked up, in the order first seen (at most kMaxNames).
  const std::vector<std::string>& names() const { return names_; }
  // "no network: lookup of NAME refused (MODE)", with " and N more" for the
  // other distinct names; nothing when none was asked.
  std::optional<std::string> Summary(std::string_view mode) const;

 private:
  struct Connection {
    UniqueFd fd;
    std::vector<uint8_t> buffer;
  };
  void ServeDatagrams();
  void Accept();
  void Serve(Connection& connection);
  void Remember(const std::string& name);
  std::vector<uint8_t> AnswerFor(const DnsQuery& query);

  UniqueFd udp_;
  UniqueFd tcp_;
  std::shared_ptr<SyntheticNames> synthetic_;
  std::vector<Connection> connections_;
  std::vector<std::string> names_;
  size_t more_ = 0;
};

}  // namespace corral
