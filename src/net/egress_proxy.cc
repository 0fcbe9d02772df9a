#include "net/egress_proxy.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>

#include <algorithm>
#include <asio.hpp>
#include <cstring>
#include <mutex>
#include <future>
#include <list>
#include <optional>
#include <span>
#include <thread>

#include "net/host_port.h"
#include "net/hosts_file.h"
#include "net/http_head.h"
#include "net/socks5.h"

namespace corral {

using asio::ip::tcp;

namespace {

constexpr size_t kRelayBuffer = 64 * 1024;  // also the size of a new pipe
constexpr size_t kReadChunk = 4096;
// A channel moves at most this much before the proxy's other work has its
// turn.
constexpr size_t kTurn = 1024 * 1024;
// A stream's pipe grows to this (the most fs/pipe-max-size gives an
// unprivileged user by default): a quarter of the calls for a download.
// Its pages count against the user's pipe quota (fs/pipe-user-pages-soft,
// 64 MiB by default, over which every new pipe of the user's gets two
// pages), so at most kLargePipes are held at once, a quarter of it.
constexpr size_t kLargePipe = 1024 * 1024;
constexpr int kLargePipes = 16;

asio::ip::address ToAsio(const Address& address) {
  if (address.family() == AddressFamily::kIpv4) {
    asio::ip::address_v4::bytes_type bytes;
    std::copy_n(address.bytes().begin(), 4, bytes.begin());
    return asio::ip::address_v4(bytes);
  }
  asio::ip::address_v6::bytes_type bytes;
  std::copy_n(address.bytes().begin(), 16, bytes.begin());
  return asio::ip::address_v6(bytes);
}

Address FromAsio(const asio::ip::address& address) {
  if (address.is_v4()) {
    auto bytes = address.to_v4().to_bytes();
    Ipv4Bytes out;
    std::copy(bytes.begin(), bytes.end(), out.begin());
    return Address::Ipv4(out);
  }
  auto bytes = address.to_v6().to_bytes();
  Ipv6Bytes out;
  std::copy(bytes.begin(), bytes.end(), out.begin());
  return Address::Ipv6(out);
}

std::string Reply(int code, std::string_view reason, const std::string& body) {
  return "HTTP/1.1 " + std::to_string(code) + " " + std::string(reason) +
         "\r\nContent-Type: text/plain\r\nContent-Length: " + std::to_string(body.size() + 1) +
         "\r\nConnection: close\r\n\r\n" + body + "\n";
}

// The sandbox's side of every connection is a loopback connection in the
// sandbox's own network namespace, where the listeners are, and a
// destination on 127.0.0.1 is one on this host: nothing on either can be
// congested or lose a packet. The host's default congestion control may
// pace its sends anyway (BBR does: a timer releases each burst), which on a
// download through the proxy cost a quarter of the proxy's CPU and a timer
// wake-up per burst. Reno never paces, and the kernel lets every user choose
// it (it is always in net.ipv4.tcp_allowed_congestion_control). A kernel
// that refuses leaves the default: only the speed depends on it.
void UnpacedOnLoopback(tcp::socket& socket) {
  static constexpr char kReno[] = "reno";
  ::setsockopt(socket.native_handle(), IPPROTO_TCP, TCP_CONGESTION, kReno, sizeof kReno - 1);
}

// The upstream head of a forwarded request, asking the server to close the
// connection after its answer: one request per connection.
std::string ForwardedHead(const HttpHead& head) {
  std::string text = UpstreamHead(head, HttpTargetForm::kOrigin);
  text.insert(text.size() - 2, "Connection: close\r\n");
  return text;
}

}  // namespace

std::string_view EgressProtocolName(EgressProtocol protocol) {
  switch (protocol) {
    case EgressProtocol::kHttpConnect: return "connect";
    case EgressProtocol::kHttpForward: return "http";
    case EgressProtocol::kSocks5: return "socks5";
    case EgressProtocol::kLocal: return "local";
    case EgressProtocol::kTransparent: return "transparent";
  }
  return "unknown";
}

std::string EgressRefusalLine(const std::string& host, uint16_t port, const std::string& rule) {
  return "corral: blocked connection to " + AuthorityText(host, port) + ": " + rule;
}

class Session;

class EgressProxy::Impl {
 public:
  Impl(std::shared_ptr<const EgressGate> gate, EgressOptions options)
      : gate_(std::move(gate)), options_(std::move(options)) {}

