#include "host/install_proxy.h"

#include <boost/asio.hpp>
#include <mutex>

#include "host/install_proxy_hello.h"

namespace o4s::host {

namespace asio = boost::asio;
using asio::ip::tcp;
using Local = asio::local::stream_protocol;
using boost::system::error_code;

struct InstallProxy::State {
  InstallProxyConfig config;
  // Connections open now (io thread only). Declared before io: a session
  // the io_context's destructor frees still counts itself out here.
  std::size_t open = 0;
  asio::io_context io;
  Local::acceptor acceptor{io};
  asio::steady_timer deadline{io};
  std::uint64_t bytes = 0;  // touched on the io thread only
  std::mutex mutex;         // guards records against stop()'s reader
  std::vector<ProxyConnection> records;
  ProxyConnection beyond;       // the sum of the connections past kMaxRecords
  std::size_t connections = 0;  // every one, recorded or summed
};

namespace {

constexpr std::size_t kChunk = 16 * 1024;
// An install that opens more connections (a plain-http source costs one a
// file) still works; the audit row keeps these and one line for the rest.
constexpr std::size_t kMaxRecords = 256;
// A setup.py may open connections as fast as it likes: past this many at
// once a new one is closed unread, so an install cannot run the host (a
// server of many kernels) out of fds. pip keeps a handful open.
constexpr std::size_t kMaxOpen = 64;
// A connection that has not sent its request head by then is closed, and
// so is a tunnel that has not sent its TLS hello by then once established.
constexpr std::chrono::seconds kHeadWait{30};
// The fatal TLS alert access_denied (49), in a record of its own: a client
// whose hello is refused learns why it cannot go on, not just an EOF.
constexpr std::string_view kAccessDeniedAlert{"\x15\x03\x03\x00\x02\x02\x31", 7};

// One installer connection: read the head, admit, resolve, judge each
// address, connect to the judged ones, then relay: a tunnel once its TLS
// hello names its host; a plain request's head and body only, one request
// a connection (anything pipelined after it is read and dropped).
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(InstallProxy::State& state, Local::socket client)
      : state_(state),
        client_(std::move(client)),
        origin_(state.io),
        resolver_(state.io),
        head_wait_(state.io) {
    ++state_.open;
    std::lock_guard lock(state_.mutex);
    index_ = state_.records.size();
    if (index_ < kMaxRecords) state_.records.emplace_back();
    ++state_.connections;
  }

  ~Session() { --state_.open; }

  void start() {
    auto self = shared_from_this();
    wait_for("no request head within 30 s");
    asio::async_read_until(client_, asio::dynamic_buffer(head_, kMaxProxyHeadBytes), "\r\n\r\n",
                           [self](error_code ec, std::size_t size) { self->on_head(ec, size); });
  }

 private:
  // Closes the connection unless the next step comes within kHeadWait.
  void wait_for(const std::string& why) {
    auto self = shared_from_this();
    head_wait_.expires_after(kHeadWait);
    head_wait_.async_wait([self, why](error_code cancelled) {
      if (!cancelled) self->close(why);
    });
  }

  void update(const std::function<void(ProxyConnection&)>& change) {
    std::lock_guard lock(state_.mutex);
    change(index_ < kMaxRecords ? state_.records[index_] : state_.beyond);
  }

  void refuse(const std::string& status, const std::string& why) {
    update([&](ProxyConnection& r) { r.reason = why; });
    reply_ = "HTTP/1.1 " + status + "\r\nContent-Type: text/plain\r\nConnection: close\r\n" +
             "Content-Length: " + std::to_string(why.size() + 1) + "\r\n\r\n" + why + "\n";
    auto self = shared_from_this();
    asio::async_write(client_, asio::buffer(reply_), [self](error_code, std::size_t) {
      error_code ignored;
      self->client_.close(ignored);
    });
  }

  void on_head(error_code ec, std::size_t size) {
    head_wait_.cancel();
    if (ec) {
      if (ec == asio::error::not_found) {
        return refuse("431 Request Header Fields Too Large", "a proxy request head over 16 KiB");
      }
      return update([&](ProxyConnection& r) { r.reason = "closed before a request"; });
    }
    auto request = parse_proxy_request(std::string_view(head_).substr(0, size));
    early_ = head_.substr(size);
    if (!request) return refuse("400 Bad Request", request.error().message);
    request_ = std::move(*request);
    update([&](ProxyConnection& r) {
      r.method = request_.method;
      r.target = request_.target.text();
    });
    if (auto why = refuse_request(state_.config.targets, request_)) {
      return refuse("403 Forbidden", *why);
    }
    auto self = shared_from_this();
    resolver_.async_resolve(request_.target.host, std::to_string(request_.target.port),
                            [self](error_code failed, const tcp::resolver::results_type& found) {
                              self->on_resolved(failed, found);
                            });
  }

