// The server's warm pools (issue 28): per language, workers started ahead
// of create_kernel, each in its own fresh default workspace and sandbox.
// They count against --max-kernels: a pool refills only while the running
// kernels, the ones being created and every pool's workers leave room.
#include <cstdlib>

#include "kernel/warm_memory.h"
#include "kernel/warm_pool.h"
#include "mcp/kernel_pool.h"

namespace o4s::mcp {

Result<std::map<std::string, std::size_t>> parse_warm_workers(const std::string& text) {
  std::map<std::string, std::size_t> sizes;
  auto refuse = [&](const std::string& why) {
    return make_error(ErrorCode::kInvalidArgument,
                      "--pool " + text + ": " + why + " (expected e.g. python=2,r=1)");
  };
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? comma : comma - start);
    std::size_t equals = item.find('=');
    if (equals == std::string::npos) return refuse("\"" + item + "\" has no =N");
    std::string language = item.substr(0, equals);
    std::string count = item.substr(equals + 1);
    if (language != "python" && language != "r") {
      return refuse("the language must be python or r, not \"" + language + "\"");
    }
    char* end = nullptr;
    long long n = std::strtoll(count.c_str(), &end, 10);
    if (count.empty() || *end != '\0' || n < 0 || n > 64) {
      return refuse("\"" + count + "\" is not a count from 0 to 64");
    }
    sizes[language] = static_cast<std::size_t>(n);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return sizes;
}

void KernelPool::open_warm_pools() {
  for (const auto& [language, size] : settings_.warm_workers) {
    if (size == 0) continue;
    if (language == "r" && settings_.r_worker_argv.empty()) continue;
    warm_[language] = std::make_unique<kernel::WarmPool>(
        size, [this, language = language] { return start_warm(language); },
        [this, language = language](std::size_t held) { return room_for_warm(language, held); },
        [this, language = language](std::size_t held) { warm_released(language, held); });
  }
}

Result<kernel::WarmWorker> KernelPool::start_warm(const std::string& language) {
  // A default workspace like any other (create_kernel's own are named after
  // the kernel; this one is named before there is a kernel).
  return kernel::start_in_fresh_workspace(
      settings_.data_dir + "/agent-workspaces", "mcp-pool-",
      [&](const std::string& workspace) { return kernel_options(language, workspace); },
      settings_.init_timeout_s);
}

// Called by a pool, under its own lock, before each start. The other pools'
// counts are the ones their last check or release left (warm_released):
// checks are serialized here, and a granted start is counted at once, so
// two pools never both take the last slot.
bool KernelPool::room_for_warm(const std::string& language, std::size_t held) {
  std::lock_guard lock(mutex_);
  std::size_t others = 0;
  for (const auto& [other, count] : warm_held_) {
    if (other != language) others += count;
  }
  const bool room =
      !stopping_ && workers_in_use() + standbys_held() + others + held < settings_.max_kernels;
  warm_held_[language] = room ? held + 1 : held;
  return room;
}

// Called by a pool, under its own lock, when its workers fell to `held`:
// a claim, a dead worker dropped, or a failed start, whose granted room
// would otherwise stay counted while the pool waits for its next claim
// (other pools and standbys refused room that nothing uses).
void KernelPool::warm_released(const std::string& language, std::size_t held) {
  std::lock_guard lock(mutex_);
  std::size_t& counted = warm_held_[language];
  if (held >= counted) return;
  counted = held;
  // The other pools may use that room now; they are woken by the
  // housekeeper (a pool cannot be woken under another pool's lock).
  repoke_warm_ = true;
  wake_.notify_all();
}

std::size_t KernelPool::warm_total() const {
  std::size_t total = 0;
  for (const auto& [language, count] : warm_held_) total += count;
  return total;
}

Result<std::optional<kernel::WarmWorker>> KernelPool::claim_warm(const std::string& language) {
  auto it = warm_.find(language);
  if (it == warm_.end()) return std::optional<kernel::WarmWorker>();
  return it->second->claim();
}

std::unique_ptr<kernel::WarmPool::FallbackStart> KernelPool::fallback_start(
    const std::string& language) {
  auto it = warm_.find(language);
  if (it == warm_.end()) return nullptr;
  return std::make_unique<kernel::WarmPool::FallbackStart>(*it->second);
}

std::size_t KernelPool::warm_ready(const std::string& language) {
  auto it = warm_.find(language);
  return it == warm_.end() ? 0 : it->second->ready();
}

Json KernelPool::warm_memory() {
  Json out = Json::object();
  for (auto& [language, pool] : warm_) {
    std::uint64_t rss = 0;
    std::vector<pid_t> pids = pool->ready_pids();
    for (pid_t pid : pids) rss += kernel::tree_rss_bytes(pid);
    out[language] = Json{{"size", pool->size()}, {"ready", pids.size()}, {"rss_bytes", rss}};
  }
  return out;
}

void KernelPool::poke_warm_pools() {
  for (auto& [language, pool] : warm_) pool->poke();
}

void KernelPool::stop_warm_pools() {
  for (auto& [language, pool] : warm_) pool->stop();
}

}  // namespace o4s::mcp
