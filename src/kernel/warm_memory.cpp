#include "kernel/warm_memory.h"

#include <dirent.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace o4s::kernel {

namespace {

std::uint64_t vm_rss_bytes(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::strtoull(line.c_str() + 6, nullptr, 10) * 1024;
  }
  return 0;  // gone, or a kernel thread (no VmRSS line)
}

std::vector<pid_t> children_of(pid_t pid) {
  std::vector<pid_t> found;
  const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  std::unique_ptr<DIR, int (*)(DIR*)> dir(::opendir(tasks.c_str()), ::closedir);
  if (!dir) return found;
  while (const dirent* entry = ::readdir(dir.get())) {
    if (entry->d_name[0] == '.') continue;
    std::ifstream children(tasks + "/" + entry->d_name + "/children");
    pid_t child = 0;
    while (children >> child) found.push_back(child);
  }
  return found;
}

}  // namespace

std::uint64_t tree_rss_bytes(pid_t pid) {
  std::uint64_t total = 0;
  std::vector<pid_t> todo{pid};
  while (!todo.empty()) {
    const pid_t current = todo.back();
    todo.pop_back();
    total += vm_rss_bytes(current);
    for (pid_t child : children_of(current)) todo.push_back(child);
  }
  return total;
}

}  // namespace o4s::kernel
