// The host-call audit log: preview shapes, digests, redaction, ordering.
#include <chrono>
#include <regex>

#include "base/sha256.h"
#include "base/utf8.h"
#include "store/audit_preview.h"
#include "store_fixture.h"

namespace o4s::store::testing {
namespace {

using audit::args_preview;
using audit::canonical_json;
using audit::result_preview;

TEST(AuditPreviewTest, ArgsAreWrittenAsPythonsJsonDumps) {
  Json args = Json::array({Json{{"path", "a.txt"}, {"n", 1}}, nullptr, true, 2.5});
  EXPECT_EQ(args_preview(args), R"([{"n": 1, "path": "a.txt"}, null, true, 2.5])");
  EXPECT_EQ(args_preview(Json::array()), "[]");
  EXPECT_EQ(args_preview(Json::array({Json::object()})), "[{}]");
}

TEST(AuditPreviewTest, ArgsKeepNonAsciiAndCutValuesNotTheDocument) {
  EXPECT_EQ(args_preview(Json::array({"é ✓"})), "[\"é ✓\"]");
  std::string long_text;
  for (int i = 0; i < 1000; ++i) long_text += "é";
  std::string preview = args_preview(Json::array({long_text}));
  EXPECT_LE(utf8::length(preview), 500u);
  EXPECT_EQ(preview.rfind("[\"éé", 0), 0u);
  // Still a JSON document: the string was cut and marked, not the text.
  Json parsed = Json::parse(preview);
  ASSERT_TRUE(parsed.is_array());
  std::string kept = parsed[0].get<std::string>();
  EXPECT_EQ(kept.substr(kept.size() - 3), "\u2026");
  EXPECT_EQ(kept.rfind("éé", 0), 0u);
}

TEST(AuditPreviewTest, EveryOversizedShapeIsStillValidJson) {
  Json wide = Json::array();
  for (int i = 0; i < 5000; ++i) wide.push_back(Json{{"k" + std::to_string(i), i}});
  Json deep = Json::array();
  for (int i = 0; i < 200; ++i) deep = Json::array({deep, std::string(30, 'd')});
  Json keys = Json::object();
  for (int i = 0; i < 300; ++i) keys[std::string(200, 'a') + std::to_string(i)] = "v";
  for (const Json& args : {wide, deep, keys, Json::array({std::string(10'000, '"')})}) {
    std::string preview = args_preview(args);
    EXPECT_LE(utf8::length(preview), 500u) << preview;
    EXPECT_TRUE(Json::accept(preview)) << preview;
  }
}

TEST(AuditPreviewTest, HugeArgsCostNoMoreThanTheCut) {
  std::string huge(50 * 1024 * 1024, 'x');
  Json args = Json::array({Json{{"content", huge}, {"path", "big.txt"}}});
  auto start = std::chrono::steady_clock::now();
  std::string preview = args_preview(args);
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_LE(preview.size(), 500u);
  EXPECT_EQ(preview.rfind("[{\"content\": \"xxx", 0), 0u);
  Json parsed = Json::parse(preview);
  EXPECT_EQ(parsed[0]["path"], "big.txt");
  EXPECT_LT(elapsed, std::chrono::milliseconds(200));
}

TEST(AuditPreviewTest, InvalidUtf8NeverThrows) {
  Json args = Json::array({std::string("bad \xff\xfe bytes")});
  std::string preview = args_preview(args);
  EXPECT_NE(preview.find("bad"), std::string::npos);
  EXPECT_FALSE(canonical_json(args).empty());
  EXPECT_EQ(result_preview(Json{{std::string("k\xff"), 1}}).rfind("{\"type\":\"object\"", 0), 0u);
}

TEST(AuditPreviewTest, ResultShapes) {
  EXPECT_EQ(result_preview(Json{{"b", 1}, {"a", Json::array()}, {"error", "x"}}),
            R"({"type":"object","keys":["a","b","error"],"size":3,"error":true})");
  EXPECT_EQ(result_preview(Json{{"ok", true}}),
            R"({"type":"object","keys":["ok"],"size":1,"error":false})");
  EXPECT_EQ(result_preview(Json::object()),
            R"({"type":"object","keys":[],"size":0,"error":false})");
  EXPECT_EQ(result_preview(Json::array({1, 2, 3})), R"({"type":"array","size":3})");
  EXPECT_EQ(result_preview("héllo"), R"({"type":"string","length":5})");
  EXPECT_EQ(result_preview(nullptr), R"({"type":"null"})");
  EXPECT_EQ(result_preview(Json()), R"({"type":"null"})");
  EXPECT_EQ(result_preview(42), R"({"type":"int"})");
  EXPECT_EQ(result_preview(-42), R"({"type":"int"})");
  EXPECT_EQ(result_preview(1.5), R"({"type":"float"})");
  EXPECT_EQ(result_preview(false), R"({"type":"bool"})");
}

TEST(AuditPreviewTest, ObjectPreviewsKeepAtMost64KeysOf80Characters) {
  Json result = Json::object();
  for (int i = 0; i < 100; ++i) result["k" + std::to_string(100 + i)] = i;
  result[std::string(200, 'z')] = 0;
  Json shape = Json::parse(result_preview(result));
  ASSERT_EQ(shape["keys"].size(), 64u);
  EXPECT_EQ(shape["keys"][0], "k100");
  EXPECT_EQ(shape["keys"][63], "k163");
  EXPECT_EQ(shape["size"], 101);

  Json long_key{{std::string(200, 'z'), 0}};
  Json long_shape = Json::parse(result_preview(long_key));
  EXPECT_EQ(long_shape["keys"][0], std::string(80, 'z'));
}

TEST(AuditPreviewTest, CanonicalJsonMatchesPythonsSortedCompactDump) {
  Json value{{"b", 1}, {"a", "é"}, {"c", Json::array({true, nullptr, 2.5, "x"})}};
  // json.dumps(value, sort_keys=True, separators=(",", ":")) in Python 3.11.
  EXPECT_EQ(canonical_json(value), R"({"a":"\u00e9","b":1,"c":[true,null,2.5,"x"]})");
  EXPECT_EQ(sha256_hex(canonical_json(value)),
            "d1add93561fd4048736302e339e5013f95915b638351079c3dbafc38649b2368");
}

TEST(AuditPreviewTest, MethodClasses) {
  for (const char* method :
       {"credentials_get", "credentials_issue", "credentials_redeem", "credentials_list"}) {
    EXPECT_TRUE(audit::is_derivable_method(method)) << method;
    EXPECT_FALSE(audit::is_secret_method(method)) << method;
  }
  for (const char* method :
       {"credentials_set", "authorize_bash", "consume_bash_authorization", "record_bash_result"}) {
    EXPECT_TRUE(audit::is_secret_method(method)) << method;
    EXPECT_FALSE(audit::is_derivable_method(method)) << method;
  }
  EXPECT_FALSE(audit::is_secret_method("bash"));
  EXPECT_FALSE(audit::is_derivable_method("read_file"));
}

class AuditLogTest : public StoreTest {
 protected:
  Json only_row(RawDb& raw) {
    EXPECT_EQ(raw.integer("SELECT count(*) FROM host_call_log"), 1);
    Json row;
    for (const char* column :
         {"call_id", "frame_id", "action_group_id", "action_id", "permission_decision_id", "method",
          "args_preview", "result_preview", "result_digest", "side_effect_class", "resource_keys",
          "ok", "created_at", "summary", "decided_by", "outcome"}) {
      auto value = raw.text(std::string("SELECT ") + column + " FROM host_call_log");
      row[column] = value ? Json(*value) : Json();
    }
    return row;
  }
};

TEST_F(AuditLogTest, AnOrdinaryCallGetsPreviewsAndADigest) {
  HostCallRecord call;
  call.method = "read_file";
  call.args = Json::array({Json{{"path", "notes.txt"}}});
  call.result = Json{{"content", "hello"}, {"size", 5}};
  call.frame_id = "f-1";
  call.action_id = "act-9";
  call.permission_decision_id = "perm-abc";
  call.side_effect_class = "read";
  call.resource_keys = {"fs:notes.txt"};
  ASSERT_TRUE(store().log_host_call(call).ok());

  RawDb raw(db_path());
  Json row = only_row(raw);
  EXPECT_TRUE(std::regex_match(row["call_id"].get<std::string>(), std::regex("hc-[0-9a-f]{12}")));
  EXPECT_EQ(row["method"], "read_file");
  EXPECT_EQ(row["frame_id"], "f-1");
  EXPECT_EQ(row["action_id"], "act-9");
  EXPECT_TRUE(row["action_group_id"].is_null());
  EXPECT_EQ(row["permission_decision_id"], "perm-abc");
  EXPECT_EQ(row["args_preview"], R"([{"path": "notes.txt"}])");
  EXPECT_EQ(row["result_preview"],
            R"({"type":"object","keys":["content","size"],"size":2,"error":false})");
  EXPECT_EQ(row["result_digest"], sha256_hex(R"({"content":"hello","size":5})"));
  EXPECT_EQ(row["side_effect_class"], "read");
  EXPECT_EQ(row["resource_keys"], R"(["fs:notes.txt"])");
  EXPECT_EQ(row["ok"], "1");
}

TEST_F(AuditLogTest, TheStoryColumnsAreStoredAsGiven) {
  HostCallRecord call;
  call.method = "authorize_bash";
  call.summary = "API_TOKEN=<redacted> make";
  call.decided_by = "user";
  call.outcome = "denied";
  ASSERT_TRUE(store().log_host_call(call).ok());
  RawDb raw(db_path());
  Json row = only_row(raw);
  // A secret method's previews stay redacted; the summary is the caller's
  // already-redacted one-liner.
  EXPECT_EQ(row["summary"], "API_TOKEN=<redacted> make");
  EXPECT_EQ(row["decided_by"], "user");
  EXPECT_EQ(row["outcome"], "denied");
}

TEST_F(AuditLogTest, DefaultsAndAFailedCall) {
  HostCallRecord call;
  call.method = "glob";
  call.ok = false;
  ASSERT_TRUE(store().log_host_call(call).ok());
  RawDb raw(db_path());
  Json row = only_row(raw);
  EXPECT_EQ(row["ok"], "0");
  EXPECT_EQ(row["resource_keys"], "[]");
  EXPECT_EQ(row["args_preview"], "[]");
  EXPECT_EQ(row["result_preview"], R"({"type":"null"})");
  EXPECT_EQ(row["result_digest"], sha256_hex("null"));
  EXPECT_TRUE(row["frame_id"].is_null());
}

TEST_F(AuditLogTest, SecretBearingMethodsAreRedactedWithoutADigest) {
  for (const char* method :
       {"credentials_set", "authorize_bash", "consume_bash_authorization", "record_bash_result"}) {
    HostCallRecord call;
    call.method = method;
    call.args = Json::array({Json{{"command", "curl -H 'token: sk-SECRET'"}}});
    call.result = Json{{"token", "sk-SECRET"}};
    ASSERT_TRUE(store().log_host_call(call).ok());
  }
  RawDb raw(db_path());
  EXPECT_EQ(raw.integer("SELECT count(*) FROM host_call_log"), 4);
  EXPECT_EQ(raw.integer("SELECT count(*) FROM host_call_log WHERE args_preview = "
                        "'<redacted secret args>' AND result_preview = "
                        "'<redacted secret-bearing result>' AND result_digest IS NULL"),
            4);
  EXPECT_EQ(raw.integer("SELECT count(*) FROM host_call_log WHERE instr(args_preview, 'sk-SECRET') "
                        "OR instr(result_preview, 'sk-SECRET')"),
            0);
}

TEST_F(AuditLogTest, DerivableMethodsAreNotLogged) {
  for (const char* method :
       {"credentials_get", "credentials_issue", "credentials_redeem", "credentials_list"}) {
    HostCallRecord call;
    call.method = method;
    EXPECT_TRUE(store().log_host_call(call).ok()) << method;
  }
  RawDb raw(db_path());
  EXPECT_EQ(raw.integer("SELECT count(*) FROM host_call_log"), 0);
}

TEST_F(AuditLogTest, AnEmptyMethodIsInvalidArgument) {
  HostCallRecord call;
  auto status = store().log_host_call(call);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code, ErrorCode::kInvalidArgument);
}

TEST_F(AuditLogTest, ABatchIsWrittenInOrderSkippingWhatOneRowWouldNot) {
  std::vector<HostCallRecord> batch(5);
  for (std::size_t i = 0; i < batch.size(); ++i) batch[i].method = "m" + std::to_string(i);
  batch[1].method = "";                   // invalid: skipped, not the batch's end
  batch[3].method = "credentials_issue";  // derivable: never logged
  ASSERT_TRUE(store().log_host_calls(batch).ok());
  ASSERT_TRUE(store().log_host_calls({}).ok());
  RawDb raw(db_path());
  EXPECT_EQ(raw.integer("SELECT count(*) FROM host_call_log"), 3);
  EXPECT_EQ(raw.integer("SELECT count(*) FROM host_call_log WHERE method = 'm4' AND created_at > "
                        "(SELECT created_at FROM host_call_log WHERE method = 'm0')"),
            1);
}

TEST_F(AuditLogTest, DigestIsStableForEqualResults) {
  HostCallRecord a;
  a.method = "list_dir";
  a.result = Json::parse(R"({"b": [1, 2], "a": {"y": 1, "x": 2}})");
  HostCallRecord b = a;
  b.result = Json::parse(R"({"a": {"x": 2, "y": 1}, "b": [1, 2]})");
  ASSERT_TRUE(store().log_host_call(a).ok());
  ASSERT_TRUE(store().log_host_call(b).ok());
  RawDb raw(db_path());
  EXPECT_EQ(raw.integer("SELECT count(DISTINCT result_digest) FROM host_call_log"), 1);
}

TEST_F(AuditLogTest, CreatedAtIsStrictlyIncreasingInCallOrder) {
  // Two Stores on one file, as a server and a CLI would be: the order holds
  // across them too.
  auto other = Store::open(db_path());
  ASSERT_TRUE(other.ok());
  RawDb raw(db_path());
  constexpr int kCalls = 40;
  std::int64_t ahead = now_ms() + 3'600'000;
  for (int i = 0; i < kCalls; ++i) {
    std::string method = "m" + std::to_string(i);
    if (i == 1) {
      // A row stamped an hour ahead (a clock that stepped back since): the
      // rows after it must still sort after it, one millisecond apart.
      raw.exec("INSERT INTO host_call_log(call_id, method, ok, created_at) VALUES ('hc-ahead', '" +
               method + "', 1, " + std::to_string(ahead) + ")");
      continue;
    }
    HostCallRecord call;
    call.method = method;
    Store& target = i % 3 == 0 ? *other.value() : store();
    ASSERT_TRUE(target.log_host_call(call).ok());
  }
  EXPECT_EQ(raw.integer("SELECT count(DISTINCT created_at) FROM host_call_log"), kCalls);
  // Rows listed by created_at come back in call order.
  EXPECT_EQ(raw.integer("SELECT count(*) FROM (SELECT method, row_number() OVER "
                        "(ORDER BY created_at) - 1 AS position FROM host_call_log) "
                        "WHERE method != 'm' || position"),
            0);
  EXPECT_EQ(raw.integer("SELECT created_at FROM host_call_log WHERE method = 'm2'"), ahead + 1);
  EXPECT_EQ(raw.integer("SELECT max(created_at) FROM host_call_log"), ahead + kCalls - 2);
  EXPECT_LT(raw.integer("SELECT created_at FROM host_call_log WHERE method = 'm0'"), ahead);
}

}  // namespace
}  // namespace o4s::store::testing
