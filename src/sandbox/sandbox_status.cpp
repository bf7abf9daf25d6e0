#include "sandbox/sandbox_status.h"

namespace o4s::sandbox {

namespace {

nlohmann::json optional_number(const std::optional<std::uint64_t>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

}  // namespace

// The uid mapping: what the cell sees as its uid and what the host sees.
nlohmann::json SandboxStatus::identity_json() const {
  if (!identity) return nullptr;
  return {{"sandbox_uid", identity->uid},
          {"sandbox_gid", identity->gid},
          {"host_uid", identity->uid},
          {"host_gid", identity->gid},
          {"host_root", identity->uid == 0},
          {"dropped_from_root", identity->dropped},
          {"chosen_by", identity->chosen_by},
          {"own_uid", identity->own_uid},
          {"shared",
           identity->shared.empty() ? nlohmann::json(nullptr) : nlohmann::json(identity->shared)}};
}

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
      {"identity", identity_json()},
      {"envelope",
       {{"memory",
         {{"limit", optional_number(limits.address_space_bytes)},
          {"enforced_by", envelope.memory},
          {"includes_tmpfs", envelope.memory_includes_tmpfs}}},
        {"processes",
         {{"limit", optional_number(limits.processes)}, {"enforced_by", envelope.processes}}},
        {"cpu",
         {{"limit_seconds", optional_number(limits.cpu_seconds)}, {"enforced_by", envelope.cpu}}}}},
  };
}

std::string security_warning(const std::string& detail) {
  return "OPENAI4S SECURITY WARNING: OS kernel sandbox is not enforced; " + detail;
}

}  // namespace o4s::sandbox
