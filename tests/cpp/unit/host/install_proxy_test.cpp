// The install proxy on real sockets (issue 30 part 2): a client on its unix
// socket, an origin on 127.0.0.1 that records what it was sent. Admitted
// requests reach the origin rewritten; others get a refusal and reach
// nothing; a tunnel goes on only with a TLS hello naming its host; a plain
// connection carries one request; the byte budget cuts a connection;
// every connection is recorded.
#include "host/install_proxy.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <thread>

#include "base/unique_fd.h"
#include "support/temp_dir.h"
#include "unit/host/install_proxy_hello_bytes.h"

namespace o4s::host {
namespace {

using hello_bytes::hello_naming;
using std::chrono::seconds;

// An HTTP origin on 127.0.0.1: reads one request head (and the body its
// Content-Length declares), answers `body`, closes; counts connections
// and keeps the last head and everything it was ever sent. One connection
// at a time: a connection's answer means the ones before it are recorded.
class Origin {
 public:
  explicit Origin(std::string body) : body_(std::move(body)) {
    listener_ = UniqueFd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof address;
    EXPECT_EQ(::bind(listener_.get(), reinterpret_cast<sockaddr*>(&address), size), 0);
    EXPECT_EQ(::listen(listener_.get(), 8), 0);
    ::getsockname(listener_.get(), reinterpret_cast<sockaddr*>(&address), &size);
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~Origin() {
    ::shutdown(listener_.get(), SHUT_RDWR);
    thread_.join();
  }
  std::uint16_t port() const { return port_; }
  int connections() const { return connections_; }
  std::string last_head() const {
    std::lock_guard lock(mutex_);
    return last_head_;
  }
  std::string all() const {
    std::lock_guard lock(mutex_);
    return all_;
  }

 private:
  void serve() {
    for (;;) {
      UniqueFd client(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
      if (!client) return;
      ++connections_;
      std::string head;
      char buffer[4096];
      auto more = [&] {
        ssize_t got = ::read(client.get(), buffer, sizeof buffer);
        if (got > 0) head.append(buffer, static_cast<std::size_t>(got));
        return got > 0;
      };
      while (head.find("\r\n\r\n") == std::string::npos && more()) {
      }
      std::size_t end = head.find("\r\n\r\n");
      if (auto at = head.find("Content-Length: "); end != std::string::npos && at < end) {
        std::size_t want = end + 4 + std::stoul(head.substr(at + 16));
        while (head.size() < want && more()) {
        }
      }
      // Whatever else comes at once (a pipelined request that got through).
      pollfd ready{client.get(), POLLIN, 0};
      while (::poll(&ready, 1, 200) == 1 && more()) {
      }
      {
        std::lock_guard lock(mutex_);
        last_head_ = head;
        all_ += head;
      }
      std::string reply =
          "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body_.size()) + "\r\n\r\n" + body_;
      (void)!::send(client.get(), reply.data(), reply.size(), MSG_NOSIGNAL);
    }
  }

  std::string body_;
  UniqueFd listener_;
  std::uint16_t port_ = 0;
  std::atomic<int> connections_{0};
  // The socket orders these for us, not for ThreadSanitizer.
  mutable std::mutex mutex_;
  std::string last_head_;
  std::string all_;
  std::thread thread_;
};

class InstallProxyTest : public ::testing::Test {
 protected:
  void start(std::vector<ProxyTarget> targets, const char* allow_private = "0.0.0.0/0",
             std::uint64_t max_bytes = 1 << 20) {
    InstallProxyConfig config;
    config.targets = std::move(targets);
    config.policy = *make_egress_policy("allowlist", "127.0.0.1", allow_private);
    config.max_bytes = max_bytes;
    config.deadline = std::chrono::steady_clock::now() + seconds(30);
    auto proxy = InstallProxy::start(std::move(config), socket_path());
    ASSERT_TRUE(proxy.ok()) << proxy.error().message;
    proxy_ = std::move(proxy.value());
  }

  std::string socket_path() const { return dir_.file("proxy.sock"); }

  UniqueFd connect_proxy() const {
    UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::snprintf(address.sun_path, sizeof address.sun_path, "%s", socket_path().c_str());
    EXPECT_EQ(::connect(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    return fd;
  }

  static void send_all(int fd, const std::string& bytes) {
    (void)!::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
  }

  // Reads until the proxy closes (or `until` has come, when given).
  static std::string read_from(int fd, const std::string& until = "") {
    std::string answer;
    char buffer[4096];
    while (until.empty() || answer.find(until) == std::string::npos) {
      ssize_t got = ::read(fd, buffer, sizeof buffer);
      if (got <= 0) break;
      answer.append(buffer, static_cast<std::size_t>(got));
    }
    return answer;
  }

  // Sends `request` through the proxy and reads until it closes.
  std::string exchange(const std::string& request) {
    UniqueFd fd = connect_proxy();
    send_all(fd.get(), request);
    return read_from(fd.get());
  }

  testing::TempDir dir_;
  std::unique_ptr<InstallProxy> proxy_;
};

TEST_F(InstallProxyTest, AnAdmittedRequestReachesTheOriginRewritten) {
  Origin origin("the index page");
  start({{false, "127.0.0.1", origin.port()}});
  std::string target = "127.0.0.1:" + std::to_string(origin.port());
  std::string answer = exchange("GET http://" + target +
                                "/simple/ HTTP/1.1\r\nHost: x\r\nProxy-Connection: keep-alive\r\n"
                                "Connection: keep-alive\r\n\r\n");
  EXPECT_NE(answer.find("200 OK"), std::string::npos) << answer;
  EXPECT_NE(answer.find("the index page"), std::string::npos);
  EXPECT_EQ(origin.last_head(),
            "GET /simple/ HTTP/1.1\r\nHost: " + target + "\r\nConnection: close\r\n\r\n");
  auto records = proxy_->stop();
  ASSERT_EQ(records.size(), 1U);
  EXPECT_TRUE(records[0].allowed);
  EXPECT_EQ(records[0].method, "GET");
  EXPECT_EQ(records[0].target, target);
  EXPECT_EQ(records[0].address, "127.0.0.1");
  EXPECT_EQ(records[0].bytes_in, answer.size());
}

TEST_F(InstallProxyTest, AnAdmittedTunnelCarriesBytesBothWays) {
  Origin origin("through the tunnel");
  start({{true, "127.0.0.1", origin.port()}});
  std::string target = "127.0.0.1:" + std::to_string(origin.port());
  // The bytes after the CONNECT head (a TLS hello, in pip's case) go on;
  // an address has no name for the hello to carry.
  std::string hello = hello_naming("");
  std::string answer =
      exchange("CONNECT " + target + " HTTP/1.1\r\n\r\n" + hello + "HELLO / X\r\n\r\n");
  EXPECT_EQ(answer.rfind("HTTP/1.1 200 Connection established\r\n\r\nHTTP/1.1 200 OK", 0), 0U)
      << answer;
  EXPECT_NE(answer.find("through the tunnel"), std::string::npos);
  EXPECT_EQ(origin.last_head(), hello + "HELLO / X\r\n\r\n");
  auto records = proxy_->stop();
  ASSERT_EQ(records.size(), 1U);
  EXPECT_EQ(records[0].method, "CONNECT");
  EXPECT_TRUE(records[0].allowed);
  EXPECT_EQ(records[0].bytes_out, hello.size() + 13U);
}

TEST_F(InstallProxyTest, AnotherPortIsRefusedAndReachesNothing) {
  Origin source("source");
  Origin other("other");
  start({{false, "127.0.0.1", source.port()}});
  std::string other_target = "127.0.0.1:" + std::to_string(other.port());
  for (const std::string& head : {"CONNECT " + other_target + " HTTP/1.1\r\n\r\n",
                                  "GET http://" + other_target + "/ HTTP/1.1\r\n\r\n"}) {
    std::string answer = exchange(head);
    EXPECT_NE(answer.find("403 Forbidden"), std::string::npos) << answer;
    EXPECT_NE(answer.find("not a configured package source"), std::string::npos);
  }
  EXPECT_EQ(other.connections(), 0);
  EXPECT_EQ(source.connections(), 0);
  for (const auto& record : proxy_->stop()) EXPECT_FALSE(record.allowed);
}

TEST_F(InstallProxyTest, ASourceOnAPrivateAddressIsRefusedByThePolicy) {
  Origin origin("private");
  start({{true, "127.0.0.1", origin.port()}}, "");
  std::string answer =
      exchange("CONNECT 127.0.0.1:" + std::to_string(origin.port()) + " HTTP/1.1\r\n\r\n");
  EXPECT_NE(answer.find("403 Forbidden"), std::string::npos) << answer;
  EXPECT_NE(answer.find("loopback"), std::string::npos) << answer;
  EXPECT_EQ(origin.connections(), 0);
}

TEST_F(InstallProxyTest, MalformedAndOversizedHeadsAreRefused) {
  start({});
  EXPECT_NE(exchange("GET /x HTTP/1.1\r\n\r\n").find("400 Bad Request"), std::string::npos);
  std::string huge = "GET http://127.0.0.1:1/ HTTP/1.1\r\nX: " + std::string(20000, 'a');
  EXPECT_NE(exchange(huge + "\r\n\r\n").find("431"), std::string::npos);
  auto records = proxy_->stop();
  ASSERT_EQ(records.size(), 2U);
  EXPECT_NE(records[0].reason.find("malformed"), std::string::npos);
  EXPECT_NE(records[1].reason.find("16 KiB"), std::string::npos);
}

TEST_F(InstallProxyTest, TheByteBudgetCutsAConnection) {
  Origin origin(std::string(64 * 1024, 'x'));
  start({{false, "127.0.0.1", origin.port()}}, "0.0.0.0/0", 1024);
  std::string answer =
      exchange("GET http://127.0.0.1:" + std::to_string(origin.port()) + "/ HTTP/1.1\r\n\r\n");
  EXPECT_LT(answer.size(), 64U * 1024);
  auto records = proxy_->stop();
  ASSERT_EQ(records.size(), 1U);
  EXPECT_NE(records[0].reason.find("byte budget"), std::string::npos);
}

TEST_F(InstallProxyTest, ManyConnectionsKeepABoundedRecord) {
  start({});
  for (int i = 0; i < 300; ++i) exchange("CONNECT elsewhere.org:443 HTTP/1.1\r\n\r\n");
  auto records = proxy_->stop();
  ASSERT_EQ(records.size(), 257U);
  EXPECT_EQ(records[255].target, "elsewhere.org:443");
  EXPECT_EQ(records[256].reason, "44 more connections (their bytes summed here)");
}

// A script holding connections open without a word: past 64 at once a new
// one is closed unread (the host's fds stay bounded), and a served one
// still works beside them.
TEST_F(InstallProxyTest, ConnectionsHeldOpenSilentlyAreBounded) {
  start({});
  std::vector<UniqueFd> silent;
  for (int i = 0; i < 80; ++i) {
    UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::snprintf(address.sun_path, sizeof address.sun_path, "%s", socket_path().c_str());
    ASSERT_EQ(::connect(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    silent.push_back(std::move(fd));
  }
  // The ones past the bound are closed by the proxy: a read sees the end.
  std::size_t closed = 0;
  for (std::size_t i = 64; i < silent.size(); ++i) {
    timeval wait{5, 0};
    ::setsockopt(silent[i].get(), SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
    char byte = 0;
    if (::read(silent[i].get(), &byte, 1) == 0) ++closed;
  }
  EXPECT_EQ(closed, 16U);
  silent.resize(10);  // some go: their places serve again
  // (once the proxy has seen them go: it frees their places as it reads).
  bool served = false;
  for (int attempt = 0; attempt < 100 && !served; ++attempt) {
    served = exchange("GET /x HTTP/1.1\r\n\r\n").find("400 Bad Request") != std::string::npos;
    if (!served) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(served);
}

// Domain fronting: a tunnel admitted for its CONNECT host goes on only when
// the TLS hello names that host; any other hello gets a TLS alert and none
// of its bytes reach the origin.
TEST_F(InstallProxyTest, ATunnelGoesOnOnlyWithAHelloNamingItsHost) {
  Origin origin("through the tunnel");
  start({{true, "localhost", origin.port()}}, "0.0.0.0/0 ::/0");
  const std::string connect =
      "CONNECT localhost:" + std::to_string(origin.port()) + " HTTP/1.1\r\n\r\n";
  const std::string established = "HTTP/1.1 200 Connection established\r\n\r\n";
  const std::string alert("\x15\x03\x03\x00\x02\x02\x31", 7);
  using namespace hello_bytes;
  const std::vector<std::pair<std::string, std::string>> refused = {
      {hello_naming("pypi.org"), "names another server in its TLS hello: pypi.org"},
      {hello_naming("localhost."), "names another server"},
      {hello_naming(""), "names no server"},
      {record(hello_message(server_names({"localhost", "pypi.org"}))), "more than one server"},
      {record(hello_message(server_names({"localhost"}) + extension(0xfe0d, "ech"))), "ECH"},
      {"GET / HTTP/1.1\r\nHost: pypi.org\r\n\r\n", "not a TLS handshake record"},
  };
  for (const auto& [hello, why] : refused) {
    EXPECT_EQ(exchange(connect + hello + "HELLO / X\r\n\r\n"), established + alert) << why;
  }
  // The hello in its own write after the 200, in any letter case.
  UniqueFd fd = connect_proxy();
  send_all(fd.get(), connect);
  EXPECT_EQ(read_from(fd.get(), "\r\n\r\n"), established);
  send_all(fd.get(), hello_naming("LocalHost") + "HELLO / X\r\n\r\n");
  EXPECT_NE(read_from(fd.get()).find("through the tunnel"), std::string::npos);
  // The origin answered the last one: it has seen all, and only its bytes.
  EXPECT_EQ(origin.all(), hello_naming("LocalHost") + "HELLO / X\r\n\r\n");
  auto records = proxy_->stop();
  ASSERT_EQ(records.size(), refused.size() + 1);
  for (std::size_t i = 0; i < refused.size(); ++i) {
    EXPECT_FALSE(records[i].allowed);
    EXPECT_EQ(records[i].bytes_out, 0U);
    EXPECT_NE(records[i].reason.find(refused[i].second), std::string::npos) << records[i].reason;
  }
  EXPECT_TRUE(records.back().allowed);
  EXPECT_EQ(records.back().reason, "");
}

// The hello may come a byte at a time: it is still read whole, then sent on
// unchanged.
TEST_F(InstallProxyTest, AHelloInManySegmentsIsReadWhole) {
  Origin origin("answered");
  start({{true, "localhost", origin.port()}}, "0.0.0.0/0 ::/0");
  UniqueFd fd = connect_proxy();
  send_all(fd.get(), "CONNECT localhost:" + std::to_string(origin.port()) + " HTTP/1.1\r\n\r\n");
  read_from(fd.get(), "\r\n\r\n");
  const std::string hello = hello_naming("localhost");
  for (char byte : hello) {
    send_all(fd.get(), std::string(1, byte));
    std::this_thread::sleep_for(std::chrono::microseconds(300));
  }
  send_all(fd.get(), "HELLO / X\r\n\r\n");
  EXPECT_NE(read_from(fd.get()).find("answered"), std::string::npos);
  EXPECT_EQ(origin.last_head(), hello + "HELLO / X\r\n\r\n");
}

// Tunnels that end before their hello give their places back at once (not
// after the 30 s the hello may take): 64 of them, then one more is served.
TEST_F(InstallProxyTest, TunnelsLeavingBeforeTheirHelloFreeTheirPlaces) {
  Origin origin("answered");
  start({{true, "localhost", origin.port()}}, "0.0.0.0/0 ::/0");
  const std::string connect =
      "CONNECT localhost:" + std::to_string(origin.port()) + " HTTP/1.1\r\n\r\n";
  for (int i = 0; i < 64; ++i) {
    UniqueFd fd = connect_proxy();
    send_all(fd.get(), connect);
    EXPECT_EQ(read_from(fd.get(), "\r\n\r\n").rfind("HTTP/1.1 200", 0), 0U);
  }  // each closed, having said nothing more
  bool served = false;
  for (int attempt = 0; attempt < 100 && !served; ++attempt) {
    served = exchange("GET /x HTTP/1.1\r\n\r\n").find("400 Bad Request") != std::string::npos;
    if (!served) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(served);
  for (const auto& record : proxy_->stop())
    EXPECT_EQ(record.reason.find("30 s"), std::string::npos);
}

// A record header claiming more than TLS allows is refused at once, not
// waited for.
TEST_F(InstallProxyTest, AnOversizedHelloRecordIsRefusedAtOnce) {
  Origin origin("never");
  start({{true, "localhost", origin.port()}}, "0.0.0.0/0 ::/0");
  std::string header =
      hello_bytes::be(22, 1) + hello_bytes::be(0x0301, 2) + hello_bytes::be(0xffff, 2);
  std::string answer = exchange("CONNECT localhost:" + std::to_string(origin.port()) +
                                " HTTP/1.1\r\n\r\n" + header + "abc");
  EXPECT_EQ(answer.substr(answer.size() - 7), std::string("\x15\x03\x03\x00\x02\x02\x31", 7));
  auto records = proxy_->stop();
  ASSERT_EQ(records.size(), 1U);
  EXPECT_NE(records[0].reason.find("over 2^14"), std::string::npos) << records[0].reason;
}

// Plain http: one request a connection. A request pipelined after the
// first (another Host, another origin) never reaches the origin; a body
// goes on only as far as its Content-Length.
TEST_F(InstallProxyTest, APipelinedRequestIsNotForwarded) {
  Origin origin("first answer");
  start({{false, "127.0.0.1", origin.port()}});
  const std::string target = "127.0.0.1:" + std::to_string(origin.port());
  const std::string second = "GET http://evil.example/ HTTP/1.1\r\nHost: evil.example\r\n\r\n";
  std::string answer = exchange("GET http://" + target + "/a HTTP/1.1\r\n\r\n" + second);
  EXPECT_NE(answer.find("first answer"), std::string::npos) << answer;
  EXPECT_EQ(origin.last_head(),
            "GET /a HTTP/1.1\r\nHost: " + target + "\r\nConnection: close\r\n\r\n");
  answer = exchange("POST http://" + target + "/up HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello" +
                    "GET /x HTTP/1.1\r\nHost: evil.example\r\n\r\n");
  EXPECT_NE(answer.find("first answer"), std::string::npos) << answer;
  EXPECT_EQ(origin.last_head(), "POST /up HTTP/1.1\r\nHost: " + target +
                                    "\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello");
  // A chunked body has no length the proxy could hold it to.
  answer = exchange("POST http://" + target +
                    "/up HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n");
  EXPECT_NE(answer.find("400 Bad Request"), std::string::npos) << answer;
  EXPECT_EQ(origin.connections(), 2);
  auto records = proxy_->stop();
  ASSERT_EQ(records.size(), 3U);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_TRUE(records[i].allowed);
    EXPECT_EQ(records[i].reason, "a second request on the connection, not forwarded");
  }
  EXPECT_NE(records[2].reason.find("unknown length"), std::string::npos) << records[2].reason;
}

}  // namespace
}  // namespace o4s::host
