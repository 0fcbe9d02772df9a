#include "net/hosts_file.h"

#include <arpa/nameser.h>
#include <netdb.h>
#include <poll.h>
#include <resolv.h>
#include <strings.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <span>

#include "base/await_ready.h"
#include "base/unique_fd.h"

namespace corral {

std::map<std::string, std::vector<Address>> ParseHostsFile(std::string_view text) {
  std::map<std::string, std::vector<Address>> names;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    std::string_view line = text.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at);
    at = end == std::string_view::npos ? text.size() : end + 1;
    line = line.substr(0, line.find('#'));
    std::vector<std::string_view> words;
    for (size_t i = 0; i < line.size();) {
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
      size_t start = i;
      while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
      if (i > start) words.push_back(line.substr(start, i - start));
    }
    if (words.size() < 2) continue;
    Result<Address> address = ParseAddress(words[0]);
    if (!address.ok()) continue;
    for (size_t i = 1; i < words.size(); ++i) {
      std::string name(words[i]);
      std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
      if (!name.empty() && name.back() == '.') name.pop_back();
      if (name.empty()) continue;
      std::vector<Address>& addresses = names[name];
      if (std::find(addresses.begin(), addresses.end(), *address) == addresses.end()) addresses.push_back(*address);
    }
  }
  return names;
}

std::map<std::string, std::vector<Address>> ReadHostsFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return ParseHostsFile(text.substr(0, 1 << 20));
}

namespace {

// How a query goes to the servers: UDP, with TCP for a truncated answer,
// or TCP alone (resolv.conf's use-vc).
enum class Transport { kUdp, kTcp };

// How one query ended: with records, with none of its type (the name has
// others, or the server failed), or so that no second query is worth
// asking (no such name, or no server answered).
enum class QueryEnd { kAnswered, kNoData, kStop };

// The most names of one CNAME chain followed (the name asked included): a
// server's answer can list thousands of records, and each record is looked
// up in the chain.
constexpr size_t kMostChainLinks = 16;

// One query and its answer over a TCP connection to `server`, each part
// within the deadline. The answer's length, or -1.
int ExchangeOverTcp(const sockaddr* server, socklen_t server_length, const std::vector<unsigned char>& query,
                    std::vector<unsigned char>& answer, std::chrono::steady_clock::time_point deadline) {
  UniqueFd socket(::socket(server->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!socket) return -1;
  if (::connect(socket.get(), server, server_length) != 0) {
    if (errno != EINPROGRESS || !AwaitReady(socket.get(), POLLOUT, deadline)) return -1;
    int error = 0;
    socklen_t length = sizeof error;
    if (::getsockopt(socket.get(), SOL_SOCKET, SO_ERROR, &error, &length) != 0 || error != 0) return -1;
  }
  std::vector<unsigned char> framed = {static_cast<unsigned char>(query.size() >> 8),
                                       static_cast<unsigned char>(query.size())};
  framed.insert(framed.end(), query.begin(), query.end());
  for (size_t sent = 0; sent < framed.size();) {
    ssize_t n = ::send(socket.get(), framed.data() + sent, framed.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<size_t>(n);
    } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
      return -1;
    } else if (!AwaitReady(socket.get(), POLLOUT, deadline)) {
      return -1;
    }
  }
  // Two bytes of length, then that many of answer.
  auto read_exactly = [&](unsigned char* into, size_t count) {
    for (size_t got = 0; got < count;) {
      ssize_t n = ::recv(socket.get(), into + got, count - got, 0);
      if (n > 0) {
        got += static_cast<size_t>(n);
      } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
        return false;
      } else if (!AwaitReady(socket.get(), POLLIN, deadline)) {
        return false;
      }
    }
    return true;
  };
  unsigned char prefix[2];
  if (!read_exactly(prefix, sizeof prefix)) return -1;
  size_t length = static_cast<size_t>(prefix[0]) << 8 | prefix[1];
  if (length < HFIXEDSZ || length > answer.size() || !read_exactly(answer.data(), length)) return -1;
  // The answer to this query: its id, and a response.
  if (answer[0] != query[0] || answer[1] != query[1] || (answer[2] & 0x80) == 0) return -1;
  return static_cast<int>(length);
}

