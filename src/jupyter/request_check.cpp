#include "jupyter/request_check.h"

#include <initializer_list>
#include <utility>
#include <xeus/xguid.hpp>
#include <xeus/xkernel.hpp>

namespace o4s::jupyter {

namespace {

enum class Kind { kString, kBool, kInteger, kObject };

const char* kind_name(Kind kind) {
  switch (kind) {
    case Kind::kString:
      return "a string";
    case Kind::kBool:
      return "a boolean";
    case Kind::kInteger:
      return "an integer";
    case Kind::kObject:
      return "an object";
  }
  return "?";
}

bool has_kind(const nl::json& value, Kind kind) {
  switch (kind) {
    case Kind::kString:
      return value.is_string();
    case Kind::kBool:
      return value.is_boolean();
    case Kind::kInteger:
      return value.is_number_integer();
    case Kind::kObject:
      return value.is_object();
  }
  return false;
}

struct Field {
  const char* name;
  Kind kind;
  bool required;
};

// The fields xeus 2.4 (and this kernel's interpreter) read from each
// request, with the type each read expects. Absent optional fields take
// xeus's defaults.
std::optional<std::string> check(const nl::json& content, std::initializer_list<Field> fields) {
  for (const Field& field : fields) {
    auto it = content.find(field.name);
    if (it == content.end() || it->is_null()) {
      if (field.required) return std::string("missing field '") + field.name + "'";
      continue;
    }
    if (!has_kind(*it, field.kind)) {
      return std::string("field '") + field.name + "' must be " + kind_name(field.kind) + ", not " +
             it->type_name();
    }
  }
  return std::nullopt;
}

// One session id for the replies this file builds (xeus keeps its own).
const std::string& session_id() {
  static const std::string id = xeus::new_xguid();
  return id;
}

}  // namespace

std::optional<std::string> request_problem(const std::string& msg_type, const nl::json& content) {
  if (!content.is_object()) return "content must be a JSON object";
  if (msg_type == "execute_request") {
    return check(content, {{"code", Kind::kString, true},
                           {"silent", Kind::kBool, false},
                           {"store_history", Kind::kBool, false},
                           {"user_expressions", Kind::kObject, false},
                           {"allow_stdin", Kind::kBool, false},
                           {"stop_on_error", Kind::kBool, false}});
  }
  if (msg_type == "complete_request") {
    return check(content, {{"code", Kind::kString, true}, {"cursor_pos", Kind::kInteger, true}});
  }
  if (msg_type == "inspect_request") {
    return check(content, {{"code", Kind::kString, true},
                           {"cursor_pos", Kind::kInteger, true},
                           {"detail_level", Kind::kInteger, false}});
  }
  if (msg_type == "is_complete_request") {
    return check(content, {{"code", Kind::kString, true}});
  }
  if (msg_type == "history_request") {
    return check(content, {{"hist_access_type", Kind::kString, true},
                           {"output", Kind::kBool, false},
                           {"raw", Kind::kBool, false},
                           {"session", Kind::kInteger, false},
                           {"start", Kind::kInteger, false},
                           {"stop", Kind::kInteger, false},
                           {"n", Kind::kInteger, false},
                           {"pattern", Kind::kString, false},
                           {"unique", Kind::kBool, false}});
  }
  if (msg_type == "comm_info_request") {
    return check(content, {{"target_name", Kind::kString, false}});
  }
  if (msg_type == "shutdown_request") {
    return check(content, {{"restart", Kind::kBool, false}});
  }
  return std::nullopt;
}

nl::json bad_request_content(const std::string& problem) {
  return nl::json{{"status", "error"},
                  {"ename", "BadRequest"},
                  {"evalue", problem},
                  {"traceback", nl::json::array({"BadRequest: " + problem})}};
}

xeus::xmessage reply_to(const xeus::xmessage& request, const std::string& reply_type,
                        nl::json content) {
  return xeus::xmessage(
      request.identities(), xeus::make_header(reply_type, xeus::get_user_name(), session_id()),
      request.header(), nl::json::object(), std::move(content), xeus::buffer_sequence());
}

xeus::xpub_message status_for(const xeus::xmessage& request, const std::string& state) {
  return xeus::xpub_message("kernel." + session_id() + ".status",
                            xeus::make_header("status", xeus::get_user_name(), session_id()),
                            request.header(), nl::json::object(),
                            nl::json{{"execution_state", state}}, xeus::buffer_sequence());
}

}  // namespace o4s::jupyter
