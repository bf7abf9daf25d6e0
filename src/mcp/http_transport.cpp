#include "mcp/http_transport.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <condition_variable>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "base/random_id.h"
#include "base/unique_fd.h"
#include "mcp/base64.h"
#include "mcp/protocol_era.h"
#include "base/write_all.h"

namespace o4s::mcp {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

constexpr std::size_t kHeaderLimit = 64u << 10;
// A request's headers must arrive within this of the connection's turn to
// read (an idle keep-alive connection is closed after it too), its body
// within the second: a silent client cannot hold a connection slot.
constexpr auto kHeaderDeadline = std::chrono::seconds(10);
constexpr auto kBodyDeadline = std::chrono::seconds(60);

// The socket for Beast's synchronous reads, each waiting at most until the
// deadline (SO_RCVTIMEO does not bound Asio's blocking reads: it polls).
class DeadlineStream {
 public:
  explicit DeadlineStream(tcp::socket& socket) : socket_(socket) {}
  void expire_in(std::chrono::steady_clock::duration wait) {
    deadline_ = std::chrono::steady_clock::now() + wait;
  }
  template <class Buffers>
  std::size_t read_some(const Buffers& buffers, beast::error_code& ec) {
    for (;;) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                      deadline_ - std::chrono::steady_clock::now())
                      .count();
      pollfd watch{socket_.native_handle(), POLLIN, 0};
      int ready = left > 0 ? ::poll(&watch, 1, static_cast<int>(left)) : 0;
      if (ready < 0 && errno == EINTR) continue;
      if (ready <= 0) {
        ec = asio::error::timed_out;
        return 0;
      }
      return socket_.read_some(buffers, ec);
    }
  }
  template <class Buffers>
  std::size_t read_some(const Buffers& buffers) {
    beast::error_code ec;
    std::size_t n = read_some(buffers, ec);
    if (ec) throw beast::system_error(ec);
    return n;
  }

 private:
  tcp::socket& socket_;
  std::chrono::steady_clock::time_point deadline_;
};

// Boost 1.74's Beast has its own string_view.
std::string_view view(beast::string_view text) { return {text.data(), text.size()}; }

// Compares without an early exit: the time taken says nothing of where
// the first wrong character is.
bool same_secret(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff |= static_cast<unsigned char>(a[i] ^ b[i % (b.empty() ? 1 : b.size())]);
  }
  return diff == 0 && !b.empty();
}

// Origins a browser on this machine's own pages sends: any port of
// localhost / 127.0.0.1 / [::1].
bool loopback_origin(std::string_view origin) {
  for (std::string_view scheme : {"http://", "https://"}) {
    if (origin.substr(0, scheme.size()) != scheme) continue;
    std::string_view rest = origin.substr(scheme.size());
    for (std::string_view host : {"localhost", "127.0.0.1", "[::1]"}) {
      if (rest.substr(0, host.size()) != host) continue;
      std::string_view tail = rest.substr(host.size());
      if (tail.empty()) return true;
      if (tail[0] != ':' || tail.size() == 1) continue;
      bool digits = true;
      for (char c : tail.substr(1)) digits = digits && c >= '0' && c <= '9';
      if (digits) return true;
    }
  }
  return false;
}

class HttpFrontend {
 public:
  HttpFrontend(McpServer& server, HttpSettings settings)
      : server_(server), settings_(std::move(settings)) {}

  void serve_connection(tcp::socket socket);
  bool admit() {
    std::lock_guard lock(mutex_);
    if (connections_ >= settings_.max_connections) return false;
    ++connections_;
    return true;
  }
  void release() {
    std::lock_guard lock(mutex_);
    --connections_;
  }
  const HttpSettings& settings() const { return settings_; }

 private:
  using Request = http::request<http::string_body>;
  // false: the connection is to be closed.
  bool handle(tcp::socket& socket, Request& request);
  // Target, Origin and token, from the headers alone: nullopt when the
  // request may go on, else what reply() returned for the refusal.
  std::optional<bool> refuse(tcp::socket& socket, const Request& head);
  bool too_large(tcp::socket& socket);
  bool handle_post(tcp::socket& socket, Request& request);
  // A 2026-07-28 request: no session, its headers checked against the body.
  bool handle_stateless(tcp::socket& socket, Request& request, Json message);
  // The JSON answer of a request that is not streamed ("" for none).
  std::string answer_of(const std::shared_ptr<Session>& parent, Json message);
  bool reply(tcp::socket& socket, const Request& request, http::status status,
             const std::string& body, const std::string& content_type = "application/json",
             const std::string& session_id = "");
  bool stream(tcp::socket& socket, const std::shared_ptr<Session>& parent, Json message,
              const std::string& session_id);
  // The session, marked in use until the returned guard is dropped.
  std::shared_ptr<Session> use_session(const std::string& id, std::shared_ptr<void>& in_use);
  // Registers an initialized session; when full, the session unused for
  // longest (and with no request in flight) is closed to make room.
  bool add_session(const std::string& id, std::shared_ptr<Session> session);

