// Permission resolution (spec host.md §4.2): deny vetoes, then the most
// specific matching rule, else ask; globs behave as Python's fnmatchcase.
#include "host/permission_policy.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "host/permission_gate.h"

namespace o4s::host {
namespace {

using store::PermissionRule;

PermissionRule rule(const std::string& scope, const std::string& tool, const std::string& pattern,
                    const std::string& decision, std::int64_t updated_at = 1) {
  PermissionRule r;
  r.rule_id = "perm_" + scope + tool + pattern;
  r.scope = scope;
  r.scope_id = scope == "global" ? "" : "id";
  r.tool = tool;
  r.pattern = pattern;
  r.decision = decision;
  r.created_at = 1;
  r.updated_at = updated_at;
  return r;
}

Decision resolve(const std::vector<PermissionRule>& rules, const std::string& tool,
                 const std::string& target) {
  return resolve_permission(rules, tool, target);
}

TEST(PermissionPolicyTest, NoRulesOrNoMatchingRuleAsks) {
  EXPECT_EQ(resolve({}, "bash", "ls"), Decision::kAsk);
  EXPECT_EQ(resolve({rule("global", "read_file", "*", "allow")}, "bash", "ls"), Decision::kAsk);
  EXPECT_EQ(resolve({rule("global", "bash", "git *", "allow")}, "bash", "ls"), Decision::kAsk);
}

TEST(PermissionPolicyTest, AnyMatchingDenyVetoesAcrossScopesAndSpecificity) {
  // A general global deny beats a specific conversation allow.
  std::vector<PermissionRule> rules = {
      rule("conversation", "read_file", "secrets/.env", "allow", 9),
      rule("global", "read_file", "*.env", "deny", 1),
  };
  EXPECT_EQ(resolve(rules, "read_file", "secrets/.env"), Decision::kDeny);
  EXPECT_EQ(resolve(rules, "read_file", "notes.txt"), Decision::kAsk);
  // A wildcard-tool deny vetoes a specific tool allow.
  EXPECT_EQ(
      resolve({rule("project", "bash", "rm -rf /", "allow"), rule("global", "*", "*", "deny")},
              "bash", "rm -rf /"),
      Decision::kDeny);
  // A deny that does not match the target has no say.
  EXPECT_EQ(resolve({rule("global", "read_file", "*.env", "deny"),
                     rule("global", "read_file", "*", "allow")},
                    "read_file", "data.csv"),
            Decision::kAllow);
}

TEST(PermissionPolicyTest, ASpecificToolBeatsTheWildcardTool) {
  std::vector<PermissionRule> rules = {
      rule("conversation", "*", "ls", "allow", 5),
      rule("global", "bash", "*", "ask", 1),
  };
  EXPECT_EQ(resolve(rules, "bash", "ls"), Decision::kAsk);
  // An empty tool is a wildcard too.
  EXPECT_EQ(resolve({rule("conversation", "", "ls", "allow"), rule("global", "bash", "*", "ask")},
                    "bash", "ls"),
            Decision::kAsk);
  EXPECT_EQ(resolve({rule("global", "*", "*", "allow")}, "anything", "x"), Decision::kAllow);
}

TEST(PermissionPolicyTest, ASpecificPatternBeatsTheWildcardThenTheLongerPatternWins) {
  EXPECT_EQ(resolve({rule("conversation", "bash", "*", "ask", 9),
                     rule("global", "bash", "ls*", "allow", 1)},
                    "bash", "ls -la"),
            Decision::kAllow);
  EXPECT_EQ(resolve({rule("global", "bash", "git *", "ask", 9),
                     rule("global", "bash", "git status*", "allow", 1)},
                    "bash", "git status -s"),
            Decision::kAllow);
  EXPECT_EQ(resolve({rule("global", "bash", "git *", "ask", 9),
                     rule("global", "bash", "git status*", "allow", 1)},
                    "bash", "git push"),
            Decision::kAsk);
  // An empty pattern is a wildcard, not a zero-length specific one.
  EXPECT_EQ(resolve({rule("global", "bash", "", "allow", 9), rule("global", "bash", "l?", "ask")},
                    "bash", "ls"),
            Decision::kAsk);
}

TEST(PermissionPolicyTest, TheNarrowerScopeWinsAnEqualPattern) {
  std::vector<PermissionRule> rules = {
      rule("global", "bash", "*", "allow", 9),
      rule("project", "bash", "*", "ask", 5),
      rule("conversation", "bash", "*", "allow", 1),
  };
  EXPECT_EQ(resolve(rules, "bash", "ls"), Decision::kAllow);
  rules.pop_back();
  EXPECT_EQ(resolve(rules, "bash", "ls"), Decision::kAsk);
}

TEST(PermissionPolicyTest, TheNewerRuleWinsATieThenTheFirstListed) {
  std::vector<PermissionRule> rules = {
      rule("global", "bash", "a*", "allow", 1),
      rule("global", "bash", "*b", "ask", 2),
  };
  EXPECT_EQ(resolve(rules, "bash", "ab"), Decision::kAsk);
  rules[0].updated_at = 3;
  EXPECT_EQ(resolve(rules, "bash", "ab"), Decision::kAllow);
  rules[0].updated_at = 2;
  EXPECT_EQ(resolve(rules, "bash", "ab"), Decision::kAllow);
}

TEST(PermissionPolicyTest, PatternLengthCountsCharactersNotBytes) {
  // "é*" is 2 characters (3 bytes), "ab*" is 3: the latter is longer.
  EXPECT_EQ(resolve({rule("global", "t", "ab*", "allow", 1), rule("global", "t", "?b*", "ask", 1)},
                    "t", "abc"),
            Decision::kAllow);
  EXPECT_EQ(resolve({rule("global", "t", "é*", "allow", 9), rule("global", "t", "?b*", "ask", 1)},
                    "t", "ébc"),
            Decision::kAsk);
}

TEST(PermissionPolicyTest, ToolsMatchAsGlobsToo) {
  EXPECT_EQ(resolve({rule("global", "mcp_*", "*", "allow")}, "mcp_call", "x/y"), Decision::kAllow);
  EXPECT_EQ(resolve({rule("global", "mcp_*", "*", "allow")}, "bash", "x"), Decision::kAsk);
}

TEST(PermissionPolicyTest, AnUnknownDecisionWordAsks) {
  EXPECT_EQ(resolve({rule("global", "bash", "*", "sure")}, "bash", "ls"), Decision::kAsk);
}

TEST(PermissionPolicyTest, DecisionNames) {
  EXPECT_EQ(decision_name(Decision::kAllow), "allow");
  EXPECT_EQ(decision_name(Decision::kAsk), "ask");
  EXPECT_EQ(decision_name(Decision::kDeny), "deny");
}

struct GlobCase {
  const char* pattern;
  const char* target;
  bool matches;
};

// Expected values are what Python 3.11's fnmatch.fnmatchcase returns, after
// the spec's shortcuts (an empty pattern or "*" matches all, equality matches).
TEST(PatternMatchesTest, AgreesWithFnmatchcase) {
  const GlobCase cases[] = {
      {"", "anything", true},
      {"*", "", true},
      {"*", "a/b/c", true},
      {"abc", "abc", true},
      {"abc", "abd", false},
      {"*.env", ".env", true},
      {"*.env", "dir/x.env", true},
      {"*.env", "x.ENV", false},
      {"*.ENV", "x.env", false},
      {"*.env", "x.env.bak", false},
      {"a*b*c", "aXXbYYc", true},
      {"a*b*c", "aXXbYY", false},
      {"a**c", "abc", true},
      {"*a", "aaaa", true},
      {"?", "é", true},
      {"??", "é", false},
      {"a?c", "abc", true},
      {"a?c", "ac", false},
      {"[abc]", "b", true},
      {"[abc]", "d", false},
      {"[a-c]x", "bx", true},
      {"[!a-c]x", "bx", false},
      {"[!a-c]x", "dx", true},
      {"[]]", "]", true},
      {"[]a]", "a", true},
      {"[!]]", "]", false},
      {"[!]]", "a", true},
      {"[a-]", "-", true},
      {"[-a]", "-", true},
      {"[z-a]", "m", false},
      {"[z-a]", "z", false},
      {"[!z-a]", "m", true},
      {"[a-c-e]", "-", true},
      {"[a-c-e]", "d", false},
      {"[a-c-e]", "e", true},
      {"[", "[", true},
      {"[abc", "[abc", true},
      {"[abc", "a", false},
      {"[!]", "[!]", true},
      {"[]", "[]", true},
      {"a\\*", "a\\b", true},
      {"a\\*", "a*", false},
      {"[\\]", "\\", true},
      {"[^a]", "^", true},
      {"[^a]", "b", false},
      {"*[0-9]", "file7", true},
      {"*[0-9]", "file", false},
      {"line*", "line1\nline2", true},
      {"git status*", "git status -s", true},
      {"volcengine-datapro/dataPro_search", "volcengine-datapro/dataPro_search", true},
      {"[é]", "é", true},
      {"[a-é]", "b", true},
  };
  for (const GlobCase& c : cases) {
    EXPECT_EQ(pattern_matches(c.pattern, c.target), c.matches)
        << "pattern '" << c.pattern << "' target '" << c.target << "'";
  }
}

TEST(PatternMatchesTest, ExactEqualityMatchesEvenWhenTheGlobWouldNot) {
  // As a glob "[x" is a literal "[x" anyway, but "a[b]" would need "ab".
  EXPECT_TRUE(pattern_matches("a[b]", "a[b]"));
  EXPECT_TRUE(pattern_matches("a[b]", "ab"));
}

TEST(PatternMatchesTest, InvalidUtf8MatchesOnlyItself) {
  EXPECT_TRUE(pattern_matches("?", std::string("\xff")));
  EXPECT_FALSE(pattern_matches("?", std::string("\xff\xfe")));
  EXPECT_TRUE(pattern_matches(std::string("a\xff*"), std::string("a\xff"
                                                                 "b")));
  EXPECT_FALSE(pattern_matches(std::string("a\xff*"), std::string("a\xfe"
                                                                  "b")));
}

TEST(PatternMatchesTest, PathologicalPatternsStayFast) {
  std::string target(20000, 'a');
  std::string pattern;
  for (int i = 0; i < 200; ++i) pattern += "*a";
  pattern += "b";
  EXPECT_FALSE(pattern_matches(pattern, target));
}

}  // namespace
}  // namespace o4s::host

namespace o4s::host {
namespace {

// An "always this session" answer stores the target as a pattern; a target
// holding glob characters must allow itself and nothing broader.
TEST(ExactPatternTest, MatchesOnlyTheTargetItself) {
  for (std::string target : {"ls *.csv", "rm file?.txt", "cat [ab].log", "echo plain"}) {
    EXPECT_TRUE(pattern_matches(exact_pattern(target), target)) << target;
  }
  EXPECT_FALSE(pattern_matches(exact_pattern("ls *.csv"), "ls secrets.csv"));
  EXPECT_FALSE(pattern_matches(exact_pattern("rm file?.txt"), "rm fileX.txt"));
  EXPECT_FALSE(pattern_matches(exact_pattern("cat [ab].log"), "cat a.log"));
  EXPECT_EQ(exact_pattern("a*b"), "a[*]b");
}

}  // namespace
}  // namespace o4s::host