// resolv.conf's edns0, as glibc's res_nquery honours it (res_nmkquery
// alone does not): an OPT record offering UDP answers of up to 1200 bytes
// (what glibc offers), so an answer that size needs no second query over
// TCP.
constexpr unsigned kEdnsUdpSize = 1200;

void AddEdnsOption(std::vector<unsigned char>& query) {
  // The root name, type OPT (41), the UDP size in its class, no extended
  // rcode, version or flags, and no data.
  const unsigned char option[] = {0, 0, 41, kEdnsUdpSize >> 8, kEdnsUdpSize & 0xff, 0, 0, 0, 0, 0, 0};
  query.insert(query.end(), std::begin(option), std::end(option));
  const unsigned additional = (static_cast<unsigned>(query[10]) << 8 | query[11]) + 1;
  query[10] = static_cast<unsigned char>(additional >> 8);
  query[11] = static_cast<unsigned char>(additional);
}

// The rcode of a whole header.
int Rcode(const std::vector<unsigned char>& answer) { return answer[3] & 0x0f; }

// The query asked over TCP of the resolver's servers in turn (IPv4 and
// IPv6 ones), the first answer that says something taken (NOERROR or
// NXDOMAIN: a server that fails or refuses is passed over, as glibc passes
// it over on UDP); -1 when none answered so by the deadline. Each server
// gets an equal share of the time left, so one that drops TCP does not
// take all of it. glibc's own TCP path has no deadline (a blocking connect
// and read), so corral never lets it run (RES_IGNTC, and RES_USEVC
// cleared) and asks over TCP itself.
int QueryOverTcp(res_state state, const std::vector<unsigned char>& query, std::vector<unsigned char>& answer,
                 std::chrono::steady_clock::time_point deadline) {
  const int servers = std::min(state->nscount, MAXNS);
  if (servers <= 0) return -1;
  // resolv.conf's rotate: each query starts at the next server, round robin.
  static std::atomic<unsigned> next_first{0};
  const int first = (state->options & RES_ROTATE) != 0 ? static_cast<int>(next_first++ % servers) : 0;
  for (int tried = 0; tried < servers; ++tried) {
    const int i = (first + tried) % servers;
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) break;
    const auto until = now + (deadline - now) / (servers - tried);
    int got = -1;
    if (state->nsaddr_list[i].sin_family == AF_INET) {
      got = ExchangeOverTcp(reinterpret_cast<const sockaddr*>(&state->nsaddr_list[i]), sizeof(sockaddr_in), query,
                            answer, until);
    } else if (state->_u._ext.nsaddrs[i] != nullptr && state->_u._ext.nsaddrs[i]->sin6_family == AF_INET6) {
      got = ExchangeOverTcp(reinterpret_cast<const sockaddr*>(state->_u._ext.nsaddrs[i]), sizeof(sockaddr_in6), query,
                            answer, until);
    }
    if (got > 0 && (Rcode(answer) == ns_r_noerror || Rcode(answer) == ns_r_nxdomain)) return got;
  }
  return -1;
}

// A name in presentation form without its root dot.
std::string SansDot(std::string name) {
  if (!name.empty() && name.back() == '.') name.pop_back();
  return name;
}