  McpServer& server_;
  const HttpSettings settings_;
  std::mutex mutex_;
  std::size_t connections_ = 0;
  struct SessionSlot {
    std::shared_ptr<Session> session;
    std::chrono::steady_clock::time_point last_used = std::chrono::steady_clock::now();
    int in_flight = 0;
  };
  std::map<std::string, SessionSlot> sessions_;
};

// The method of a request, or "" when there is none or it is no string
// (classify() then answers the client's error).
std::string method_of(const Json& message) {
  if (!message.is_object()) return "";
  auto method = message.find("method");
  return method != message.end() && method->is_string() ? method->get<std::string>() : "";
}

std::string rpc_error_body(int code, const std::string& message) {
  return error_response(nullptr, code, message).dump();
}

bool HttpFrontend::reply(tcp::socket& socket, const Request& request, http::status status,
                         const std::string& body, const std::string& content_type,
                         const std::string& session_id) {
  http::response<http::string_body> response{status, request.version()};
  response.set(http::field::server, "openai4s-mcp");
  if (!body.empty()) response.set(http::field::content_type, content_type);
  if (!session_id.empty()) response.set("Mcp-Session-Id", session_id);
  if (status == http::status::unauthorized) {
    response.set(http::field::www_authenticate, "Bearer realm=\"openai4s-mcp\"");
  }
  if (status == http::status::method_not_allowed) response.set(http::field::allow, "POST, DELETE");
  response.keep_alive(request.keep_alive() && static_cast<unsigned>(status) < 400);
  response.body() = body;
  response.prepare_payload();
  beast::error_code ec;
  http::write(socket, response, ec);
  return !ec && response.keep_alive();
}

std::shared_ptr<Session> HttpFrontend::use_session(const std::string& id,
                                                   std::shared_ptr<void>& in_use) {
  std::lock_guard lock(mutex_);
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return nullptr;
  it->second.in_flight += 1;
  it->second.last_used = std::chrono::steady_clock::now();
  in_use = std::shared_ptr<void>(nullptr, [this, id](void*) {
    std::lock_guard done(mutex_);
    auto slot = sessions_.find(id);
    if (slot == sessions_.end()) return;
    slot->second.in_flight -= 1;
    slot->second.last_used = std::chrono::steady_clock::now();
  });
  return it->second.session;
}

bool HttpFrontend::add_session(const std::string& id, std::shared_ptr<Session> session) {
  std::shared_ptr<Session> evicted;
  {
    std::lock_guard lock(mutex_);
    if (sessions_.size() >= settings_.max_sessions) {
      auto oldest = sessions_.end();
      for (auto it = sessions_.begin(); it != sessions_.end(); ++it) {
        if (it->second.in_flight > 0) continue;
        if (oldest == sessions_.end() || it->second.last_used < oldest->second.last_used) {
          oldest = it;
        }
      }
      if (oldest == sessions_.end()) return false;
      evicted = std::move(oldest->second.session);
      sessions_.erase(oldest);
    }
    sessions_[id].session = std::move(session);
  }
  if (evicted) evicted->close();
  return true;
}

