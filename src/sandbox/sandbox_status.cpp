#include "sandbox/sandbox_status.h"

namespace o4s::sandbox {

namespace {

nlohmann::json optional_number(const std::optional<std::uint64_t>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

}  // namespace

nlohmann::json SandboxStatus::to_json() const {
  nlohmann::json checks_json = nlohmann::json::array();
  for (const auto& check : checks) {
    checks_json.push_back(
        {{"name", check.name}, {"passed", check.passed}, {"detail", check.detail}});
  }
  return {
      {"mode", mode},
      {"state", state},
      {"backend", backend},
      {"enforced", enforced},
      {"self_test_passed", self_test_passed},
      {"network_policy", network_policy},
      {"workspace", workspace},
      {"temp_dir", temp_dir},
      {"detail", detail},
      {"warning", warning},
      {"reason", reason},
      {"checks", std::move(checks_json)},
      {"limits",
       {{"memory_bytes", optional_number(limits.address_space_bytes)},
        {"cpu_seconds", optional_number(limits.cpu_seconds)},
        {"processes", optional_number(limits.processes)},
        {"file_size_bytes", optional_number(limits.file_size_bytes)},
        {"processes_enforced_by", process_limit}}},
      {"seccomp", seccomp},
      {"version", version},
  };
}

std::string security_warning(const std::string& detail) {
  return "OPENAI4S SECURITY WARNING: OS kernel sandbox is not enforced; " + detail;
}

}  // namespace o4s::sandbox