  Result<void> Listen(EgressListeners listeners);
  void Run();
  void Stop();

  asio::io_context& io() { return io_; }
  const EgressGate& gate() const { return *gate_; }
  const EgressOptions& options() const { return options_; }
  void Report(const EgressDecision& decision) const {
    if (options_.on_decision) options_.on_decision(decision);
  }
  void Ended() { --open_; }
  // One of the kLargePipes; false when all are held.
  bool TakeLargePipe() {
    if (large_pipes_ >= kLargePipes) return false;
    ++large_pipes_;
    return true;
  }
  void ReturnLargePipe() { --large_pipes_; }
  // Starts a lookup of `name` (as an absolute name: no search domain) on a
  // thread of its own; `done` runs on the proxy's thread with the addresses
  // (none: the name did not resolve), unless the proxy has stopped. False
  // when kMaxLookups are running already.
  bool Lookup(const std::string& name, std::function<void(std::vector<Address>)> done);
  void EnableLookups() { lookups_->io = &io_; }

  // Shared with the threads that answer the proxy (lookups, questions),
  // which may outlive it.
  struct Lookups {
    std::mutex mutex;
    asio::io_context* io = nullptr;  // none once the proxy has stopped
    int running = 0;
  };
  std::shared_ptr<Lookups> posts() const { return lookups_; }
  // Runs `step` on the proxy's thread, unless the proxy has stopped.
  static void PostIfRunning(const std::shared_ptr<Lookups>& posts, std::function<void()> step) {
    std::lock_guard<std::mutex> lock(posts->mutex);
    if (posts->io != nullptr) asio::post(*posts->io, std::move(step));
  }

 private:
  void Accept(tcp::acceptor& acceptor, EgressProtocol protocol, uint16_t local_port = 0);
  void AbortAll();

  asio::io_context io_;
  std::shared_ptr<const EgressGate> gate_;
  EgressOptions options_;
  std::optional<tcp::acceptor> http_;
  std::optional<tcp::acceptor> socks_;
  std::list<tcp::acceptor> local_;  // stable addresses: Accept holds references
  std::list<std::weak_ptr<Session>> sessions_;
  size_t open_ = 0;
  int large_pipes_ = 0;
  std::thread thread_;
  std::promise<void> finished_;
  bool stopped_ = false;
  std::shared_ptr<Lookups> lookups_ = std::make_shared<Lookups>();
};

constexpr int kMaxLookups = 64;

bool EgressProxy::Impl::Lookup(const std::string& name, std::function<void(std::vector<Address>)> done) {
  std::shared_ptr<Lookups> lookups = lookups_;
  {
    std::lock_guard<std::mutex> lock(lookups->mutex);
    if (lookups->io == nullptr || lookups->running >= kMaxLookups) return false;
    ++lookups->running;
  }
  std::thread([lookups, name, done = std::move(done)]() mutable {
    std::vector<Address> addresses = LookUpAbsolute(name);
    std::lock_guard<std::mutex> lock(lookups->mutex);
    --lookups->running;
    if (lookups->io != nullptr) {
      asio::post(*lookups->io, [done = std::move(done), addresses = std::move(addresses)] { done(addresses); });
    }
  }).detach();
  return true;
}

// One client connection, from its first byte to the end of its relay.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(EgressProxy::Impl& proxy, tcp::socket client, EgressProtocol protocol, uint16_t local_port = 0)
      : proxy_(proxy),
        client_(std::move(client)),
        upstream_(proxy.io()),
        timer_(proxy.io()) {
    decision_.protocol = protocol;
    decision_.port = local_port;
  }

  void Start() {
    UnpacedOnLoopback(client_);
    if (decision_.protocol == EgressProtocol::kLocal) {
      // The listener is the rule: straight to the host's loopback, same port.
      decision_.host = "127.0.0.1";
      decision_.verdict = EgressVerdict::kAllowed;
      decision_.rule = "--allow-local " + std::to_string(decision_.port);
      phase_ = Phase::kResolving;
      return Connect({tcp::endpoint(asio::ip::address_v4::loopback(), decision_.port)});
    }
    if (decision_.protocol == EgressProtocol::kTransparent) return StartTransparent();
    timer_.expires_after(proxy_.options().head_timeout);
    timer_.async_wait([self = shared_from_this()](const asio::error_code& error) {
      bool reading = self->phase_ == Phase::kHead || self->phase_ == Phase::kSocksRequest;
      if (!error && reading) self->Abort();
    });
    ReadMore();
  }