void HttpFrontend::serve_connection(tcp::socket socket) {
  // A client that stops reading cannot hold a writer forever.
  timeval timeout{settings_.send_timeout_s, 0};
  ::setsockopt(socket.native_handle(), SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
  beast::flat_buffer buffer(kHeaderLimit + 8192);
  DeadlineStream stream(socket);
  for (;;) {
    http::request_parser<http::string_body> parser;
    parser.header_limit(static_cast<std::uint32_t>(kHeaderLimit));
    parser.body_limit(settings_.max_body_bytes);
    beast::error_code ec;
    stream.expire_in(kHeaderDeadline);
    http::read_header(stream, buffer, parser, ec);
    if (ec == http::error::body_limit) {
      too_large(socket);
      break;
    }
    if (ec) break;
    // Refused before its body is read: no token, no cost.
    if (auto refused = refuse(socket, parser.get())) {
      if (!*refused) break;
      continue;
    }
    stream.expire_in(kBodyDeadline);
    http::read(stream, buffer, parser, ec);
    if (ec == http::error::body_limit) {
      too_large(socket);
      break;
    }
    if (ec) break;
    Request request = parser.release();
    // Whatever a client sends, a failure ends this connection, never the
    // process.
    bool go_on = false;
    try {
      go_on = handle(socket, request);
    } catch (const std::exception& error) {
      std::fprintf(stderr, "openai4s-mcp: request failed: %s\n", error.what());
    }
    if (!go_on) break;
  }
  beast::error_code ignored;
  socket.shutdown(tcp::socket::shutdown_both, ignored);
}

// Refused from its Content-Length (or once past the bound), never read
// whole; the connection is closed after.
bool HttpFrontend::too_large(tcp::socket& socket) {
  Request head;
  head.version(11);
  return reply(socket, head, http::status::payload_too_large,
               rpc_error_body(rpc_error::kInvalidRequest, "the body is over 16 MiB"));
}

std::optional<bool> HttpFrontend::refuse(tcp::socket& socket, const Request& request) {
  std::string_view target = view(request.target());
  if (target.substr(0, target.find('?')) != "/mcp") {
    return reply(socket, request, http::status::not_found, "");
  }
  auto origin = request.find(http::field::origin);
  if (origin != request.end()) {
    std::string_view value = view(origin->value());
    bool allowed = loopback_origin(value);
    for (const auto& listed : settings_.allowed_origins) allowed = allowed || value == listed;
    if (!allowed) {
      return reply(socket, request, http::status::forbidden,
                   rpc_error_body(rpc_error::kInvalidRequest, "Forbidden: foreign Origin"));
    }
  }
  auto auth = request.find(http::field::authorization);
  std::string_view presented = auth == request.end() ? std::string_view() : view(auth->value());
  constexpr std::string_view kBearer = "Bearer ";
  if (presented.substr(0, kBearer.size()) != kBearer ||
      !same_secret(presented.substr(kBearer.size()), settings_.token)) {
    return reply(
        socket, request, http::status::unauthorized,
        rpc_error_body(rpc_error::kInvalidRequest,
                       "Unauthorized: send Authorization: Bearer <token from --token-file>"));
  }
  return std::nullopt;
}

bool HttpFrontend::handle(tcp::socket& socket, Request& request) {
  if (request.method() == http::verb::post) return handle_post(socket, request);
  if (request.method() == http::verb::delete_) {
    std::string id(request["Mcp-Session-Id"]);
    std::shared_ptr<Session> session;
    {
      std::lock_guard lock(mutex_);
      auto it = sessions_.find(id);
      if (it != sessions_.end()) {
        session = it->second.session;
        sessions_.erase(it);
      }
    }
    if (!session) return reply(socket, request, http::status::not_found, "");
    session->close();
    return reply(socket, request, http::status::ok, "");
  }
  // No server-initiated stream (GET): everything rides on a POST's answer.
  return reply(socket, request, http::status::method_not_allowed, "");
}

bool HttpFrontend::handle_post(tcp::socket& socket, Request& request) {
  Json message = Json::parse(request.body(), nullptr, false);
  if (message.is_discarded()) {
    return reply(socket, request, http::status::bad_request,
                 rpc_error_body(rpc_error::kParseError, "Parse error: not valid JSON"));
  }
  if (message.is_object() && stateless_version(message.value("params", Json::object()))) {
    return handle_stateless(socket, request, std::move(message));
  }
  bool initializing = method_of(message) == "initialize";
  std::string session_id(request["Mcp-Session-Id"]);
  std::shared_ptr<Session> parent;
  std::shared_ptr<void> in_use;
  if (initializing) {
    session_id = random_hex(16);
    // The root holds the protocol state; every message goes out through
    // a request's own channel. It is registered once initialize succeeded.
    parent = std::make_shared<Session>([](const std::string&) { return false; });
  } else {
    if (session_id.empty()) {
      return reply(socket, request, http::status::bad_request,
                   rpc_error_body(rpc_error::kInvalidRequest,
                                  "Bad Request: Mcp-Session-Id header is required"));
    }
    parent = use_session(session_id, in_use);
    if (!parent) {
      return reply(socket, request, http::status::not_found,
                   rpc_error_body(rpc_error::kInvalidRequest, "Session not found"));
    }
  }
  // Only a valid request streams: one the server answers with id null
  // (an invalid id) would leave the stream waiting for its own id.
  auto id = message.is_object() ? message.find("id") : message.end();
  bool valid_id =
      message.is_object() && id != message.end() && (id->is_string() || id->is_number_integer());
  if (valid_id && method_of(message) == "tools/call") {
    return stream(socket, parent, std::move(message), session_id);
  }
  std::string answer = answer_of(parent, std::move(message));
  if (initializing) {
    Json answered = Json::parse(answer, nullptr, false);
    bool ok = answered.is_object() && answered.contains("result");
    if (ok && !add_session(session_id, parent)) {
      return reply(socket, request, http::status::service_unavailable,
                   rpc_error_body(rpc_error::kInternalError, "too many sessions, all in use"));
    }
    if (!ok) session_id.clear();
  }
  if (answer.empty()) return reply(socket, request, http::status::accepted, "", "", session_id);
  return reply(socket, request, http::status::ok, answer, "application/json", session_id);
}

std::string HttpFrontend::answer_of(const std::shared_ptr<Session>& parent, Json message) {
  std::string answer;
  auto channel = std::make_shared<Session>(
      [&answer](const std::string& text) {
        if (answer.empty()) answer = text;
        return true;
      },
      parent);
  server_.handle(channel, std::move(message));
  return answer;
}

// A header value as 2026-07-28 encodes it: plain ASCII, or base64 between
// "=?base64?" and "?=" (non-ASCII, or edge spaces).
std::optional<std::string> header_value(std::string_view raw) {
  constexpr std::string_view kOpen = "=?base64?", kClose = "?=";
  if (raw.size() < kOpen.size() + kClose.size() || raw.substr(0, kOpen.size()) != kOpen ||
      raw.substr(raw.size() - kClose.size()) != kClose) {
    return std::string(raw);
  }
  return base64_decode(raw.substr(kOpen.size(), raw.size() - kOpen.size() - kClose.size()));
}

// Why the standard headers disagree with the body, or "" when they agree
// (2026-07-28 "Server Validation": a router may act on the headers, so the
// server must not act on a different body).
std::string header_mismatch(const http::request<http::string_body>& request, const Json& message,
                            const std::string& version) {
  std::string method = method_of(message);
  if (view(request["MCP-Protocol-Version"]) != version) {
    return "the MCP-Protocol-Version header must equal the _meta protocol version " + version;
  }
  if (view(request["Mcp-Method"]) != method) return "the Mcp-Method header must equal " + method;
  const char* name_field = method == "tools/call"       ? "name"
                           : method == "resources/read" ? "uri"
                           : method == "prompts/get"    ? "name"
                                                        : nullptr;
  if (!name_field) return "";
  const Json& params = message["params"];
  auto body = params.find(name_field);
  auto header = header_value(view(request["Mcp-Name"]));
  if (body == params.end() || !body->is_string() || !header || *header != *body) {
    return std::string("the Mcp-Name header must equal params.") + name_field;
  }
  return "";
}

bool HttpFrontend::handle_stateless(tcp::socket& socket, Request& request, Json message) {
  std::string version = *stateless_version(message["params"]);
  if (version == kStatelessVersion) {
    if (std::string why = header_mismatch(request, message, version); !why.empty()) {
      return reply(socket, request, http::status::bad_request,
                   error_response(message.value("id", Json(nullptr)), kHeaderMismatch,
                                  "Header mismatch: " + why)
                       .dump());
    }
  }
  // No session: the request carries all it needs, and any Mcp-Session-Id
  // is ignored. Its messages go out through its own channel.
  auto parent = std::make_shared<Session>([](const std::string&) { return false; });
  auto id = message.find("id");
  bool valid_id = id != message.end() && (id->is_string() || id->is_number_integer());
  if (valid_id && version == kStatelessVersion && method_of(message) == "tools/call") {
    return stream(socket, parent, std::move(message), "");
  }
  std::string answer = answer_of(parent, std::move(message));
  if (answer.empty()) return reply(socket, request, http::status::accepted, "");
  Json answered = Json::parse(answer, nullptr, false);
  int code =
      answered.is_object() && answered.contains("error") ? answered["error"].value("code", 0) : 0;
  auto status = code == kUnsupportedProtocolVersion  ? http::status::bad_request
                : code == rpc_error::kMethodNotFound ? http::status::not_found
                                                     : http::status::ok;
  return reply(socket, request, status, answer);
}

// One tools/call: its messages as server-sent events, the stream closed
// after the final answer. A client that closes the stream cancels the call.
bool HttpFrontend::stream(tcp::socket& socket, const std::shared_ptr<Session>& parent, Json message,
                          const std::string& session_id) {
  const int fd = socket.native_handle();
  std::string head =
      "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
      "Connection: close\r\n";
  if (!session_id.empty()) head += "Mcp-Session-Id: " + session_id + "\r\n";
  head += "\r\n";
  if (!write_all(fd, head)) return false;
  struct Done {
    std::mutex mutex;
    std::condition_variable cv;
    bool answered = false;
    bool broken = false;
  };
  auto done = std::make_shared<Done>();
  const Json id = message["id"];
  auto channel = std::make_shared<Session>(
      [fd, done, id](const std::string& text) {
        bool final = false;
        Json parsed = Json::parse(text, nullptr, false);
        // Its own answer, or an error about the request itself (id null).
        auto answered = parsed.is_object() ? parsed.find("id") : parsed.end();
        if (parsed.is_object() && !parsed.contains("method") && answered != parsed.end() &&
            (*answered == id || answered->is_null())) {
          final = true;
        }
        bool ok = write_all(fd, "event: message\ndata: " + text + "\n\n");
        std::lock_guard lock(done->mutex);
        if (!ok) done->broken = true;
        if (final) done->answered = true;
        if (!ok || final) done->cv.notify_all();
        return ok;
      },
      parent);
  server_.handle(channel, std::move(message));
  std::unique_lock lock(done->mutex);
  while (!done->answered && !done->broken) {
    if (done->cv.wait_for(lock, std::chrono::milliseconds(200),
                          [&] { return done->answered || done->broken; })) {
      break;
    }
    // The client hung up (or sent more than it should): the call is
    // cancelled, its cell interrupted.
    pollfd watch{fd, POLLRDHUP, 0};
    if (::poll(&watch, 1, 0) > 0) {
      done->broken = true;
      break;
    }
  }
  lock.unlock();
  channel->close();
  return false;
}

}  // namespace