// The A or AAAA records `name` has (AddressesInDnsAnswer). The query goes
// out over UDP through res_nsend (which gives the reply whatever its rcode
// and answer count, so a truncated reply with no records is seen for what
// it is), unless the resolver's options ask for TCP (use-vc). Then, and
// when a UDP reply comes truncated, it goes over TCP by QueryOverTcp, by
// `tcp_deadline`. A truncated reply stands when no server answers it over
// TCP.
QueryEnd Query(res_state state, Transport transport, const std::string& name, int type,
               std::chrono::steady_clock::time_point tcp_deadline, bool& edns_refused,
               std::vector<unsigned char>& answer, std::vector<Address>& addresses) {
  std::vector<unsigned char> query(NS_PACKETSZ);
  int query_length = ::res_nmkquery(state, ns_o_query, name.c_str(), ns_c_in, type, nullptr, 0, nullptr,
                                    query.data(), static_cast<int>(query.size()));
  if (query_length <= 0) return QueryEnd::kNoData;
  query.resize(static_cast<size_t>(query_length));
  int length = -1;
  if (transport == Transport::kUdp) {
    // Over UDP with EDNS0 where resolv.conf asks for it. A server that
    // refuses it with FORMERR is asked again without it, and the rest of
    // the lookup goes without (glibc 2.36 has no such retry). One that
    // answers FORMERR without repeating the question is dropped by
    // res_nsend as a stray reply and so looks silent, as under glibc.
    for (bool with_edns : {true, false}) {
      if (with_edns && (edns_refused || (state->options & RES_USE_EDNS0) == 0)) continue;
      std::vector<unsigned char> sent = query;
      if (with_edns) AddEdnsOption(sent);
      errno = 0;
      length = ::res_nsend(state, sent.data(), static_cast<int>(sent.size()), answer.data(),
                           static_cast<int>(answer.size()));
      if (length < 0) {
        // No server answered (or every one failed): not worth a second query.
        return errno == ETIMEDOUT || errno == ECONNREFUSED ? QueryEnd::kStop : QueryEnd::kNoData;
      }
      if (!with_edns || length < HFIXEDSZ || Rcode(answer) != ns_r_formerr) break;
      edns_refused = true;
    }
    length = std::min(length, static_cast<int>(answer.size()));  // a reply cut to the buffer
    if (length >= HFIXEDSZ && (answer[2] & 0x02) != 0) {            // TC: the whole answer is there over TCP
      std::vector<unsigned char> whole(answer.size());
      int tcp_length = QueryOverTcp(state, query, whole, tcp_deadline);
      if (tcp_length > 0) {
        answer.swap(whole);
        length = tcp_length;
      }
    }
  } else {
    length = QueryOverTcp(state, query, answer, tcp_deadline);
    if (length < 0) return QueryEnd::kStop;  // no server answered
  }
  switch (AddressesInDnsAnswer(std::span<const unsigned char>(answer.data(), static_cast<size_t>(length)), name, type,
                               addresses)) {
    case DnsAnswerEnd::kNoSuchName: return QueryEnd::kStop;
    case DnsAnswerEnd::kNoData: return QueryEnd::kNoData;
    case DnsAnswerEnd::kAnswered: return QueryEnd::kAnswered;
  }
  return QueryEnd::kNoData;
}

// res_ninit's state, closed however the lookup ends.
struct ResolverState {
  struct __res_state state = {};
  bool open = false;
  ResolverState() { open = ::res_ninit(&state) == 0; }
  ~ResolverState() {
    if (open) ::res_nclose(&state);
  }
  ResolverState(const ResolverState&) = delete;
  ResolverState& operator=(const ResolverState&) = delete;
};

}  // namespace

DnsAnswerEnd AddressesInDnsAnswer(std::span<const unsigned char> answer, const std::string& name, int type,
                                  std::vector<Address>& addresses) {
  if (type != ns_t_a && type != ns_t_aaaa) return DnsAnswerEnd::kNoData;
  ns_msg message;
  if (answer.size() > NS_MAXMSG || ::ns_initparse(answer.data(), static_cast<int>(answer.size()), &message) != 0) {
    return DnsAnswerEnd::kNoData;
  }
  if (ns_msg_getflag(message, ns_f_rcode) == ns_r_nxdomain) return DnsAnswerEnd::kNoSuchName;
  if (ns_msg_getflag(message, ns_f_rcode) != ns_r_noerror) return DnsAnswerEnd::kNoData;
  std::vector<std::string> chain = {SansDot(name)};
  auto in_chain = [&chain](const char* owner) {
    std::string mine = SansDot(owner);
    return std::any_of(chain.begin(), chain.end(),
                       [&mine](const std::string& link) { return ::strcasecmp(mine.c_str(), link.c_str()) == 0; });
  };
  for (int i = 0; i < ns_msg_count(message, ns_s_an); ++i) {
    ns_rr record;
    if (::ns_parserr(&message, ns_s_an, i, &record) != 0) break;
    if (ns_rr_class(record) != ns_c_in || !in_chain(ns_rr_name(record))) continue;
    if (ns_rr_type(record) == ns_t_cname) {
      char target[NS_MAXDNAME];
      if (chain.size() < kMostChainLinks &&
          ::ns_name_uncompress(ns_msg_base(message), ns_msg_end(message), ns_rr_rdata(record), target,
                               sizeof target) >= 0) {
        chain.push_back(SansDot(target));
      }
      continue;
    }
    std::optional<Address> address;
    if (ns_rr_type(record) == type && type == ns_t_a && ns_rr_rdlen(record) == 4) {
      Ipv4Bytes bytes;
      std::memcpy(bytes.data(), ns_rr_rdata(record), bytes.size());
      address = Address::Ipv4(bytes);
    } else if (ns_rr_type(record) == type && type == ns_t_aaaa && ns_rr_rdlen(record) == 16) {
      Ipv6Bytes bytes;
      std::memcpy(bytes.data(), ns_rr_rdata(record), bytes.size());
      address = Address::Ipv6(bytes);
    }
    if (address && std::find(addresses.begin(), addresses.end(), *address) == addresses.end()) {
      addresses.push_back(*address);
    }
  }
  return DnsAnswerEnd::kAnswered;
}