  // Closes both sides; the pending operations end with an error and the
  // session finishes.
  void Abort() {
    asio::error_code ignored;
    client_.close(ignored);
    upstream_.close(ignored);
    timer_.cancel();
  }

 private:
  enum class Phase { kHead, kSocksRequest, kAsking, kResolving, kConnecting, kRelaying, kRefused, kDone };

  // The name is the one the synthetic address the client connected to was
  // given; the port is the listener's. Then the gate, as for CONNECT.
  void StartTransparent() {
    asio::error_code error;
    tcp::endpoint local = client_.local_endpoint(error);
    if (error) return Finish();
    Address address = FromAsio(local.address());
    std::optional<std::string> name;
    if (proxy_.options().synthetic != nullptr) name = proxy_.options().synthetic->NameFor(address);
    if (!name) {
      decision_.host = address.ToString();
      return Refuse("not an address corral's name server gave an allowed name", Socks5Reply::kNotAllowed);
    }
    decision_.host = *name;
    Decide();
  }

  // A transparent connection has no protocol to refuse in: it is reset
  // (SO_LINGER with no time, then closed), so the client sees
  // ECONNRESET, not an empty answer.
  void Reset() {
    asio::error_code ignored;
    client_.set_option(asio::socket_base::linger(true, 0), ignored);
    Finish();
  }

  void ReadMore() {
    client_.async_read_some(asio::buffer(chunk_), [self = shared_from_this()](const asio::error_code& error, size_t n) {
      if (error) return self->Finish();
      self->received_.insert(self->received_.end(), self->chunk_.begin(), self->chunk_.begin() + n);
      self->OnBytes();
    });
  }

  void OnBytes() {
    if (decision_.protocol == EgressProtocol::kSocks5) return OnSocksBytes();
    Result<ReadStep<HttpHead>> step = ReadHttpHead(std::span<const uint8_t>(received_));
    if (!step.ok()) {
      Malformed(step.error().message());
      return SendAndClose(Reply(400, "Bad Request", "corral: " + step.error().message()));
    }
    if (step->need_more()) return ReadMore();
    head_ = std::move(step->value());
    received_.erase(received_.begin(), received_.begin() + static_cast<std::ptrdiff_t>(step->used()));
    decision_.protocol =
        head_->form == HttpTargetForm::kAuthority ? EgressProtocol::kHttpConnect : EgressProtocol::kHttpForward;
    decision_.host = head_->host;
    decision_.port = head_->port;
    if (decision_.protocol == EgressProtocol::kHttpForward && head_->body == HttpBody::kChunked) {
      return SendAndClose(
          Reply(501, "Not Implemented", "corral: the proxy does not forward a chunked request body; send its length"));
    }
    Decide();
  }

  void OnSocksBytes() {
    std::span<const uint8_t> bytes(received_);
    if (phase_ == Phase::kHead) {
      Result<ReadStep<Socks5Greeting>> hello = ReadSocks5Greeting(bytes);
      if (!hello.ok()) {
        Malformed(hello.error().message());
        return SendAndClose(Bytes(Socks5MethodReply(Socks5Method::kNoAcceptable)));
      }
      if (hello->need_more()) return ReadMore();
      received_.erase(received_.begin(), received_.begin() + static_cast<std::ptrdiff_t>(hello->used()));
      phase_ = Phase::kSocksRequest;
      Send(client_, Bytes(Socks5MethodReply(Socks5Method::kNoAuthentication)), [self = shared_from_this()] {
        self->OnSocksBytes();
      });
      return;
    }
    Result<ReadStep<Socks5Request>> request = ReadSocks5Request(bytes);
    if (!request.ok()) {
      Malformed(request.error().message());
      return SendAndClose(Bytes(Socks5RequestReply(Socks5ReplyFor(request.error()))));
    }
    if (request->need_more()) return ReadMore();
    received_.erase(received_.begin(), received_.begin() + static_cast<std::ptrdiff_t>(request->used()));
    decision_.host = request->value().host;
    decision_.port = request->value().port;
    Decide();
  }

