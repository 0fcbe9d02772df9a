#include "net/hosts_file.h"

#include <arpa/nameser.h>
#include <netdb.h>
#include <resolv.h>
#include <strings.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

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

// How one query ended: with records, with none of its type (the name has
// others, or the server failed), or so that no second query is worth
// asking (no such name, or no server answered).
enum class QueryEnd { kAnswered, kNoData, kStop };

// The most names of one CNAME chain followed (the name asked included): a
// server's answer can list thousands of records, and each record is looked
// up in the chain.
constexpr size_t kMostChainLinks = 16;

// A name in presentation form without its root dot.
std::string SansDot(std::string name) {
  if (!name.empty() && name.back() == '.') name.pop_back();
  return name;
}

// The A or AAAA records of the answer that belong to `name`: owned by the
// name asked, or by a name a CNAME of that chain leads to (as the answer
// lists them, in order). Records of any other owner are passed over.
QueryEnd Query(res_state state, const std::string& name, int type, std::vector<unsigned char>& answer,
               std::vector<Address>& addresses) {
  errno = 0;
  int length = ::res_nquery(state, name.c_str(), ns_c_in, type, answer.data(), static_cast<int>(answer.size()));
  if (length < 0) {
    bool silent = state->res_h_errno == TRY_AGAIN && (errno == ETIMEDOUT || errno == ECONNREFUSED);
    return state->res_h_errno == HOST_NOT_FOUND || silent ? QueryEnd::kStop : QueryEnd::kNoData;
  }
  length = std::min(length, static_cast<int>(answer.size()));  // a reply cut to the buffer
  ns_msg message;
  if (::ns_initparse(answer.data(), length, &message) != 0) return QueryEnd::kNoData;
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
  return QueryEnd::kAnswered;
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

std::vector<Address> LookUpAbsolute(const std::string& name) { return LookUpAbsoluteAt(name, std::nullopt); }

std::vector<Address> LookUpAbsoluteAt(const std::string& name, const std::optional<sockaddr_in>& server) {
  std::vector<Address> addresses;
  if (name.empty() || name.back() == '.') return addresses;
  ResolverState resolver;
  if (!resolver.open) return addresses;
  if (server) {
    resolver.state.nscount = 1;
    resolver.state.nsaddr_list[0] = *server;
    resolver.state.retrans = 1;
    resolver.state.retry = 1;
  }
  const std::string absolute = name + ".";
  std::vector<unsigned char> answer(64 * 1024);
  if (Query(&resolver.state, absolute, ns_t_a, answer, addresses) != QueryEnd::kStop) {
    Query(&resolver.state, absolute, ns_t_aaaa, answer, addresses);
  }
  return addresses;
}

}  // namespace corral
