#include "jupyter/variables_comm.h"

namespace o4s::jupyter {

namespace {

constexpr long long kDefaultLimit = 200;

// The comm_open's limit, or the default; anything else is for the worker
// to refuse (it bounds the limit itself).
long long requested_limit(const xeus::xmessage& request) {
  const auto& data = request.content().value("data", nlohmann::json::object());
  auto limit = data.find("limit");
  if (limit == data.end() || !limit->is_number_integer()) return kDefaultLimit;
  return limit->get<long long>();
}

}  // namespace

void register_variables_comm(xeus::xcomm_manager& comms, ListVariables list) {
  comms.register_comm_target(
      kVariablesCommTarget, [list = std::move(list)](xeus::xcomm&& comm, xeus::xmessage request) {
        auto answer = list(requested_limit(request));
        nlohmann::json data;
        if (answer) {
          data = {{"variables", answer.value().value("variables", nlohmann::json::array())},
                  {"truncated", answer.value().value("truncated", false)}};
        } else {
          data = {{"error", answer.error().message}};
        }
        comm.send(nlohmann::json::object(), std::move(data), {});
        comm.close(nlohmann::json::object(), nlohmann::json::object(), {});
      });
}

}  // namespace o4s::jupyter
