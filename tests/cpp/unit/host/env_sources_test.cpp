// host.env's source settings and the one check every URL source passes
// (issue 30 part 2): pure functions, no network (literal addresses only).
#include "host/env_sources.h"

#include <gtest/gtest.h>

#include "host/dispatcher.h"
#include "host/env_r_repos.h"

namespace o4s::host {
namespace {

using Variables = std::map<std::string, std::string>;

TEST(EnvSources, DefaultsAreOfflineWithBudgets) {
  auto sources = env_sources_from({});
  ASSERT_TRUE(sources.ok());
  EXPECT_FALSE(sources->any_url());
  EXPECT_EQ(sources->describe(), "no source configured");
  EXPECT_EQ(sources->timeout_s, 600);
  EXPECT_EQ(sources->max_bytes, std::uint64_t{2} << 30);
  EXPECT_EQ(sources->python, "/usr/bin/python3");
}

TEST(EnvSources, ListsAndBudgetsParse) {
  auto sources = env_sources_from(
      Variables{{"OPENAI4S_ENV_FIND_LINKS", " /srv/wheels , https://example.org/links "},
                {"OPENAI4S_ENV_R_REPOS", "/srv/r"},
                {"OPENAI4S_ENV_TIMEOUT", "30"},
                {"OPENAI4S_ENV_MAX_BYTES", "512M"},
                {"OPENAI4S_ENV_ALLOW_PRIVATE_SOURCES", "yes"}});
  ASSERT_TRUE(sources.ok()) << sources.error().message;
  EXPECT_EQ(sources->find_links,
            (std::vector<std::string>{"/srv/wheels", "https://example.org/links"}));
  EXPECT_TRUE(sources->any_url());
  EXPECT_EQ(sources->r_repos, std::vector<std::string>{"/srv/r"});
  EXPECT_EQ(sources->timeout_s, 30);
  EXPECT_EQ(sources->max_bytes, std::uint64_t{512} << 20);
  EXPECT_TRUE(sources->allow_private);
  EXPECT_EQ(sources->describe(),
            "find-links /srv/wheels, https://example.org/links; r-repos /srv/r");
}

TEST(EnvSources, BadValuesNameTheirVariable) {
  for (const auto& [name, value] : Variables{{"OPENAI4S_ENV_FIND_LINKS", "relative/dir"},
                                             {"OPENAI4S_ENV_R_REPOS", "relative/r"},
                                             {"OPENAI4S_ENV_TIMEOUT", "-1"},
                                             {"OPENAI4S_ENV_MAX_BYTES", "lots"},
                                             {"OPENAI4S_ENV_PYTHON", "python3"}}) {
    auto sources = env_sources_from(Variables{{name, value}});
    ASSERT_FALSE(sources.ok()) << name;
    EXPECT_NE(sources.error().message.find(name), std::string::npos) << sources.error().message;
  }
}

TEST(EnvSources, LoopbackAndPrivateAddressesAreRefusedUnlessAllowed) {
  HostSettings settings;
  settings.egress_mode = "off";  // the private-address rule holds whatever the egress mode
  for (const char* url : {"http://127.0.0.1:8000/simple", "http://10.1.2.3/", "http://[::1]/x",
                          "https://192.168.0.4/s", "http://169.254.169.254/latest",
                          "http://localhost/simple", "http://user@172.16.0.1:80/"}) {
    Status checked = check_source_url(url, settings, false);
    ASSERT_FALSE(checked.ok()) << url;
    EXPECT_NE(checked.error().message.find("loopback or private"), std::string::npos) << url;
    EXPECT_TRUE(check_source_url(url, settings, true).ok()) << url;
  }
}

TEST(EnvSources, OnlyHttpUrlsWithAHost) {
  HostSettings settings;
  EXPECT_FALSE(check_source_url("file:///etc/passwd", settings, true).ok());
  EXPECT_FALSE(check_source_url("ftp://8.8.8.8/x", settings, true).ok());
  EXPECT_FALSE(check_source_url("http:///simple", settings, true).ok());
}

TEST(EnvSources, TheEgressAllowlistAppliesInAllowlistMode) {
  HostSettings settings;
  settings.egress_mode = "allowlist";
  Status blocked = check_source_url("http://127.0.0.1/simple", settings, true);
  ASSERT_FALSE(blocked.ok());
  EXPECT_NE(blocked.error().message.find("egress allowlist"), std::string::npos);
  settings.egress_allow = "127.0.0.1";  // a configured extra, as for web_fetch
  EXPECT_TRUE(check_source_url("http://127.0.0.1/simple", settings, true).ok());
  settings.egress_allow.clear();
  settings.egress_mode = "off";
  EXPECT_TRUE(check_source_url("http://127.0.0.1/simple", settings, true).ok());
}

TEST(EnvSources, AnRRepositoryIsADirectoryOrACranLikeUrl) {
  auto sources =
      env_sources_from(Variables{{"OPENAI4S_ENV_R_REPOS", "/srv/r, https://cloud.r-project.org/"}});
  ASSERT_TRUE(sources.ok()) << sources.error().message;
  EXPECT_EQ(sources->r_repos, (std::vector<std::string>{"/srv/r", "https://cloud.r-project.org/"}));
  EXPECT_FALSE(sources->any_url());  // pip's sources only: R's are fetched by the host
}

std::optional<std::string> version_in(std::string_view index, std::string_view name) {
  auto entry = r_index_entry(index, name);
  return entry ? std::optional<std::string>(entry->version) : std::nullopt;
}

TEST(RIndex, TheNewestVersionOfTheNamedPackage) {
  const std::string index =
      "Package: abc\nVersion: 9.9\n\n"
      "Package: hellor\nVersion: 0.10-1\nDepends: R (>= 3.5),\n    methods\n\n"
      "Package: hellor\r\nVersion: 0.9\r\n\r\n"
      "Package: hellorx\nVersion: 5.0\n";
  EXPECT_EQ(version_in(index, "hellor"), "0.10-1");
  EXPECT_EQ(version_in(index, "abc"), "9.9");
  EXPECT_EQ(version_in(index, "hello"), std::nullopt);
  EXPECT_EQ(version_in("", "hellor"), std::nullopt);
}

TEST(RIndex, DependenciesAreTheNamesOfDependsImportsAndLinkingTo) {
  const std::string index =
      "Package: hellor\nVersion: 1.0\nDepends: R (>= 3.5), methods\n"
      "Imports: helperr (>= 0.1),\n  jsonlite,\n\tother.pkg\nSuggests: testthat\n"
      "LinkingTo: cpp11\n";
  auto entry = r_index_entry(index, "hellor");
  ASSERT_TRUE(entry.has_value());
  EXPECT_EQ(entry->depends,
            (std::vector<std::string>{"methods", "helperr", "jsonlite", "other.pkg", "cpp11"}));
}

TEST(RIndex, AVersionThatIsNotPlainIsIgnored) {
  // It becomes a file name and a URL path: no separators, no traversal.
  EXPECT_EQ(version_in("Package: x\nVersion: ../../etc\n", "x"), std::nullopt);
  EXPECT_EQ(version_in("Package: x\nVersion: 1.0/evil\n", "x"), std::nullopt);
  EXPECT_EQ(version_in("Package: x\n", "x"), std::nullopt);
}

}  // namespace
}  // namespace o4s::host
