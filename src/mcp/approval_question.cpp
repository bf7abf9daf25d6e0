#include "mcp/approval_question.h"

namespace o4s::mcp {

Json approval_schema(bool always_offered) {
  Json choices = Json::array({"once"});
  Json names = Json::array({"Allow once"});
  if (always_offered) {
    choices.push_back("always");
    names.push_back("Always allow (this kernel)");
  }
  choices.push_back("deny");
  names.push_back("Deny");
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

}  // namespace o4s::mcp
