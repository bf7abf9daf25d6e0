#include "jupyter/early_completeness.h"

#include <gtest/gtest.h>

namespace o4s::jupyter {
namespace {

std::string status(std::string_view code, bool r) {
  return early_is_complete(code, r)["status"].get<std::string>();
}

TEST(EarlyIsCompleteTest, PythonFollowsBracketsStringsAndBlocks) {
  EXPECT_EQ(status("x = 1", false), "complete");
  EXPECT_EQ(status("x = (1,", false), "incomplete");
  EXPECT_EQ(status("s = '''a\nb", false), "incomplete");
  EXPECT_EQ(status("s = '''a\nb'''", false), "complete");
  EXPECT_EQ(status("x = ')' + '('", false), "complete");
  EXPECT_EQ(status("x = 1  # (", false), "complete");
  EXPECT_EQ(status("x = 1 + \\", false), "incomplete");
  EXPECT_EQ(status("1 + 2)", false), "invalid");
  EXPECT_EQ(status("(1 + 2]", false), "invalid");
  auto header = early_is_complete("for i in range(3):", false);
  EXPECT_EQ(header, (nlohmann::json{{"status", "incomplete"}, {"indent", "    "}}));
  auto body = early_is_complete("for i in range(3):\n    print(i)", false);
  EXPECT_EQ(body, (nlohmann::json{{"status", "incomplete"}, {"indent", "    "}}));
  EXPECT_EQ(status("for i in range(3):\n    print(i)\n", false), "complete");
}

TEST(EarlyIsCompleteTest, RFollowsBracketsStringsAndTrailingOperators) {
  EXPECT_EQ(status("1 + 1", true), "complete");
  EXPECT_EQ(status("for (i in 1:3) {", true), "incomplete");
  EXPECT_EQ(status("for (i in 1:3) {\n  print(i)\n}", true), "complete");
  EXPECT_EQ(status("x <- 1 +", true), "incomplete");
  EXPECT_EQ(status("x %>%", true), "incomplete");
  EXPECT_EQ(status("df$", true), "incomplete");
  EXPECT_EQ(status("if (a) b else", true), "incomplete");
  EXPECT_EQ(status("x <- 'it''", true), "incomplete");
  EXPECT_EQ(status("x <- \"a\nb\"", true), "complete");  // R strings span lines
  EXPECT_EQ(status("`odd name(` <- 1", true), "complete");
  EXPECT_EQ(status("x <- 1 # +", true), "complete");
  EXPECT_EQ(status("f(1))", true), "invalid");
}

}  // namespace
}  // namespace o4s::jupyter