namespace {

// Every server's address out of `state`. res_ninit leaves an IPv4 one in
// nsaddr_list, an IPv6 one in the extension's nsaddrs (malloc'd, freed by
// res_nclose, which also closes each server's socket unless it is -1) with
// nsaddr_list's family 0; the servers set after this follow that layout.
void ClearServers(res_state state) {
  for (int i = 0; i < MAXNS; ++i) {
    state->nsaddr_list[i] = {};
    std::free(state->_u._ext.nsaddrs[i]);
    state->_u._ext.nsaddrs[i] = nullptr;
    state->_u._ext.nssocks[i] = -1;
  }
}

// One try of one second per server, as the tests want.
void OneQuickTry(res_state state) {
  state->retrans = 1;
  state->retry = 1;
}

std::vector<Address> LookUpWith(const std::string& name, const std::function<bool(res_state)>& servers) {
  std::vector<Address> addresses;
  if (name.empty() || name.back() == '.') return addresses;
  ResolverState resolver;
  if (!resolver.open) return addresses;
  if (servers && !servers(&resolver.state)) return addresses;
  // glibc's TCP path (a truncated answer, or use-vc) has no deadline:
  // corral asks over TCP itself.
  const Transport transport = (resolver.state.options & RES_USEVC) != 0 ? Transport::kTcp : Transport::kUdp;
  resolver.state.options = (resolver.state.options | RES_IGNTC) & ~static_cast<unsigned long>(RES_USEVC);
  // The whole lookup's TCP, both queries, within resolv.conf's timeout.
  const auto tcp_deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(std::max(resolver.state.retrans, 1));
  const std::string absolute = name + ".";
  std::vector<unsigned char> answer(64 * 1024);
  bool edns_refused = false;  // a server answered FORMERR to EDNS0: the rest goes without
  if (Query(&resolver.state, transport, absolute, ns_t_a, tcp_deadline, edns_refused, answer, addresses) !=
      QueryEnd::kStop) {
    Query(&resolver.state, transport, absolute, ns_t_aaaa, tcp_deadline, edns_refused, answer, addresses);
  }
  return addresses;
}

}  // namespace

std::vector<Address> LookUpAbsolute(const std::string& name) { return LookUpWith(name, nullptr); }

std::vector<Address> LookUpAbsoluteAt(const std::string& name, const std::vector<sockaddr_in>& servers) {
  if (servers.empty()) return LookUpWith(name, nullptr);
  return LookUpWith(name, [&servers](res_state state) {
    ClearServers(state);
    state->nscount = static_cast<int>(std::min<size_t>(servers.size(), MAXNS));
    for (int i = 0; i < state->nscount; ++i) state->nsaddr_list[i] = servers[static_cast<size_t>(i)];
    OneQuickTry(state);
    return true;
  });
}

std::vector<Address> LookUpAbsoluteAt(const std::string& name, const std::vector<sockaddr_in6>& servers) {
  if (servers.empty()) return LookUpWith(name, nullptr);
  return LookUpWith(name, [&servers](res_state state) {
    ClearServers(state);
    state->nscount = static_cast<int>(std::min<size_t>(servers.size(), MAXNS));
    for (int i = 0; i < state->nscount; ++i) {
      auto* copy = static_cast<sockaddr_in6*>(std::malloc(sizeof(sockaddr_in6)));
      if (copy == nullptr) return false;
      *copy = servers[static_cast<size_t>(i)];
      state->_u._ext.nsaddrs[i] = copy;
    }
    OneQuickTry(state);
    return true;
  });
}

}  // namespace corral
