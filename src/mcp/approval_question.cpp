#include "mcp/approval_question.h"

#include <utility>

#include "host/approval_text.h"

namespace o4s::mcp {

Json approval_schema(bool always_offered) {
  Json choices = Json::array();
  Json names = Json::array();
  for (const host::ApprovalChoice& choice : host::approval_choices(always_offered)) {
    choices.push_back(std::string(choice.decision));
    names.push_back(std::string(choice.title));
  }
  return Json{{"type", "object"},
              {"properties",
               {{"decision",
                 {{"type", "string"},
                  {"title", "Decision"},
                  {"enum", std::move(choices)},
                  {"enumNames", std::move(names)}}}}},
              {"required", {"decision"}}};
}

std::string elicited_decision(const Json& answer) {
  if (!answer.is_object()) return "";
  auto action = answer.find("action");
  if (action == answer.end() || *action != "accept") return "";
  auto content = answer.find("content");
  if (content == answer.end() || !content->is_object()) return "";
  auto decision = content->find("decision");
  return decision != content->end() && decision->is_string() ? decision->get<std::string>() : "";
}

// Each line of `text` escaped as the shared rendering escapes a target:
// the kernel's own prompt is so already (and stays as it is), and a prompt
// that is not the kernel's (a cell's own input() dressed up as one) shows
// no raw controls or bidi reordering either.
std::string escaped_lines(const std::string& text) {
  std::string out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    out += host::escape_for_display(std::string_view(text).substr(start, end - start));
    if (end < text.size()) out += '\n';
    start = end + 1;
  }
  return out;
}

Json prompt_elicitation(const std::string& prompt, const std::string& who, bool form_mode) {
  std::string text = escaped_lines(prompt);
  if (text.starts_with(host::kApprovalPromptPrefix))
    text.erase(0, host::kApprovalPromptPrefix.size());
  // The kernel's choices come back from the rendering's own table; any
  // other text is shown whole and offers no "always".
  auto relayed = host::read_relayed_approval(text);
  const bool always = relayed && relayed->always_offered;
  std::string question = relayed ? relayed->question : text + "\n";
  std::string message = "A cell in kernel " + who + " asks:\n" + question + "Allow it?";
  Json params{{"message", message}, {"requestedSchema", approval_schema(always)}};
  if (form_mode) params["mode"] = "form";
  return params;
}

}  // namespace o4s::mcp
