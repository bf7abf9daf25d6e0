// The worker's error text split into Jupyter's ename / evalue / traceback.
#include "jupyter/error_parts.h"

#include <gtest/gtest.h>

namespace o4s::jupyter {
namespace {

TEST(ErrorPartsTest, ATracebackEndsWithTheExceptionLine) {
  auto parts = split_error(
      "Traceback (most recent call last):\n  File \"<cell>\", line 3, in <module>\n"
      "ValueError: boom: twice\n",
      false);
  EXPECT_EQ(parts.ename, "ValueError");
  EXPECT_EQ(parts.evalue, "boom: twice");
  ASSERT_EQ(parts.traceback.size(), 3U);
  EXPECT_EQ(parts.traceback[0], "Traceback (most recent call last):");
}

TEST(ErrorPartsTest, DottedNamesAndNoValue) {
  auto parts = split_error("Traceback ...\njson.decoder.JSONDecodeError: x\n", false);
  EXPECT_EQ(parts.ename, "JSONDecodeError");  // the class name, as ipykernel says it
  parts = split_error("Traceback ...\nStopIteration\n", false);
  EXPECT_EQ(parts.ename, "StopIteration");
  EXPECT_EQ(parts.evalue, "");
}

TEST(ErrorPartsTest, ASyntaxErrorSkipsItsCaretLines) {
  auto parts = split_error(
      "  File \"<cell>\", line 1\n    1 +* 2\n        ^\nSyntaxError: invalid syntax\n", false);
  EXPECT_EQ(parts.ename, "SyntaxError");
  EXPECT_EQ(parts.evalue, "invalid syntax");
}

TEST(ErrorPartsTest, TrappedExitsAndInterrupts) {
  auto parts = split_error("SystemExit trapped (worker kept alive): 3", false);
  EXPECT_EQ(parts.ename, "SystemExit");
  EXPECT_EQ(parts.evalue, "SystemExit trapped (worker kept alive): 3");
  parts = split_error("Interrupted", true);
  EXPECT_EQ(parts.ename, "KeyboardInterrupt");
  parts = split_error("", false);
  EXPECT_EQ(parts.ename, "Error");
  EXPECT_EQ(parts.traceback.size(), 1U);
}

}  // namespace
}  // namespace o4s::jupyter
