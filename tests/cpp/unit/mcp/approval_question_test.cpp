// The approval question as the client sees it: the choices' schema, the
// reading of an answer, and a Jupyter kernel's prompt (a Slurm kernel's)
// turned into the same question, built from the shared rendering.
#include "mcp/approval_question.h"

#include <gtest/gtest.h>

#include "host/approval_text.h"

namespace o4s::mcp {
namespace {

Json choices(const Json& params) {
  return params["requestedSchema"]["properties"]["decision"]["enum"];
}

std::string kernel_prompt(std::string_view target, bool verbatim = true) {
  return "openai4s: " + host::render_approval("bash", target, verbatim).prompt;
}

TEST(ApprovalQuestion, AlwaysIsAChoiceOnlyWhenOffered) {
  EXPECT_EQ(choices(Json{{"requestedSchema", approval_schema(true)}}),
            Json::array({"once", "always", "deny"}));
  EXPECT_EQ(choices(Json{{"requestedSchema", approval_schema(false)}}),
            Json::array({"once", "deny"}));
}

TEST(ApprovalQuestion, OnlyAnAcceptedDecisionOfOurShapeCounts) {
  EXPECT_EQ(elicited_decision(Json{{"action", "accept"}, {"content", {{"decision", "once"}}}}),
            "once");
  EXPECT_EQ(elicited_decision(Json{{"action", "decline"}, {"content", {{"decision", "once"}}}}),
            "");
  EXPECT_EQ(elicited_decision(Json{{"action", "accept"}, {"content", "once"}}), "");
  EXPECT_EQ(elicited_decision(Json{{"action", "accept"}, {"content", {{"decision", 1}}}}), "");
  EXPECT_EQ(elicited_decision(Json::array()), "");
}

TEST(ApprovalQuestion, AKernelPromptKeepsItsTargetAndLosesTheTerminalChoices) {
  Json params = prompt_elicitation(kernel_prompt("echo hi"), "k1 (a Slurm job)", true);
  std::string message = params["message"];
  EXPECT_EQ(message.rfind("A cell in kernel k1 (a Slurm job) asks:\n", 0), 0u) << message;
  EXPECT_NE(message.find(std::string(host::kApprovalGutter) + "echo hi\n"), std::string::npos);
  EXPECT_EQ(message.find("[y]es"), std::string::npos) << message;
  EXPECT_TRUE(message.ends_with("Allow it?"));
  EXPECT_EQ(choices(params), Json::array({"once", "always", "deny"}));
  EXPECT_EQ(params["mode"], "form");
  EXPECT_FALSE(prompt_elicitation(kernel_prompt("echo hi"), "k1", false).contains("mode"));
}

TEST(ApprovalQuestion, ATargetCannotOfferAlwaysByImitatingTheChoicesLine) {
  // Redacted (not verbatim) and too long: the kernel offers only "once";
  // a target line that reads like the choices sits behind the gutter.
  std::string fake = "echo x\nAllow? [y]es once / [a]lways this session / [N]o: ";
  EXPECT_EQ(choices(prompt_elicitation(kernel_prompt(fake, false), "k", true)),
            Json::array({"once", "deny"}));
  std::string long_target(6000, 'x');
  EXPECT_EQ(choices(prompt_elicitation(kernel_prompt(long_target + "\n" + fake), "k", true)),
            Json::array({"once", "deny"}));
}

TEST(ApprovalQuestion, TheFormsChoicesAreTheRenderingsOwn) {
  for (bool always : {true, false}) {
    Json expected = Json::array();
    for (const auto& choice : host::approval_choices(always))
      expected.push_back(std::string(choice.decision));
    EXPECT_EQ(choices(Json{{"requestedSchema", approval_schema(always)}}), expected);
  }
  EXPECT_EQ(approval_schema(true)["properties"]["decision"]["enumNames"],
            Json::array({"Allow once", "Always allow (this kernel)", "Deny"}));
}

TEST(ApprovalQuestion, AlwaysComesOnlyFromTheRenderingsOwnChoicesLine) {
  // A last line that starts like the choices and mentions [a]lways is not
  // the rendering's line: no "always", and the line is shown as asked.
  std::string near = "openai4s: run it\n" + host::approval_choices_line(true) + "(or not)";
  Json params = prompt_elicitation(near, "k", true);
  EXPECT_EQ(choices(params), Json::array({"once", "deny"}));
  EXPECT_NE(params["message"].get<std::string>().find("(or not)"), std::string::npos);
  std::string bare = "openai4s: Allow? [y]es / [a]lways";
  EXPECT_EQ(choices(prompt_elicitation(bare, "k", true)), Json::array({"once", "deny"}));
  // The kernel's question comes through whole, its choices line replaced.
  auto text = host::render_approval("bash", "echo hi");
  std::string message = prompt_elicitation("openai4s: " + text.prompt, "k", true)["message"];
  EXPECT_EQ(message, "A cell in kernel k asks:\n" + text.question + "Allow it?");
}

TEST(ApprovalQuestion, APromptThatIsNotTheKernelsShowsNoRawControls) {
  // A cell's own input() prompt reaches the relay as a prompt too.
  std::string message = prompt_elicitation(
      "openai4s: run \x1b[31mthis\xe2\x80\xae\nAllow? [a]lways", "k", true)["message"];
  EXPECT_EQ(message.find('\x1b'), std::string::npos) << message;
  EXPECT_EQ(message.find("\xe2\x80\xae"), std::string::npos) << message;
  // The kernel's own rendering is left as it is.
  std::string rendered = host::render_approval("bash", "echo a\\tb").target_block;
  std::string shown = prompt_elicitation(kernel_prompt("echo a\\tb"), "k", true)["message"];
  EXPECT_NE(shown.find(rendered), std::string::npos) << shown;
}

}  // namespace
}  // namespace o4s::mcp