  // Every address the name has must pass: a name that also points into
  // the host's own network is refused outright.
  void on_resolved(error_code ec, const tcp::resolver::results_type& found) {
    if (ec) return refuse("502 Bad Gateway", "cannot resolve " + request_.target.host);
    for (const auto& entry : found) {
      auto address = ip_of(entry.endpoint().data());
      if (!address) return refuse("403 Forbidden", "an address of an unknown family");
      if (auto why = refuse_address(state_.config.policy, request_.target.host, *address)) {
        return refuse("403 Forbidden", *why);
      }
      judged_.push_back(entry.endpoint());
    }
    auto self = shared_from_this();
    asio::async_connect(origin_, judged_, [self](error_code failed, const tcp::endpoint& at) {
      self->on_connected(failed, at);
    });
  }

  void on_connected(error_code ec, const tcp::endpoint& at) {
    if (ec) return refuse("502 Bad Gateway", "cannot connect to " + request_.target.text());
    update([&](ProxyConnection& r) {
      r.allowed = true;
      r.address = at.address().to_string();
    });
    auto self = shared_from_this();
    if (request_.tunnel) {
      reply_ = "HTTP/1.1 200 Connection established\r\n\r\n";
      asio::async_write(client_, asio::buffer(reply_), [self](error_code failed, std::size_t) {
        if (failed) return self->close("");
        self->wait_for("no TLS hello within 30 s");
        self->read_hello();
      });
    } else {
      body_left_ = request_.body_bytes;
      send_early({});
    }
  }

  // The tunnel's first TLS record, read whole (it may come in many
  // segments, and a part may have come with the head) before any of it
  // goes on.
  void read_hello() {
    auto size = tls_first_record_size(early_);
    if (!size) return refuse_tunnel(size.error().message);
    if (*size && early_.size() >= **size) {
      head_wait_.cancel();
      auto hello = parse_client_hello(std::string_view(early_).substr(0, **size));
      if (!hello) return refuse_tunnel(hello.error().message);
      if (auto why = refuse_client_hello(request_.target.host, *hello)) return refuse_tunnel(*why);
      return send_early({});
    }
    auto self = shared_from_this();
    client_.async_read_some(asio::buffer(up_), [self](error_code ec, std::size_t got) {
      if (ec) return self->close(self->early_.empty() ? "" : "closed within its TLS hello");
      self->early_.append(self->up_.data(), got);
      self->read_hello();
    });
  }

  // A tunnel whose hello may not go on: none of it reaches the origin.
  void refuse_tunnel(const std::string& why) {
    head_wait_.cancel();
    update([&](ProxyConnection& r) {
      r.allowed = false;
      r.reason = why;
    });
    error_code ignored;
    origin_.close(ignored);
    auto self = shared_from_this();
    asio::async_write(client_, asio::buffer(kAccessDeniedAlert.data(), kAccessDeniedAlert.size()),
                      [self](error_code, std::size_t) { self->close(""); });
  }

  // What the installer sent after its head (a tunnel's first TLS bytes, a
  // request body) goes to the origin before the relay starts; for a plain
  // request, after its head rewritten and only as much body as it declared.
  void send_early(error_code ec) {
    if (ec) return close("");
    if (!request_.tunnel) {
      std::size_t body = std::min<std::uint64_t>(early_.size(), body_left_);
      if (early_.size() > body) note_pipelined();
      early_ = request_.origin_head + early_.substr(0, body);
      body_left_ -= body;
    }
    auto self = shared_from_this();
    asio::async_write(origin_, asio::buffer(early_), [self](error_code failed, std::size_t sent) {
      if (failed) return self->close("");
      self->state_.bytes += sent;
      self->update([&](ProxyConnection& r) { r.bytes_out += sent; });
      if (self->request_.tunnel || self->body_left_ > 0) {
        self->pump(self->client_, self->origin_, self->up_, true);
      } else {
        self->drain();
      }
      self->pump(self->origin_, self->client_, self->down_, false);
    });
  }

  // After a plain request's body: what the client sends is not relayed
  // (a second request could name another origin), though it counts
  // against the byte budget; the connection ends when the origin's one
  // response has.
  void drain() {
    auto self = shared_from_this();
    client_.async_read_some(asio::buffer(up_), [self](error_code ec, std::size_t got) {
      if (ec) return;
      self->note_pipelined();
      self->state_.bytes += got;
      if (self->state_.bytes > self->state_.config.max_bytes) {
        return self->close("over the install's byte budget (OPENAI4S_ENV_MAX_BYTES)");
      }
      self->drain();
    });
  }

  void note_pipelined() {
    update([&](ProxyConnection& r) {
      if (r.reason.empty()) r.reason = "a second request on the connection, not forwarded";
    });
  }

