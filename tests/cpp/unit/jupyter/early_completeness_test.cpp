#include "jupyter/early_completeness.h"

#include <gtest/gtest.h>

namespace o4s::jupyter {
namespace {

std::string status(std::string_view code) {
  return early_r_is_complete(code)["status"].get<std::string>();
}

TEST(EarlyIsCompleteTest, RFollowsBracketsStringsAndTrailingOperators) {
  EXPECT_EQ(status("1 + 1"), "complete");
  EXPECT_EQ(status("for (i in 1:3) {"), "incomplete");
  EXPECT_EQ(status("for (i in 1:3) {\n  print(i)\n}"), "complete");
  EXPECT_EQ(status("x <- 1 +"), "incomplete");
  EXPECT_EQ(status("x %>%"), "incomplete");
  EXPECT_EQ(status("df$"), "incomplete");
  EXPECT_EQ(status("if (a) b else"), "incomplete");
  EXPECT_EQ(status("x <- 'it''"), "incomplete");
  EXPECT_EQ(status("x <- \"a\nb\""), "complete");  // R strings span lines
  EXPECT_EQ(status("`odd name(` <- 1"), "complete");
  EXPECT_EQ(status("x <- 1 # +"), "complete");
  EXPECT_EQ(status("f(1))"), "invalid");
}

}  // namespace
}  // namespace o4s::jupyter