  // The gate on the name as asked, before any lookup.
  void Decide() {
    timer_.cancel();
    EgressRuling ruling = proxy_.gate().Decide(decision_.host, decision_.port);
    if (ruling.basis == EgressBasis::kAsk) return Hold();
    Ruled(ruling);
  }

  // Held for an answer (net/asking_gate.h): the question is asked off this
  // thread, the answer comes back through the proxy's loop, and no answer
  // within ask_timeout is a refusal.
  void Hold() {
    phase_ = Phase::kAsking;
    timer_.expires_after(proxy_.options().ask_timeout);
    timer_.async_wait([self = shared_from_this()](const asio::error_code& error) {
      if (error || self->phase_ != Phase::kAsking) return;
      self->Refuse("not in --allow-host; no answer within " +
                       std::to_string(self->proxy_.options().ask_timeout.count() / 1000) + " s",
                   Socks5Reply::kNotAllowed);
    });
    std::weak_ptr<Session> weak = weak_from_this();
    proxy_.gate().Ask(decision_.host, decision_.port, [weak, posts = proxy_.posts()](EgressRuling answer) {
      EgressProxy::Impl::PostIfRunning(posts, [weak, answer = std::move(answer)] {
        auto self = weak.lock();
        if (!self || self->phase_ != Phase::kAsking) return;
        self->timer_.cancel();
        self->Ruled(answer);
      });
    });
  }

  void Ruled(const EgressRuling& ruling) {
    decision_.rule = ruling.rule;
    if (ruling.basis == EgressBasis::kAnswered) {
      decision_.answered_by = ruling.answered_by;
      if (ruling.verdict == EgressVerdict::kAllowed) decision_.scope = ruling.scope;
    }
    if (ruling.verdict != EgressVerdict::kAllowed) return Refuse(ruling.rule, Socks5Reply::kNotAllowed);
    decision_.verdict = EgressVerdict::kAllowed;
    phase_ = Phase::kResolving;
    Result<Address> literal = ParseAddress(decision_.host);
    if (literal.ok()) return Check({*literal});
    auto named = proxy_.options().names.find(decision_.host);
    if (named != proxy_.options().names.end()) return Check(named->second);
    // The system resolver, on a thread of its own that the proxy never
    // waits for, with a deadline here.
    timer_.expires_after(proxy_.options().lookup_timeout);
    timer_.async_wait([self = shared_from_this()](const asio::error_code& error) {
      if (error || self->phase_ != Phase::kResolving) return;
      self->Refuse("the lookup of " + self->decision_.host + " took too long", Socks5Reply::kHostUnreachable);
    });
    std::weak_ptr<Session> weak = weak_from_this();
    bool started = proxy_.Lookup(decision_.host, [weak](std::vector<Address> addresses) {
      if (auto self = weak.lock()) self->Looked(addresses);
    });
    if (!started) Refuse("too many name lookups at once", Socks5Reply::kGeneralFailure);
  }

  void Looked(const std::vector<Address>& addresses) {
    if (phase_ != Phase::kResolving) return;
    timer_.cancel();
    Check(addresses);
  }

  // Each address the name gave: only those that pass are connected to.
  void Check(const std::vector<Address>& addresses) {
    std::vector<tcp::endpoint> passed;
    std::string first_refusal;
    for (const Address& address : addresses) {
      Result<void> checked = proxy_.gate().CheckAddress(address);
      if (checked.ok()) {
        passed.emplace_back(ToAsio(address), decision_.port);
      } else if (first_refusal.empty()) {
        first_refusal = checked.error().message();
      }
    }
    if (passed.empty()) {
      decision_.verdict = EgressVerdict::kDenied;
      if (addresses.empty()) return Refuse("cannot resolve " + decision_.host, Socks5Reply::kHostUnreachable);
      return Refuse(first_refusal, Socks5Reply::kNotAllowed);
    }
    Connect(passed);
  }