  template <typename From, typename To>
  void pump(From& from, To& to, std::array<char, kChunk>& buffer, bool outward) {
    auto self = shared_from_this();
    from.async_read_some(
        asio::buffer(buffer), [self, &from, &to, &buffer, outward](error_code ec, std::size_t got) {
          if (ec) {
            // One side finished: the other learns it, and the session ends
            // when both have (a plain request's origin closes first).
            error_code ignored;
            to.shutdown(asio::socket_base::shutdown_send, ignored);
            if (++self->finished_ == 2 || !outward) self->close("");
            return;
          }
          if (outward && !self->request_.tunnel) {
            // A plain request's body: what it declared, no further.
            if (got >= self->body_left_) {
              if (got > self->body_left_) self->note_pipelined();
              got = self->body_left_;
              self->body_left_ = 0;
            } else {
              self->body_left_ -= got;
            }
          }
          self->state_.bytes += got;
          self->update([&](ProxyConnection& r) { (outward ? r.bytes_out : r.bytes_in) += got; });
          if (self->state_.bytes > self->state_.config.max_bytes) {
            return self->close("over the install's byte budget (OPENAI4S_ENV_MAX_BYTES)");
          }
          asio::async_write(to, asio::buffer(buffer.data(), got),
                            [self, &from, &to, &buffer, outward](error_code failed, std::size_t) {
                              if (failed) return self->close("");
                              if (outward && !self->request_.tunnel && self->body_left_ == 0) {
                                return self->drain();
                              }
                              self->pump(from, to, buffer, outward);
                            });
        });
  }

  void close(const std::string& why) {
    if (!why.empty()) update([&](ProxyConnection& r) { r.reason = why; });
    // A pending wait would keep the session (and its place among the 64)
    // for up to 30 s, then write a wrong reason.
    head_wait_.cancel();
    error_code ignored;
    client_.close(ignored);
    origin_.close(ignored);
  }

  InstallProxy::State& state_;
  Local::socket client_;
  tcp::socket origin_;
  tcp::resolver resolver_;
  std::size_t index_ = 0;
  std::string head_;
  std::string early_;
  std::string reply_;
  ProxyRequest request_;
  std::vector<tcp::endpoint> judged_;
  std::array<char, kChunk> up_{};
  std::array<char, kChunk> down_{};
  int finished_ = 0;
  std::uint64_t body_left_ = 0;  // a plain request's body still to relay
  asio::steady_timer head_wait_;
};

// Handlers hold the state by pointer: it outlives the io thread (stop()
// joins it before the state goes), and a shared owner inside its own
// io_context's queue would never be freed.
void accept_next(InstallProxy::State* state) {
  state->acceptor.async_accept([state](error_code ec, Local::socket client) {
    if (ec == asio::error::operation_aborted) return;
    if (ec) {
      // Out of fds or the like: try again shortly rather than give up the
      // install's only way out for good.
      auto pause = std::make_shared<asio::steady_timer>(state->io, std::chrono::milliseconds(50));
      pause->async_wait([state, pause](error_code) { accept_next(state); });
      return;
    }
    if (state->open >= kMaxOpen) {
      error_code ignored;
      client.close(ignored);
    } else {
      std::make_shared<Session>(*state, std::move(client))->start();
    }
    accept_next(state);
  });
}

}  // namespace

InstallProxy::InstallProxy(std::unique_ptr<State> state) : state_(std::move(state)) {}

Result<std::unique_ptr<InstallProxy>> InstallProxy::start(InstallProxyConfig config,
                                                          const std::string& socket_path) {
  auto owned = std::make_unique<State>();
  State* state = owned.get();
  state->config = std::move(config);
  error_code ec;
  Local::endpoint endpoint(socket_path);
  state->acceptor.open(endpoint.protocol(), ec);
  if (!ec) state->acceptor.bind(endpoint, ec);
  if (!ec) state->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return make_error(ErrorCode::kSystem,
                      "the install proxy cannot listen on " + socket_path + ": " + ec.message());
  }
  // At the install's deadline every connection ends with the installer.
  state->deadline.expires_at(state->config.deadline);
  state->deadline.async_wait([state](error_code cancelled) {
    if (!cancelled) state->io.stop();
  });
  accept_next(state);
  std::unique_ptr<InstallProxy> proxy(new InstallProxy(std::move(owned)));
  proxy->thread_ = std::thread([state] { state->io.run(); });
  return proxy;
}

std::vector<ProxyConnection> InstallProxy::stop() {
  state_->io.stop();
  if (thread_.joinable()) thread_.join();
  std::lock_guard lock(state_->mutex);
  std::vector<ProxyConnection> records = state_->records;
  if (state_->connections > kMaxRecords) {
    ProxyConnection rest = state_->beyond;
    rest.method = rest.target = rest.address = "";
    rest.reason = std::to_string(state_->connections - kMaxRecords) +
                  " more connections (their bytes summed here)";
    records.push_back(std::move(rest));
  }
  return records;
}

InstallProxy::~InstallProxy() { stop(); }

}  // namespace o4s::host
