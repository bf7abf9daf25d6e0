// Permission rules: upsert, validation, selection by scope, default seeding.
#include <map>
#include <regex>
#include <set>

#include "host/host_methods.h"
#include "store_fixture.h"

namespace o4s::store::testing {
namespace {

class PermissionRulesTest : public StoreTest {
 protected:
  // (tool, pattern) -> rule of the global scope.
  std::map<std::pair<std::string, std::string>, PermissionRule> global_rules() {
    auto rules = store().rules_for(std::nullopt, std::nullopt);
    EXPECT_TRUE(rules.ok());
    std::map<std::pair<std::string, std::string>, PermissionRule> by_key;
    if (!rules.ok()) return by_key;
    for (const PermissionRule& rule : rules.value()) by_key[{rule.tool, rule.pattern}] = rule;
    return by_key;
  }

  std::string decision_of(const std::string& tool, const std::string& pattern) {
    auto rules = global_rules();
    auto it = rules.find({tool, pattern});
    return it == rules.end() ? "<none>" : it->second.decision;
  }
};

TEST_F(PermissionRulesTest, SetReturnsAPermIdAndUpsertKeepsIt) {
  auto first = store().set_permission_rule("conversation", "f-1", "bash", "*", "allow");
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_TRUE(std::regex_match(first.value(), std::regex("perm_[0-9a-f]{12}"))) << first.value();
  auto before = store().rules_for(std::string("f-1"), std::nullopt);
  ASSERT_TRUE(before.ok());
  ASSERT_EQ(before->size(), 1u);

  tick();
  auto second = store().set_permission_rule("conversation", "f-1", "bash", "*", "deny");
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second.value(), first.value());
  auto after = store().rules_for(std::string("f-1"), std::nullopt);
  ASSERT_TRUE(after.ok());
  ASSERT_EQ(after->size(), 1u);
  EXPECT_EQ(after->front().decision, "deny");
  EXPECT_EQ(after->front().created_at, before->front().created_at);
  EXPECT_GT(after->front().updated_at, before->front().updated_at);
}

TEST_F(PermissionRulesTest, AnEmptyPatternIsStoredAsStar) {
  auto a = store().set_permission_rule("global", "", "glob", "", "allow");
  auto b = store().set_permission_rule("global", "", "glob", "*", "ask");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a.value(), b.value());
  EXPECT_EQ(decision_of("glob", "*"), "ask");
}

TEST_F(PermissionRulesTest, BadScopeDecisionOrScopeIdIsInvalidArgument) {
  struct Case {
    const char* scope;
    const char* scope_id;
    const char* tool;
    const char* decision;
  };
  for (const Case& c :
       {Case{"Global", "", "bash", "allow"}, Case{"session", "f-1", "bash", "allow"},
        Case{"global", "", "bash", "yes"}, Case{"global", "", "bash", "ALLOW"},
        Case{"global", "", "bash", ""}, Case{"global", "x", "bash", "allow"},
        Case{"project", "", "bash", "allow"}, Case{"conversation", "", "bash", "deny"},
        Case{"global", "", "", "allow"}}) {
    auto id = store().set_permission_rule(c.scope, c.scope_id, c.tool, "*", c.decision);
    ASSERT_FALSE(id.ok()) << c.scope << "/" << c.scope_id << "/" << c.decision;
    EXPECT_EQ(id.error().code, ErrorCode::kInvalidArgument);
  }
  RawDb raw(db_path());
  EXPECT_EQ(raw.integer("SELECT count(*) FROM permission_rules"), 0);
}

TEST_F(PermissionRulesTest, TheSchemaRefusesABadDecisionFromAnotherWriter) {
  char* message = nullptr;
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_path().c_str(), &db), SQLITE_OK);
  int rc = sqlite3_exec(db,
                        "INSERT INTO permission_rules VALUES ('perm_x', 'global', '', 'bash', '*', "
                        "'maybe', 1, 1)",
                        nullptr, nullptr, &message);
  EXPECT_EQ(rc & 0xFF, SQLITE_CONSTRAINT);
  sqlite3_free(message);
  sqlite3_close(db);
}