  // Only to addresses that passed (or the --allow-local port).
  void Connect(const std::vector<tcp::endpoint>& passed) {
    phase_ = Phase::kConnecting;
    timer_.expires_after(proxy_.options().connect_timeout);
    timer_.async_wait([self = shared_from_this()](const asio::error_code& error) {
      if (!error && self->phase_ == Phase::kConnecting) {
        asio::error_code ignored;
        self->upstream_.close(ignored);
      }
    });
    asio::async_connect(upstream_, passed,
                        [self = shared_from_this()](const asio::error_code& error, const tcp::endpoint& endpoint) {
                          self->timer_.cancel();
                          if (error) return self->ConnectFailed(error);
                          self->decision_.address = FromAsio(endpoint.address()).ToString();
                          if (endpoint.address().is_loopback()) UnpacedOnLoopback(self->upstream_);
                          self->Connected();
                        });
  }

  void ConnectFailed(const asio::error_code& error) {
    decision_.rule += "; cannot connect: " + error.message();
    if (decision_.protocol == EgressProtocol::kLocal) return Finish();  // reset: the client sees the close
    if (decision_.protocol == EgressProtocol::kTransparent) return Reset();
    if (decision_.protocol == EgressProtocol::kSocks5) {
      Socks5Reply code =
          error == asio::error::connection_refused ? Socks5Reply::kConnectionRefused : Socks5Reply::kHostUnreachable;
      return SendAndClose(Bytes(Socks5RequestReply(code)));
    }
    SendAndClose(Reply(502, "Bad Gateway",
                       "corral: cannot connect to " + AuthorityText(decision_.host, decision_.port) + ": " +
                           error.message()));
  }

  void Connected() {
    phase_ = Phase::kRelaying;
    std::string pending(received_.begin(), received_.end());
    received_.clear();
    auto relay = [self = shared_from_this()] { self->Relay(); };
    switch (decision_.protocol) {
      case EgressProtocol::kHttpConnect:
        Send(client_, "HTTP/1.1 200 Connection established\r\n\r\n", [self = shared_from_this(), pending, relay] {
          self->decision_.bytes_sent += pending.size();
          self->Send(self->upstream_, pending, relay);
        });
        return;
      case EgressProtocol::kSocks5:
        Send(client_, Bytes(Socks5RequestReply(Socks5Reply::kSucceeded)), [self = shared_from_this(), pending, relay] {
          self->decision_.bytes_sent += pending.size();
          self->Send(self->upstream_, pending, relay);
        });
        return;
      case EgressProtocol::kLocal:
      case EgressProtocol::kTransparent:
        relay();
        return;
      case EgressProtocol::kHttpForward: {
        // The body's bytes that came with the head, and no more than it has.
        uint64_t body = head_->body == HttpBody::kContentLength ? head_->content_length : 0;
        if (pending.size() > body) pending.resize(static_cast<size_t>(body));
        upload_left_ = body - pending.size();
        decision_.bytes_sent += pending.size();
        Send(upstream_, ForwardedHead(*head_) + pending, relay);
        return;
      }
    }
  }

  // Both directions at once; each ends at its end of input (the other
  // side's sending half is shut then), and the session ends with both.
  void Relay() {
    asio::error_code error;
    client_.native_non_blocking(true, error);
    if (!error) upstream_.native_non_blocking(true, error);
    auto pump = [this, splice = !error](Channel& channel) { splice ? Splice(channel) : Copy(channel); };
    if (decision_.protocol == EgressProtocol::kHttpForward && upload_left_ == 0) {
      up_.done = true;  // one request per connection: nothing more is read from the client
    } else {
      pump(up_);
    }
    pump(down_);
  }

  enum class Direction { kUp, kDown };

  // One direction of the relay. Its bytes go through a pipe, socket to pipe
  // to socket with splice(2): the kernel hands the pages on and the proxy
  // never copies them. The pipe is held only while bytes come (a channel
  // waiting for input gives it back): an idle tunnel holds no descriptor
  // and none of the user's pipe quota (fs/pipe-user-pages-soft). A stream's
  // large pipe is the exception: it is kept across a wait for input, since
  // a download waits for its server many times a second and a new pipe
  // each time cost a third of the proxy's CPU; at most kLargePipes are held
  // at once, so at most that many idle tunnels hold one. Without a
  // pipe (none could be made: out of descriptors) the bytes are copied
  // through a buffer instead.
  struct Channel {
    Channel(Direction direction, tcp::socket& from, tcp::socket& to, uint64_t& count)
        : direction(direction), from(from), to(to), count(count) {}
    Direction direction;
    tcp::socket& from;
    tcp::socket& to;
    uint64_t& count;
    UniqueFd pipe_out;  // the pipe's read end
    UniqueFd pipe_in;   // its write end
    size_t held = 0;    // in the pipe, not yet sent on
    bool large = false;  // the pipe has grown to kLargePipe
    std::vector<uint8_t> buffer;
    bool done = false;
  };