bool is_loopback_host(const std::string& host) {
  return host == "127.0.0.1" || host == "::1" || host == "localhost" || host == "[::1]";
}

Result<std::string> load_or_create_token(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (fd) {
    std::string token = random_hex(32);
    std::string line = token + "\n";
    if (!write_all(fd.get(), line)) {
      int error = errno;
      ::unlink(path.c_str());  // a short token must not be found next time
      return system_error("write " + path, error);
    }
    std::fprintf(stderr, "openai4s-mcp: a new bearer token is in %s\n", path.c_str());
    return token;
  }
  if (errno != EEXIST) return system_error("create " + path, errno);
  // Checked and read through one fd: what was checked is what is read.
  UniqueFd file(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!file) return system_error("open " + path, errno);
  struct stat info {};
  if (::fstat(file.get(), &info) != 0) return system_error("stat " + path, errno);
  if (!S_ISREG(info.st_mode) || (info.st_mode & 077) != 0 || info.st_uid != ::geteuid()) {
    return make_error(ErrorCode::kInvalidArgument,
                      "the token file " + path +
                          " must be a regular file of this user that only its owner can read "
                          "(chmod 600)");
  }
  std::string token;
  char chunk[256];
  for (;;) {
    ssize_t n = ::read(file.get(), chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return system_error("read " + path, errno);
    if (n == 0 || token.size() > 4096) break;
    token.append(chunk, static_cast<std::size_t>(n));
  }
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r' || token.back() == ' ')) {
    token.pop_back();
  }
  if (token.size() < 16) {
    return make_error(ErrorCode::kInvalidArgument,
                      "the token in " + path + " is shorter than 16 characters");
  }
  return token;
}

