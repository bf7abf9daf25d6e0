#include "jupyter/message_rewrite.h"

#include <string>
#include <utility>

#include "jupyter/request_check.h"

namespace o4s::jupyter {

xeus::xmessage with_content(xeus::xmessage&& message, nl::json content) {
  xeus::xmessage::guid_list identities = message.identities();
  nl::json header = message.header();
  nl::json parent = message.parent_header();
  nl::json metadata = message.metadata();
  return xeus::xmessage(identities, std::move(header), std::move(parent), std::move(metadata),
                        std::move(content), std::move(message).buffers());
}

xeus::xmessage input_request_to_the_letter(xeus::xmessage&& message) {
  if (message.header().value("msg_type", "") != "input_request") return std::move(message);
  nl::json content = message.content();
  if (!content.is_object()) return std::move(message);
  auto pwd = content.find("pwd");
  if (pwd != content.end()) {
    content["password"] = pwd->is_boolean() && pwd->get<bool>();
    content.erase("pwd");
  }
  return with_content(std::move(message), std::move(content));
}

bool shown_but_unstored(const xeus::xmessage& request) {
  if (request.header().value("msg_type", "") != "execute_request") return false;
  const nl::json& content = request.content();
  // request_problem() has checked the types by now.
  return !content.value("silent", false) && !content.value("store_history", true);
}

xeus::xmessage as_uncounted(xeus::xmessage&& request) {
  nl::json content = request.content();
  content["silent"] = true;
  return with_content(std::move(request), std::move(content));
}

xeus::xmessage aborted_reply(const xeus::xmessage& request) {
  std::string type = request.header().value("msg_type", "");
  const std::string suffix = "_request";
  if (type.size() > suffix.size() &&
      type.compare(type.size() - suffix.size(), suffix.size(), suffix) == 0) {
    type.resize(type.size() - suffix.size());
  }
  return reply_to(request, type + "_reply", nl::json{{"status", "aborted"}});
}

}  // namespace o4s::jupyter