  // The most the channel may read now: of a forwarded request, its body and
  // no more.
  size_t Want(const Channel& channel, size_t most) const {
    if (channel.direction == Direction::kUp && decision_.protocol == EgressProtocol::kHttpForward) {
      return static_cast<size_t>(std::min<uint64_t>(most, upload_left_));
    }
    return most;
  }

  // `n` bytes sent on; false when the channel is done (a forwarded body's
  // last bytes).
  bool SentOn(Channel& channel, size_t n) {
    if (channel.direction != Direction::kUp || decision_.protocol != EgressProtocol::kHttpForward) return true;
    upload_left_ -= n;
    if (upload_left_ > 0) return true;
    HalfDone(channel);
    return false;
  }

  // At the end of input the other side's sending half is shut; on an error
  // both sides are closed.
  void End(Channel& channel, bool end_of_input) {
    asio::error_code ignored;
    if (end_of_input) {
      channel.to.shutdown(tcp::socket::shutdown_send, ignored);
    } else {
      Abort();
    }
    HalfDone(channel);
  }

  // Up to kTurn bytes a turn, then the proxy's other work: a busy channel
  // never holds the thread for long. A closed socket (Abort) fails with
  // EBADF.
  void Splice(Channel& channel) {
    constexpr unsigned kFlags = SPLICE_F_MOVE | SPLICE_F_NONBLOCK;
    if (phase_ == Phase::kDone) return;
    if (!channel.pipe_out) {
      int ends[2];
      if (::pipe2(ends, O_CLOEXEC | O_NONBLOCK) != 0) return Copy(channel);
      channel.pipe_out = UniqueFd(ends[0]);
      channel.pipe_in = UniqueFd(ends[1]);
    }
    for (size_t moved = 0; moved < kTurn;) {
      if (channel.held == 0) {
        size_t room = channel.large ? kLargePipe : kRelayBuffer;
        ssize_t n = ::splice(channel.from.native_handle(), nullptr, channel.pipe_in.get(), nullptr,
                             Want(channel, room), kFlags);
        if (n == 0) return End(channel, true);
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
          if (!channel.large) DropPipe(channel);
          return Await(channel, channel.from, tcp::socket::wait_read);
        }
        if (n < 0) return End(channel, false);
        channel.held = static_cast<size_t>(n);
        channel.count += channel.held;
        if (channel.held == room && !channel.large) Grow(channel);  // a full pipe: a stream
      }
      ssize_t n = ::splice(channel.pipe_out.get(), nullptr, channel.to.native_handle(), nullptr, channel.held, kFlags);
      if (n < 0) {
        return errno == EAGAIN || errno == EINTR ? Await(channel, channel.to, tcp::socket::wait_write)
                                                 : End(channel, false);
      }
      channel.held -= static_cast<size_t>(n);
      moved += static_cast<size_t>(n);
      if (!SentOn(channel, static_cast<size_t>(n))) return;
    }
    asio::post(proxy_.io(), [self = shared_from_this(), &channel] { self->Splice(channel); });
  }

  void Grow(Channel& channel) {
    if (!proxy_.TakeLargePipe()) return;
    if (::fcntl(channel.pipe_in.get(), F_SETPIPE_SZ, static_cast<int>(kLargePipe)) >= 0) {
      channel.large = true;
    } else {
      proxy_.ReturnLargePipe();  // over the user's quota: the pipe stays as it is
    }
  }

  void DropPipe(Channel& channel) {
    if (channel.large) proxy_.ReturnLargePipe();
    channel.large = false;
    channel.pipe_out.Reset();
    channel.pipe_in.Reset();
  }

  void Await(Channel& channel, tcp::socket& socket, tcp::socket::wait_type wait) {
    socket.async_wait(wait, [self = shared_from_this(), &channel](const asio::error_code& error) {
      if (error) return self->End(channel, false);
      self->Splice(channel);
    });
  }

  void Copy(Channel& channel) {
    channel.buffer.resize(kRelayBuffer);
    channel.from.async_read_some(
        asio::buffer(channel.buffer.data(), Want(channel, channel.buffer.size())),
        [self = shared_from_this(), &channel](const asio::error_code& error, size_t n) {
          if (error) return self->End(channel, error == asio::error::eof);
          channel.count += n;
          asio::async_write(channel.to, asio::buffer(channel.buffer.data(), n),
                            [self, &channel, n](const asio::error_code& write_error, size_t) {
                              if (write_error) return self->End(channel, false);
                              if (self->SentOn(channel, n)) self->Copy(channel);
                            });
        });
  }

  void HalfDone(Channel& channel) {
    channel.done = true;
    if (up_.done && down_.done) Finish();
  }

  // A request the readers refused: reported with no host (the reader's
  // message says what was wrong, never the bytes themselves).
  void Malformed(const std::string& why) {
    decision_.verdict = EgressVerdict::kDenied;
    decision_.rule = "malformed request: " + why;
    proxy_.Report(decision_);
    reported_ = true;
  }

  // A refusal: reported at once, answered in the protocol's own terms.
  void Refuse(const std::string& rule, Socks5Reply code) {
    if (phase_ == Phase::kRefused || phase_ == Phase::kDone) return;  // once: a late answer and its timer race
    phase_ = Phase::kRefused;
    decision_.verdict = EgressVerdict::kDenied;
    decision_.rule = rule;
    proxy_.Report(decision_);
    reported_ = true;
    if (decision_.protocol == EgressProtocol::kTransparent) return Reset();
    if (decision_.protocol == EgressProtocol::kSocks5) return SendAndClose(Bytes(Socks5RequestReply(code)));
    SendAndClose(Reply(403, "Forbidden", EgressRefusalLine(decision_.host, decision_.port, rule)));
  }

  template <size_t N>
  static std::string Bytes(const std::array<uint8_t, N>& bytes) {
    return std::string(bytes.begin(), bytes.end());
  }

  void Send(tcp::socket& socket, std::string bytes, std::function<void()> then) {
    if (bytes.empty()) return then();
    auto shared = std::make_shared<std::string>(std::move(bytes));
    asio::async_write(socket, asio::buffer(*shared),
                      [self = shared_from_this(), shared, then = std::move(then)](const asio::error_code& error,
                                                                                  size_t) {
                        if (error) {
                          self->Abort();
                          return self->Finish();
                        }
                        then();
                      });
  }

  void SendAndClose(std::string bytes) {
    timer_.cancel();
    Send(client_, std::move(bytes), [self = shared_from_this()] {
      asio::error_code ignored;
      self->client_.shutdown(tcp::socket::shutdown_send, ignored);
      self->Abort();
      self->Finish();
    });
  }

  void Finish() {
    if (phase_ == Phase::kDone) return;
    phase_ = Phase::kDone;
    Abort();
    DropPipe(up_);
    DropPipe(down_);
    if (!reported_ && decision_.verdict == EgressVerdict::kAllowed) proxy_.Report(decision_);
    reported_ = true;
    proxy_.Ended();
  }

  EgressProxy::Impl& proxy_;
  tcp::socket client_;
  tcp::socket upstream_;
  asio::steady_timer timer_;
  Phase phase_ = Phase::kHead;
  std::array<uint8_t, kReadChunk> chunk_{};
  std::vector<uint8_t> received_;
  std::optional<HttpHead> head_;
  EgressDecision decision_;
  bool reported_ = false;
  uint64_t upload_left_ = 0;
  Channel up_{Direction::kUp, client_, upstream_, decision_.bytes_sent};
  Channel down_{Direction::kDown, upstream_, client_, decision_.bytes_received};
};

