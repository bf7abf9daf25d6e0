// The egress policy as a pure function: which URLs and addresses the host
// may reach for a cell, and what a refusal tells the cell to do.
#include "host/egress_policy.h"

#include <gtest/gtest.h>

namespace o4s::host {
namespace {

EgressPolicy policy(std::string_view mode = "", std::string_view allow = "",
                    std::string_view allow_private = "") {
  auto made = make_egress_policy(mode, allow, allow_private);
  EXPECT_TRUE(made.ok());
  return made.value();
}

TEST(EgressMode, AllowlistIsTheDefaultAndOffIsExplicit) {
  EXPECT_EQ(parse_egress_mode(""), EgressMode::kAllowlist);
  EXPECT_EQ(parse_egress_mode("allowlist"), EgressMode::kAllowlist);
  EXPECT_EQ(parse_egress_mode("typo"), EgressMode::kAllowlist);  // fails closed
  EXPECT_EQ(parse_egress_mode(" OFF "), EgressMode::kOff);
  EXPECT_EQ(parse_egress_mode("0"), EgressMode::kOff);
}

TEST(DecideUrl, TheGroupedAllowlistAndItsSubdomainsPass) {
  auto decision = decide_url(policy(), "https://rest.uniprot.org/uniprotkb/P69905.fasta");
  EXPECT_TRUE(decision.allowed) << decision.message;
  EXPECT_EQ(decision.host, "rest.uniprot.org");
  EXPECT_EQ(decision.basis, "allowlist");
  EXPECT_TRUE(decide_url(policy(), "https://PyPI.org./simple/").allowed);
}

TEST(DecideUrl, AnotherDomainIsRefusedWithTheWayToAskForIt) {
  auto decision = decide_url(policy(), "https://evil.example/x");
  EXPECT_FALSE(decision.allowed);
  EXPECT_NE(decision.message.find("host.request_network_access('evil.example'"), std::string::npos);
  EXPECT_NE(decision.message.find("OPENAI4S_EGRESS_ALLOW"), std::string::npos);
  // A lookalike is not a subdomain.
  EXPECT_FALSE(decide_url(policy(), "https://notpypi.org/").allowed);
  EXPECT_FALSE(decide_url(policy(), "https://pypi.org.evil.example/").allowed);
}

TEST(DecideUrl, ConfiguredAndSessionDomainsWiden) {
  EgressPolicy widened = policy("", "example.org, *.data.test");
  EXPECT_EQ(decide_url(widened, "http://www.example.org/").basis, "configured");
  EXPECT_EQ(decide_url(widened, "http://a.data.test/").basis, "configured");
  widened.session_domains = {"granted.test"};
  EXPECT_EQ(decide_url(widened, "http://granted.test/x").basis, "session");
  EXPECT_EQ(decide_url(policy("off"), "https://anything.test/").basis, "off");
}

TEST(DecideUrl, OnlyHttpAndHttps) {
  for (const char* url :
       {"file:///etc/passwd", "ftp://pypi.org/x", "gopher://pypi.org/", "pypi.org/simple", ""}) {
    EXPECT_FALSE(decide_url(policy("off"), url).allowed) << url;
  }
}

TEST(DecideUrl, LiteralPrivateAddressesAreRefusedEvenWithEgressOff) {
  for (const char* url :
       {"http://127.0.0.1:8080/", "http://[::1]/", "http://169.254.169.254/latest/meta-data/",
        "http://10.1.2.3/", "http://[::ffff:127.0.0.1]/", "http://0.0.0.0/", "http://2130706433/",
        "http://0x7f.1/", "http://[fe80::1]/"}) {
    auto decision = decide_url(policy("off"), url);
    EXPECT_FALSE(decision.allowed) << url;
    EXPECT_NE(decision.message.find("OPENAI4S_EGRESS_ALLOW_PRIVATE"), std::string::npos) << url;
  }
}

TEST(DecideUrl, APrivateAddressNeedsBothItsRangeAndItsName) {
  EXPECT_FALSE(decide_url(policy("", "127.0.0.1"), "http://127.0.0.1:9/").allowed);
  EXPECT_FALSE(decide_url(policy("", "", "127.0.0.1"), "http://127.0.0.1:9/").allowed);
  EXPECT_TRUE(decide_url(policy("", "127.0.0.1", "127.0.0.0/8"), "http://127.0.0.1:9/").allowed);
}

TEST(DecideAddress, JudgesWhatANameResolvedTo) {
  auto loopback = decide_address(policy(), "localhost", *parse_ip("127.0.0.1"));
  EXPECT_FALSE(loopback.allowed);
  EXPECT_NE(loopback.message.find("'localhost' resolves to 127.0.0.1, a loopback address"),
            std::string::npos);
  EXPECT_TRUE(decide_address(policy(), "pypi.org", *parse_ip("151.101.0.223")).allowed);
  EXPECT_FALSE(decide_address(policy(), "x", *parse_ip("64:ff9b::a00:1")).allowed);  // NAT64 10/8
  EXPECT_TRUE(decide_address(policy("", "", "::1"), "localhost", *parse_ip("::1")).allowed);
}

TEST(EgressPolicyConfig, AMalformedPrivateRangeIsAnErrorNamingIt) {
  auto made = make_egress_policy("", "", "127.0.0.1, 10.0.0.0/33");
  ASSERT_FALSE(made.ok());
  EXPECT_NE(made.error().message.find("'10.0.0.0/33' is not an IP address or CIDR range"),
            std::string::npos);
}

TEST(NormalizedDomain, ReducesWhatAPersonTypes) {
  EXPECT_EQ(normalized_domain(" https://Example.ORG./path "), "example.org");
  EXPECT_EQ(normalized_domain("*.example.org"), "example.org");
  EXPECT_EQ(normalized_domain("example.org:8443"), "example.org");
  EXPECT_EQ(normalized_domain("[::1]"), "::1");
  EXPECT_EQ(normalized_domain("exa mple"), "");
}

}  // namespace
}  // namespace o4s::host
