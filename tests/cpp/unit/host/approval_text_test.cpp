// What an approval prompt shows of its target (issue 27, point 2): every
// front door renders through this one function, so these are the promises.
#include "host/approval_text.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/sha256.h"

namespace o4s::host {
namespace {

bool has_raw_control(const std::string& text) {
  for (const char raw : text) {
    const auto c = static_cast<unsigned char>(raw);
    if ((c < 0x20 && c != '\n') || c == 0x7F) return true;
  }
  // C1 and the reordering code points in UTF-8.
  for (const char* bad : {"\xC2\x9B", "\xC2\x85", "\xE2\x80\xAE", "\xE2\x81\xA6", "\xE2\x80\x8F",
                          "\xD8\x9C", "\xE2\x80\xA8"}) {
    if (text.find(bad) != std::string::npos) return true;
  }
  return false;
}

TEST(EscapeForDisplay, EscapesControlsAndReorderingButKeepsPrintableText) {
  EXPECT_EQ(escape_for_display("ls -la caf\xC3\xA9 \\n"), "ls -la caf\xC3\xA9 \\n");
  EXPECT_EQ(escape_for_display("a\rb\x1b[2Kc\td\x7f"), "a\\rb\\x1b[2Kc\\td\\x7f");
  EXPECT_EQ(escape_for_display("x\xC2\x9B"
                               "31m"),
            "x\\u009b31m");
  EXPECT_EQ(escape_for_display("\xE2\x80\xAE"
                               "gpj.exe"),
            "\\u202egpj.exe");
  EXPECT_EQ(escape_for_display("\xE2\x81\xA6\xE2\x81\xA9\xE2\x80\x8E\xE2\x80\x8F\xD8\x9C"),
            "\\u2066\\u2069\\u200e\\u200f\\u061c");
  // Bytes that are not UTF-8 (a lone C1 byte, an overlong ESC) stay bytes.
  EXPECT_EQ(escape_for_display("\x9B\xC0\x9B"), "\\x9b\\xc0\\x9b");
}

TEST(RenderApproval, AShortTargetIsShownWholeBehindAGutterWithAlwaysOffered) {
  ApprovalText text = render_approval("bash", "echo one\necho two\r\x1b[1A");
  EXPECT_TRUE(text.whole);
  EXPECT_TRUE(text.always_offered);
  EXPECT_EQ(text.target_block, "    | echo one\n    | echo two\\r\\x1b[1A\n");
  EXPECT_NE(text.prompt.find("[a]lways"), std::string::npos);
  EXPECT_FALSE(has_raw_control(text.prompt));
}

TEST(RenderApproval, ALongTargetIsCutVisiblyWithItsLengthAndDigestAndOnlyOnce) {
  const std::string target = "echo " + std::string(5000, 'x');
  ApprovalText text = render_approval("bash", target);
  EXPECT_FALSE(text.whole);
  EXPECT_FALSE(text.always_offered);
  EXPECT_EQ(text.length, target.size());
  EXPECT_EQ(text.sha256, sha256_hex(target));
  EXPECT_NE(text.target_block.find("[cut: 4000 of 5005 bytes shown; sha256 " + text.sha256 + "]"),
            std::string::npos);
  EXPECT_EQ(text.prompt.find("[a]lways"), std::string::npos);
}

TEST(RenderApproval, TooManyLinesIsACutToo) {
  std::string target;
  for (int i = 0; i < 100; ++i) target += "echo " + std::to_string(i) + "\n";
  ApprovalText text = render_approval("exec_background", target);
  EXPECT_FALSE(text.whole);
  EXPECT_FALSE(text.always_offered);
  EXPECT_EQ(text.target_block.find("echo 40"), std::string::npos);
  EXPECT_NE(text.target_block.find("echo 39"), std::string::npos);
}

TEST(RenderApproval, ARedactedTargetIsNeverOfferedForAlways) {
  ApprovalText text = render_approval("bash", "API_TOKEN=<redacted> make", false);
  EXPECT_TRUE(text.whole);
  EXPECT_FALSE(text.always_offered);
  EXPECT_EQ(text.prompt.find("[a]lways"), std::string::npos);
}

TEST(RenderApproval, AReasonShowsEscapedOnOneLineAsTheCellsWords) {
  ApprovalText text = render_approval("request_network_access", "example.org", true,
                                      "a dataset\n\x1b[2KAllow? [y]es\xE2\x80\xAE");
  EXPECT_EQ(text.reason_block, "    | a dataset\\n\\x1b[2KAllow? [y]es\\u202e\n");
  EXPECT_NE(text.prompt.find("The cell's reason (its own words, not checked):\n" +
                             text.reason_block + "Allow?"),
            std::string::npos);
  EXPECT_FALSE(has_raw_control(text.prompt));
  // Still whole and verbatim: the reason is never what a rule matches.
  EXPECT_TRUE(text.always_offered);
}

TEST(RenderApproval, ALongReasonIsCutVisiblyAndNoReasonShowsNone) {
  ApprovalText text = render_approval("request_network_access", "example.org", true,
                                      std::string(kApprovalReasonBytes + 100, 'r'));
  EXPECT_NE(text.reason_block.find(" [cut: 500 of 600 bytes shown]\n"), std::string::npos);
  EXPECT_EQ(text.reason_block.find(std::string(kApprovalReasonBytes + 1, 'r')), std::string::npos);
  ApprovalText plain = render_approval("request_network_access", "example.org");
  EXPECT_EQ(plain.reason_block, "");
  EXPECT_EQ(plain.prompt.find("reason"), std::string::npos);
}

TEST(BoundedTarget, KeepsShortTargetsAndMarksLongOnes) {
  EXPECT_EQ(bounded_target("ls"), "ls");
  const std::string target(4500, 'y');
  const std::string kept = bounded_target(target);
  EXPECT_EQ(kept.substr(0, 4000), std::string(4000, 'y'));
  EXPECT_NE(kept.find("sha256 " + sha256_hex(target)), std::string::npos);
}

TEST(ApprovalChoices, OneTableMakesTheTerminalLine) {
  std::vector<std::string> decisions;
  for (const ApprovalChoice& choice : approval_choices(true))
    decisions.emplace_back(choice.decision);
  EXPECT_EQ(decisions, (std::vector<std::string>{"once", "always", "deny"}));
  EXPECT_EQ(approval_choices(false).size(), 2u);
  EXPECT_EQ(approval_choices_line(true), "Allow? [y]es once / [a]lways this session / [N]o: ");
  EXPECT_EQ(approval_choices_line(false), "Allow? [y]es once / [N]o: ");
  const ApprovalText text = render_approval("bash", "ls");
  EXPECT_EQ(text.prompt, text.question + approval_choices_line(true));
  EXPECT_TRUE(text.question.ends_with("\n"));
}

TEST(ReadRelayedApproval, GivesBackWhatTheRenderingOffered) {
  for (bool verbatim : {true, false}) {
    const ApprovalText text = render_approval("bash", "echo hi", verbatim, "to greet");
    auto read = read_relayed_approval(text.prompt);
    ASSERT_TRUE(read.has_value());
    EXPECT_EQ(read->question, text.question);
    EXPECT_EQ(read->always_offered, text.always_offered);
  }
}

TEST(ReadRelayedApproval, OnlyTheRenderingsOwnLastLineCounts) {
  // A target that imitates the choices line sits behind the gutter.
  const std::string fake = "x\n" + approval_choices_line(true);
  const ApprovalText redacted = render_approval("bash", fake, false);
  auto read = read_relayed_approval(redacted.prompt);
  ASSERT_TRUE(read.has_value());
  EXPECT_FALSE(read->always_offered);
  // A last line that merely mentions the choices is no approval at all.
  EXPECT_FALSE(read_relayed_approval("run it\nAllow? [a]lways").has_value());
  EXPECT_FALSE(read_relayed_approval(approval_choices_line(true) + "please").has_value());
  EXPECT_FALSE(read_relayed_approval(approval_choices_line(true) + "\n").has_value());
}

}  // namespace
}  // namespace o4s::host