Status serve_http(McpServer& server, const HttpSettings& settings) {
  asio::io_context context;
  beast::error_code ec;
  std::string host = settings.host == "localhost" ? "127.0.0.1" : settings.host;
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  auto address = asio::ip::make_address(host, ec);
  if (ec) return make_error(ErrorCode::kInvalidArgument, "not an IP address: " + settings.host);
  tcp::acceptor acceptor(context);
  tcp::endpoint endpoint(address, settings.port);
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return make_error(ErrorCode::kSystem, "cannot listen on " + settings.host + ":" +
                                              std::to_string(settings.port) + ": " + ec.message());
  }
  std::fprintf(stderr, "openai4s-mcp: serving Streamable HTTP at http://%s:%u/mcp\n",
               settings.host.c_str(), static_cast<unsigned>(acceptor.local_endpoint().port()));
  auto frontend = std::make_shared<HttpFrontend>(server, settings);
  for (;;) {
    tcp::socket socket(context);
    acceptor.accept(socket, ec);
    if (ec) {
      // Out of fds (EMFILE) and the like: wait for some to close rather
      // than spin on the same error.
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    if (!frontend->admit()) {
      // Over the connection bound: refused at once, never queued.
      static const char kBusy[] =
          "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
      (void)write_all(socket.native_handle(), kBusy);
      continue;
    }
    std::thread([frontend, s = std::move(socket)]() mutable {
      frontend->serve_connection(std::move(s));
      frontend->release();
    }).detach();
  }
}

}  // namespace o4s::mcp