TEST_F(PermissionRulesTest, DeleteRemovesTheRuleAndAnUnknownIdIsAnError) {
  auto id = store().set_permission_rule("project", "p", "glob", "*", "allow");
  ASSERT_TRUE(id.ok());
  EXPECT_TRUE(store().delete_permission_rule(id.value()).ok());
  auto rules = store().rules_for(std::nullopt, std::string("p"));
  ASSERT_TRUE(rules.ok());
  EXPECT_TRUE(rules->empty());
  auto again = store().delete_permission_rule(id.value());
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().code, ErrorCode::kInvalidArgument);
}

TEST_F(PermissionRulesTest, RulesForSelectsGlobalPlusThisProjectAndConversation) {
  ASSERT_TRUE(store().set_permission_rule("global", "", "g", "*", "allow").ok());
  ASSERT_TRUE(store().set_permission_rule("project", "p1", "p1", "*", "allow").ok());
  ASSERT_TRUE(store().set_permission_rule("project", "p2", "p2", "*", "allow").ok());
  ASSERT_TRUE(store().set_permission_rule("conversation", "f-1", "c1", "*", "allow").ok());
  ASSERT_TRUE(store().set_permission_rule("conversation", "f-2", "c2", "*", "allow").ok());

  auto tools = [&](std::optional<std::string> root, std::optional<std::string> project) {
    auto rules = store().rules_for(root, project);
    EXPECT_TRUE(rules.ok());
    std::set<std::string> names;
    if (rules.ok()) {
      for (const auto& rule : rules.value()) names.insert(rule.tool);
    }
    return names;
  };
  EXPECT_EQ(tools(std::string("f-1"), std::string("p1")), (std::set<std::string>{"g", "p1", "c1"}));
  EXPECT_EQ(tools(std::string("f-2"), std::string("p2")), (std::set<std::string>{"g", "p2", "c2"}));
  EXPECT_EQ(tools(std::nullopt, std::string("p1")), (std::set<std::string>{"g", "p1"}));
  EXPECT_EQ(tools(std::nullopt, std::nullopt), (std::set<std::string>{"g"}));
}

TEST_F(PermissionRulesTest, SeedingWritesTheVersion4TableAndItsMarkers) {
  ASSERT_TRUE(store().seed_default_permission_rules(host::default_rules()).ok());
  auto rules = global_rules();
  EXPECT_EQ(rules.size(), 22u);
  EXPECT_EQ(decision_of("read_file", "*.env"), "deny");
  EXPECT_EQ(decision_of("read_file", "*"), "allow");
  EXPECT_EQ(decision_of("science_search", "*"), "allow");
  EXPECT_EQ(decision_of("skills_edit", "*"), "ask");
  EXPECT_EQ(decision_of("mcp_call", "volcengine-datapro/dataPro_search"), "allow");
  EXPECT_EQ(decision_of("mcp_call", "*"), "ask");
  EXPECT_EQ(decision_of("credentials_set", "*"), "ask");
  // No default for the shell: it resolves to ask.
  EXPECT_EQ(decision_of("bash", "*"), "<none>");
  EXPECT_EQ(store().get_setting("perm_seeded").value(), std::optional<std::string>("1"));
  EXPECT_EQ(store().get_setting("perm_seed_version").value(), std::optional<std::string>("4"));
}

TEST_F(PermissionRulesTest, SeedingTwiceChangesNothing) {
  ASSERT_TRUE(store().seed_default_permission_rules(host::default_rules()).ok());
  auto first = global_rules();
  tick();
  ASSERT_TRUE(store().seed_default_permission_rules(host::default_rules()).ok());
  auto second = global_rules();
  ASSERT_EQ(first.size(), second.size());
  for (const auto& [key, rule] : first) {
    EXPECT_EQ(second[key].rule_id, rule.rule_id);
    EXPECT_EQ(second[key].updated_at, rule.updated_at);
  }
}

