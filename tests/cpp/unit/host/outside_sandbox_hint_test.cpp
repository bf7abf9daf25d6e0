#include "host/outside_sandbox_hint.h"

#include <gtest/gtest.h>

#include <fstream>

#include "support/temp_dir.h"

namespace o4s::host {
namespace {

using o4s::testing::TempDir;

std::string python_error(const std::string& literal) {
  return "Traceback (most recent call last):\n  File \"<kernel:1>\", line 1, in <module>\n"
         "FileNotFoundError: [Errno 2] No such file or directory: " +
         literal + "\n";
}

TEST(MissingPathTest, ReadsThePythonLiteralOfTheLastLine) {
  EXPECT_EQ(missing_path_in(python_error("'data/x.csv'")), "data/x.csv");
  EXPECT_EQ(missing_path_in(python_error("\"it's.csv\"")), "it's.csv");
  EXPECT_EQ(missing_path_in(python_error("'a\\\\b\\'c'")), "a\\b'c");
  EXPECT_EQ(missing_path_in(python_error("'caf\\xe9'")), "caf\xc3\xa9");
}

TEST(MissingPathTest, ReadsRsOpenWarning) {
  std::string r =
      "Warning message:\nIn file(file, \"rt\") :\n  cannot open file 'obs.csv': "
      "No such file or directory\nError in file(file, \"rt\") : cannot open the "
      "connection\n";
  EXPECT_EQ(missing_path_in(r), "obs.csv");
}

TEST(MissingPathTest, AnythingElseIsNoPath) {
  EXPECT_EQ(missing_path_in(""), std::nullopt);
  EXPECT_EQ(missing_path_in("ValueError: bad"), std::nullopt);
  // Not the last line: the error the cell ended with is another.
  EXPECT_EQ(missing_path_in(python_error("'x'") + "KeyError: 'y'\n"), std::nullopt);
  // Unterminated, trailing text, unknown escapes and surrogates are not guessed at.
  EXPECT_EQ(missing_path_in(python_error("'x")), std::nullopt);
  EXPECT_EQ(missing_path_in(python_error("'x' and more")), std::nullopt);
  EXPECT_EQ(missing_path_in(python_error("'\\q'")), std::nullopt);
  EXPECT_EQ(missing_path_in(python_error("'\\ud800'")), std::nullopt);
}

TEST(OutsideSandboxHintTest, NamesAPathThatExistsOnTheHost) {
  TempDir dir;
  std::ofstream(dir.file("here.csv")) << "1\n";
  auto hint = outside_sandbox_hint(python_error("'here.csv'"), dir.path());
  ASSERT_TRUE(hint.has_value());
  EXPECT_EQ(hint->rfind("hint: here.csv exists on this machine but is outside the sandbox", 0), 0u)
      << *hint;
  EXPECT_NE(hint->find("OPENAI4S_KERNEL_SANDBOX_READ_PATHS"), std::string::npos);
  EXPECT_EQ(hint->back(), '\n');
  EXPECT_EQ(std::count(hint->begin(), hint->end(), '\n'), 1);
  // An absolute path is taken as it is.
  EXPECT_TRUE(outside_sandbox_hint(python_error("'" + dir.file("here.csv") + "'"), "/nonexistent"));
}

TEST(OutsideSandboxHintTest, SaysNothingForAPathMissingOnTheHostToo) {
  TempDir dir;
  EXPECT_EQ(outside_sandbox_hint(python_error("'absent.csv'"), dir.path()), std::nullopt);
  EXPECT_EQ(outside_sandbox_hint("NameError: x", dir.path()), std::nullopt);
}

TEST(OutsideSandboxHintTest, ACellCannotDrawOnTheTerminalThroughIt) {
  TempDir dir;
  const std::string name = "a\x1b[2Jb";
  std::ofstream(dir.file(name)) << "1\n";
  auto hint = outside_sandbox_hint(python_error("'a\\x1b[2Jb'"), dir.path());
  ASSERT_TRUE(hint.has_value());
  EXPECT_EQ(hint->find('\x1b'), std::string::npos) << *hint;
  EXPECT_EQ(std::count(hint->begin(), hint->end(), '\n'), 1);
}

}  // namespace
}  // namespace o4s::host
