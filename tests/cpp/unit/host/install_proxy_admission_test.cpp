// The install proxy's admission decision (issue 30 part 2): what a client in
// the install sandbox may ask for, and where it may then go. Pure
// functions: no sockets, literal addresses only.
#include "host/install_proxy_admission.h"

#include <gtest/gtest.h>

namespace o4s::host {
namespace {

const std::vector<ProxyTarget> kSources = {{true, "pypi.org", 443}, {false, "127.0.0.1", 8080}};

ProxyRequest parsed(std::string_view head) {
  auto request = parse_proxy_request(head);
  EXPECT_TRUE(request.ok()) << request.error().message;
  return request.ok() ? *request : ProxyRequest{};
}

std::string error_of(std::string_view head) {
  auto request = parse_proxy_request(head);
  return request.ok() ? std::string("accepted") : request.error().message;
}

TEST(InstallProxyAdmission, SourcesBecomeOriginsWithDefaultPorts) {
  auto https = proxy_target_of("https://PyPI.org./simple/");
  ASSERT_TRUE(https.ok());
  EXPECT_TRUE(https->tls);
  EXPECT_EQ(https->text(), "pypi.org:443");
  auto http = proxy_target_of("http://[::1]:9000/links");
  ASSERT_TRUE(http.ok());
  EXPECT_FALSE(http->tls);
  EXPECT_EQ(http->text(), "[::1]:9000");
  EXPECT_FALSE(proxy_target_of("ftp://example.org/").ok());
  auto targets = install_targets({"https://pypi.org/simple"});
  ASSERT_EQ(targets.size(), 2U);
  EXPECT_EQ(targets[1].text(), "files.pythonhosted.org:443");
}

TEST(InstallProxyAdmission, AConnectToTheSourceIsAdmitted) {
  ProxyRequest request = parsed("CONNECT pypi.org:443 HTTP/1.1\r\nHost: pypi.org:443\r\n\r\n");
  EXPECT_TRUE(request.tunnel);
  EXPECT_EQ(refuse_request(kSources, request), std::nullopt);
}

TEST(InstallProxyAdmission, APlainRequestIsRewrittenForTheOrigin) {
  ProxyRequest request = parsed(
      "GET http://127.0.0.1:8080/simple/x/?a=1 HTTP/1.1\r\nHost: evil.example\r\n"
      "Proxy-Connection: keep-alive\r\nProxy-Authorization: Basic eA==\r\n"
      "Connection: keep-alive\r\nAccept: */*\r\n\r\n");
  EXPECT_FALSE(request.tunnel);
  EXPECT_EQ(refuse_request(kSources, request), std::nullopt);
  EXPECT_EQ(request.origin_head,
            "GET /simple/x/?a=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nAccept: */*\r\n"
            "Connection: close\r\n\r\n");
}

TEST(InstallProxyAdmission, AnotherHostOrPortOrSchemeIsRefused) {
  for (const char* head :
       {"CONNECT example.org:443 HTTP/1.1\r\n\r\n", "CONNECT pypi.org:22 HTTP/1.1\r\n\r\n",
        "CONNECT 127.0.0.1:8080 HTTP/1.1\r\n\r\n",    // http source, tunnelled
        "GET http://pypi.org:443/ HTTP/1.1\r\n\r\n",  // https source, plain
        "GET http://127.0.0.1:8081/ HTTP/1.1\r\n\r\n",
        "GET http://127.0.0.2:8080/ HTTP/1.1\r\n\r\n"}) {
    auto why = refuse_request(kSources, parsed(head));
    ASSERT_TRUE(why.has_value()) << head;
    EXPECT_NE(why->find("not a configured package source"), std::string::npos) << *why;
  }
}

TEST(InstallProxyAdmission, APrivateAddressIsRefusedUnlessThePolicyOpensIt) {
  auto closed = make_egress_policy("allowlist", "127.0.0.1", "");
  auto open = make_egress_policy("allowlist", "127.0.0.1", "0.0.0.0/0 ::/0");
  ASSERT_TRUE(closed.ok() && open.ok());
  for (const char* text : {"127.0.0.1", "10.1.2.3", "169.254.169.254", "::1", "::ffff:10.0.0.1"}) {
    auto address = parse_ip(text);
    ASSERT_TRUE(address.has_value()) << text;
    EXPECT_TRUE(refuse_address(*closed, "pypi.org", *address).has_value()) << text;
    EXPECT_FALSE(refuse_address(*open, "pypi.org", *address).has_value()) << text;
  }
  EXPECT_FALSE(refuse_address(*closed, "pypi.org", *parse_ip("151.101.0.223")).has_value());
}

TEST(InstallProxyAdmission, MalformedRequestsAreErrors) {
  const std::pair<const char*, const char*> cases[] = {
      {"", "blank line"},
      {"CONNECT pypi.org:443 HTTP/1.1\r\n", "blank line"},
      {"CONNECT pypi.org:443\r\n\r\n", "request line"},
      {"CONNECT pypi.org:443 HTTP/2\r\n\r\n", "HTTP/1.x"},
      {"CONNECT pypi.org HTTP/1.1\r\n\r\n", "port"},
      {"CONNECT pypi.org:0 HTTP/1.1\r\n\r\n", "port"},
      {"CONNECT pypi.org:99999 HTTP/1.1\r\n\r\n", "port"},
      {"CONNECT pypi.org:44x HTTP/1.1\r\n\r\n", "port"},
      {"CONNECT pypi_org:443 HTTP/1.1\r\n\r\n", "host"},
      {"CONNECT [::1:443 HTTP/1.1\r\n\r\n", "IPv6"},
      {"GET /simple HTTP/1.1\r\n\r\n", "http:// URL"},
      {"GET https://pypi.org/ HTTP/1.1\r\n\r\n", "http:// URL"},
      {"GET http://user@127.0.0.1:8080/ HTTP/1.1\r\n\r\n", "credentials"},
      {"GET http://127.0.0.1:8080/ HTTP/1.1\r\nX: a\rb\r\n\r\n", "control character"},
      {"GET http://127.0.0.1:8080/ HTTP/1.1\nHost: x\r\n\r\n", "control character"},
      {"GET http://127.0.0.1:8080/ HTTP/1.1\r\n folded\r\n\r\n", "header"},
      {"GET http://127.0.0.1:8080/ HTTP/1.1\r\nBad Name: x\r\n\r\n", "header name"},
      {"G(T http://127.0.0.1:8080/ HTTP/1.1\r\n\r\n", "method"},
  };
  for (const auto& [head, words] : cases) {
    std::string error = error_of(head);
    EXPECT_NE(error.find("malformed"), std::string::npos) << head << " -> " << error;
    EXPECT_NE(error.find(words), std::string::npos) << head << " -> " << error;
  }
}

TEST(InstallProxyAdmission, AnOversizedHeadIsAnError) {
  std::string head = "GET http://127.0.0.1:8080/ HTTP/1.1\r\nX-Pad: ";
  head += std::string(kMaxProxyHeadBytes, 'a') + "\r\n\r\n";
  EXPECT_NE(error_of(head).find("over 16 KiB"), std::string::npos);
}

// A plain request's body is what its one Content-Length says: the proxy
// relays that much and no more, so it and the origin agree where the
// request ends.
TEST(InstallProxyAdmission, APlainRequestsBodyHasOneClearLength) {
  auto body_of = [](const std::string& headers) {
    auto request = parse_proxy_request("POST http://127.0.0.1:8080/ HTTP/1.1\r\n" + headers);
    return request ? static_cast<long long>(request->body_bytes) : -1;
  };
  EXPECT_EQ(body_of("\r\n"), 0);
  EXPECT_EQ(body_of("Content-Length: 5\r\n\r\n"), 5);
  EXPECT_EQ(body_of("content-length:\t12 \r\nContent-Length: 12\r\n\r\n"), 12);
  EXPECT_EQ(parse_proxy_request("CONNECT pypi.org:443 HTTP/1.1\r\n\r\n")->body_bytes, 0U);
  for (const char* headers :
       {"Content-Length: 5\r\nContent-Length: 6\r\n\r\n", "Content-Length: -1\r\n\r\n",
        "Content-Length: 5, 5\r\n\r\n", "Content-Length:\r\n\r\n",
        "Content-Length: 1234567890123456\r\n\r\n", "Transfer-Encoding: chunked\r\n\r\n",
        "Transfer-Encoding: identity\r\nContent-Length: 5\r\n\r\n"}) {
    EXPECT_EQ(body_of(headers), -1) << headers;
  }
}

}  // namespace
}  // namespace o4s::host