TEST_F(PermissionRulesTest, SeedingLeavesUserRulesAlone) {
  auto mine = store().set_permission_rule("global", "", "read_file", "*", "deny");
  ASSERT_TRUE(mine.ok());
  ASSERT_TRUE(store().set_permission_rule("conversation", "f-1", "bash", "*", "allow").ok());
  ASSERT_TRUE(store().seed_default_permission_rules(host::default_rules()).ok());
  auto rules = global_rules();
  EXPECT_EQ((rules[{"read_file", "*"}].rule_id), mine.value());
  EXPECT_EQ((rules[{"read_file", "*"}].decision), "deny");
  auto conversation = store().rules_for(std::string("f-1"), std::nullopt);
  ASSERT_TRUE(conversation.ok());
  EXPECT_EQ(conversation->size(), 23u);

  // After seeding, a user's later change survives another seeding too.
  ASSERT_TRUE(store().set_permission_rule("global", "", "skills_edit", "*", "allow").ok());
  ASSERT_TRUE(store().seed_default_permission_rules(host::default_rules()).ok());
  EXPECT_EQ(decision_of("skills_edit", "*"), "allow");
}

TEST_F(PermissionRulesTest, ForcedReseedRestoresDefaultsButKeepsIds) {
  ASSERT_TRUE(store().seed_default_permission_rules(host::default_rules()).ok());
  auto id = store().set_permission_rule("global", "", "write_file", "*", "deny");
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE(store().set_permission_rule("global", "", "extra_tool", "*", "allow").ok());
  ASSERT_TRUE(store().seed_default_permission_rules(host::default_rules(), true).ok());
  auto rules = global_rules();
  EXPECT_EQ((rules[{"write_file", "*"}].decision), "allow");
  EXPECT_EQ((rules[{"write_file", "*"}].rule_id), id.value());
  EXPECT_EQ(decision_of("extra_tool", "*"), "allow");
}

TEST_F(PermissionRulesTest, UpgradingFromVersion1AddsOnlyLaterRulesAndMigratesSkillsEdit) {
  // A store seeded by version 1 (no version marker), where the user later
  // deleted web_search and the legacy skills_edit default is still allow.
  ASSERT_TRUE(store().set_permission_rule("global", "", "read_file", "*", "allow").ok());
  ASSERT_TRUE(store().set_permission_rule("global", "", "skills_edit", "*", "allow").ok());
  ASSERT_TRUE(store().set_setting("perm_seeded", "1").ok());
  ASSERT_TRUE(store().seed_default_permission_rules(host::default_rules()).ok());
  EXPECT_EQ(decision_of("science_search", "*"), "allow");
  EXPECT_EQ(decision_of("mcp_call", "volcengine-datapro/dataPro_search"), "allow");
  EXPECT_EQ(decision_of("skills_edit", "*"), "ask");
  EXPECT_EQ(decision_of("web_search", "*"), "<none>");
  EXPECT_EQ(global_rules().size(), 4u);
  EXPECT_EQ(store().get_setting("perm_seed_version").value(), std::optional<std::string>("4"));
}

TEST_F(PermissionRulesTest, UpgradingFromVersion3OnlyMigratesSkillsEdit) {
  ASSERT_TRUE(store().set_permission_rule("global", "", "skills_edit", "*", "allow").ok());
  ASSERT_TRUE(store().set_setting("perm_seeded", "1").ok());
  ASSERT_TRUE(store().set_setting("perm_seed_version", "3").ok());
  ASSERT_TRUE(store().seed_default_permission_rules(host::default_rules()).ok());
  EXPECT_EQ(decision_of("skills_edit", "*"), "ask");
  EXPECT_EQ(global_rules().size(), 1u);
}

TEST_F(PermissionRulesTest, ANewerSeedVersionIsLeftAlone) {
  ASSERT_TRUE(store().set_setting("perm_seeded", "1").ok());
  ASSERT_TRUE(store().set_setting("perm_seed_version", "7").ok());
  ASSERT_TRUE(store().seed_default_permission_rules(host::default_rules()).ok());
  EXPECT_TRUE(global_rules().empty());
  ASSERT_TRUE(store().seed_default_permission_rules(host::default_rules(), true).ok());
  EXPECT_EQ(global_rules().size(), 22u);
  EXPECT_EQ(store().get_setting("perm_seed_version").value(), std::optional<std::string>("7"));
}

}  // namespace
}  // namespace o4s::store::testing
