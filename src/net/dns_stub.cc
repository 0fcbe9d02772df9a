#include "net/dns_stub.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "net/dns_message.h"

namespace corral {

DnsStub::DnsStub(UniqueFd udp, UniqueFd tcp, std::shared_ptr<SyntheticNames> synthetic)
    : udp_(std::move(udp)), tcp_(std::move(tcp)), synthetic_(std::move(synthetic)) {
  for (int fd : {udp_.get(), tcp_.get()}) {
    if (fd >= 0) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  }
}

void DnsStub::Fill(struct pollfd fds[kSlots]) const {
  fds[0] = {udp_.get(), POLLIN, 0};
  fds[1] = {tcp_.get(), POLLIN, 0};
  for (size_t i = 0; i < kMaxConnections; ++i) {
    fds[2 + i] = {i < connections_.size() ? connections_[i].fd.get() : -1, POLLIN, 0};
  }
}

void DnsStub::Handle(const struct pollfd fds[kSlots]) {
  // Connections first: Accept and Serve change the list Fill read.
  for (size_t i = connections_.size(); i-- > 0;) {
    if (fds[2 + i].fd == connections_[i].fd.get() && fds[2 + i].revents != 0) Serve(connections_[i]);
  }
  std::erase_if(connections_, [](const Connection& c) { return !c.fd; });
  if (fds[0].revents != 0) ServeDatagrams();
  if (fds[1].revents != 0) Accept();
}

void DnsStub::Remember(const std::string& name) {
  if (std::find(names_.begin(), names_.end(), name) != names_.end()) return;
  if (names_.size() < kMaxNames) {
    names_.push_back(name);
  } else {
    ++more_;
  }
}

std::optional<std::string> DnsStub::Summary(std::string_view mode) const {
  if (names_.empty()) return std::nullopt;
  std::string line = "no network: lookup of " + names_.front();
  size_t others = names_.size() - 1 + more_;
  if (others > 0) line += " and " + std::to_string(others) + " more";
  return line + " refused (" + std::string(mode) + ")";
}

std::vector<uint8_t> DnsStub::AnswerFor(const DnsQuery& query) {
  if (synthetic_ != nullptr && query.klass == kDnsClassIn) {
    if (std::optional<Address> address = synthetic_->AddressFor(query.name)) {
      if (query.type != kDnsTypeA) return NoDataAnswer(query);
      std::span<const uint8_t> bytes = address->bytes();
      return AddressAnswer(query, {bytes[0], bytes[1], bytes[2], bytes[3]});
    }
  }
  Remember(query.name);
  return NxdomainAnswer(query);
}

void DnsStub::ServeDatagrams() {
  // A bounded batch per wake-up, so a flood cannot keep the supervisor here.
  for (int i = 0; i < 64; ++i) {
    uint8_t buffer[4096];
    struct sockaddr_in6 from = {};
    socklen_t from_length = sizeof from;
    ssize_t n = ::recvfrom(udp_.get(), buffer, sizeof buffer, MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&from),
                           &from_length);
    if (n < 0) return;
    Result<DnsQuery> query = ParseDnsQuery(std::span<const uint8_t>(buffer, static_cast<size_t>(n)));
    if (!query.ok()) continue;
    std::vector<uint8_t> answer = AnswerFor(*query);
    ::sendto(udp_.get(), answer.data(), answer.size(), MSG_DONTWAIT | MSG_NOSIGNAL,
             reinterpret_cast<sockaddr*>(&from), from_length);
  }
}

void DnsStub::Accept() {
  for (;;) {
    UniqueFd fd(::accept4(tcp_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!fd) return;
    if (connections_.size() < kMaxConnections) connections_.push_back({std::move(fd), {}});
  }
}

// One length-prefixed message at a time (RFC 1035 §4.2.2); the connection
// closes on end of input, an error, a refused query or an answer the peer
// does not take at once.
void DnsStub::Serve(Connection& connection) {
  uint8_t buffer[4096];
  ssize_t n = ::recv(connection.fd.get(), buffer, sizeof buffer, MSG_DONTWAIT);
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
  if (n <= 0) {
    connection.fd.Reset();
    return;
  }
  connection.buffer.insert(connection.buffer.end(), buffer, buffer + n);
  while (connection.buffer.size() >= 2) {
    size_t length = static_cast<size_t>(connection.buffer[0]) << 8 | connection.buffer[1];
    if (connection.buffer.size() < 2 + length) return;
    Result<DnsQuery> query = ParseDnsQuery(std::span<const uint8_t>(connection.buffer.data() + 2, length));
    if (!query.ok()) {
      connection.fd.Reset();
      return;
    }
    std::vector<uint8_t> answer = AnswerFor(*query);
    uint8_t prefix[2] = {static_cast<uint8_t>(answer.size() >> 8), static_cast<uint8_t>(answer.size())};
    answer.insert(answer.begin(), prefix, prefix + 2);
    if (::send(connection.fd.get(), answer.data(), answer.size(), MSG_DONTWAIT | MSG_NOSIGNAL) !=
        static_cast<ssize_t>(answer.size())) {
      connection.fd.Reset();
      return;
    }
    connection.buffer.erase(connection.buffer.begin(), connection.buffer.begin() + static_cast<std::ptrdiff_t>(2 + length));
  }
}

}  // namespace corral