Result<void> EgressProxy::Impl::Listen(EgressListeners listeners) {
  auto adopt = [this](UniqueFd fd, std::optional<tcp::acceptor>& acceptor) -> Result<void> {
    if (!fd) return {};
    struct sockaddr_storage address = {};
    socklen_t length = sizeof address;
    if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&address), &length) != 0) {
      return Error::FromErrno(ErrorKind::kInternal, "cannot read the proxy's listening socket", "getsockname", errno);
    }
    tcp protocol = address.ss_family == AF_INET6 ? tcp::v6() : tcp::v4();
    acceptor.emplace(io_);
    asio::error_code error;
    acceptor->assign(protocol, fd.Release(), error);
    if (error) return Error(ErrorKind::kInternal, "cannot serve the proxy's listening socket: " + error.message());
    return {};
  };
  CORRAL_TRY(adopt(std::move(listeners.http), http_));
  CORRAL_TRY(adopt(std::move(listeners.socks), socks_));
  if (http_) Accept(*http_, EgressProtocol::kHttpConnect);
  if (socks_) Accept(*socks_, EgressProtocol::kSocks5);
  for (auto [list, protocol] : {std::pair{&listeners.local, EgressProtocol::kLocal},
                                 std::pair{&listeners.captured, EgressProtocol::kTransparent}}) {
    for (LocalListener& listener : *list) {
      std::optional<tcp::acceptor> adopted;
      CORRAL_TRY(adopt(std::move(listener.fd), adopted));
      if (!adopted) continue;
      local_.push_back(std::move(*adopted));
      Accept(local_.back(), protocol, listener.port);
    }
  }
  return {};
}

void EgressProxy::Impl::Accept(tcp::acceptor& acceptor, EgressProtocol protocol, uint16_t local_port) {
  acceptor.async_accept([this, &acceptor, protocol, local_port](const asio::error_code& error, tcp::socket socket) {
    if (stopped_ || error == asio::error::operation_aborted) return;
    if (error) {
      // Out of descriptors, or the like: wait a little rather than spin.
      auto wait = std::make_shared<asio::steady_timer>(io_, std::chrono::milliseconds(100));
      wait->async_wait([this, wait, &acceptor, protocol, local_port](const asio::error_code&) {
        if (!stopped_) Accept(acceptor, protocol, local_port);
      });
      return;
    }
    sessions_.remove_if([](const std::weak_ptr<Session>& session) { return session.expired(); });
    if (open_ >= options_.max_connections) {
      asio::error_code ignored;
      socket.close(ignored);
    } else {
      ++open_;
      auto session = std::make_shared<Session>(*this, std::move(socket), protocol, local_port);
      sessions_.push_back(session);
      session->Start();
    }
    Accept(acceptor, protocol, local_port);
  });
}

void EgressProxy::Impl::Run() {
  thread_ = std::thread([this] {
    // splice(2) into a socket whose sending half is shut raises SIGPIPE (it
    // takes no MSG_NOSIGNAL); blocked on this thread, it never ends the
    // process, and the call fails with EPIPE.
    sigset_t pipe_signal;
    sigemptyset(&pipe_signal);
    sigaddset(&pipe_signal, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_signal, nullptr);
    // A handler that throws (out of memory, a timer the kernel refused)
    // ends that one step, never the proxy: the loop goes on.
    for (;;) {
      try {
        io_.run();
        break;
      } catch (const std::exception&) {
      }
    }
    finished_.set_value();
  });
}

void EgressProxy::Impl::AbortAll() {
  stopped_ = true;
  asio::error_code ignored;
  if (http_) http_->close(ignored);
  if (socks_) socks_->close(ignored);
  for (tcp::acceptor& acceptor : local_) acceptor.close(ignored);
  for (const std::weak_ptr<Session>& weak : sessions_) {
    if (auto session = weak.lock()) session->Abort();
  }
}

void EgressProxy::Impl::Stop() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(lookups_->mutex);
    lookups_->io = nullptr;  // a lookup still running posts nothing more
  }
  asio::post(io_, [this] { AbortAll(); });
  // Every session reports as it ends; a lookup still running on its own
  // thread is never waited for (it posts nothing once io is cleared).
  if (finished_.get_future().wait_for(std::chrono::seconds(1)) != std::future_status::ready) io_.stop();
  thread_.join();
}

EgressProxy::EgressProxy(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

EgressProxy::~EgressProxy() { Stop(); }

void EgressProxy::Stop() { impl_->Stop(); }

Result<std::unique_ptr<EgressProxy>> EgressProxy::Start(EgressListeners listeners,
                                                        std::shared_ptr<const EgressGate> gate,
                                                        EgressOptions options) {
  auto impl = std::make_unique<Impl>(std::move(gate), std::move(options));
  impl->EnableLookups();
  CORRAL_TRY(impl->Listen(std::move(listeners)));
  impl->Run();
  return std::unique_ptr<EgressProxy>(new EgressProxy(std::move(impl)));
}

}  // namespace corral
