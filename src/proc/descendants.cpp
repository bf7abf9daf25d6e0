#include "proc/descendants.h"

#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "base/file_io.h"
#include "proc/signals.h"

namespace o4s::proc {

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

struct StatFields {
  char state = 0;
  pid_t parent = -1;
};

// "pid (comm) state ppid ...": comm may hold spaces and parentheses.
std::optional<StatFields> read_stat(pid_t pid) {
  auto stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return std::nullopt;
  const char* close = std::strrchr(stat->c_str(), ')');
  StatFields fields;
  if (close == nullptr || std::sscanf(close + 1, " %c %d", &fields.state, &fields.parent) != 2) {
    return std::nullopt;
  }
  return fields;
}

bool is_live(char state) { return state != 'Z' && state != 'X' && state != 0; }

std::vector<std::string> numeric_entries(const std::string& directory) {
  std::vector<std::string> names;
  DIR* dir = ::opendir(directory.c_str());
  if (dir == nullptr) return names;
  while (dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] >= '0' && entry->d_name[0] <= '9') names.emplace_back(entry->d_name);
  }
  ::closedir(dir);
  return names;
}

// Children are listed per thread: the one that forked them.
std::vector<pid_t> children_of(pid_t pid) {
  std::vector<pid_t> children;
  const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  for (const auto& tid : numeric_entries(tasks)) {
    auto listed = read_file(tasks + "/" + tid + "/children");
    if (!listed) continue;
    const char* at = listed->c_str();
    char* end = nullptr;
    for (long child = std::strtol(at, &end, 10); end != at; child = std::strtol(at, &end, 10)) {
      children.push_back(static_cast<pid_t>(child));
      at = end;
    }
  }
  return children;
}

// Signals `found` only while it is still the child the walk saw: the pidfd
// pins whatever holds the pid now, and the parent check proves that is ours
// (a pid freed and reused since the walk has another parent).
bool signal_descendant(const Descendant& found, int signum) {
  auto pidfd = open_pidfd(found.pid);
  if (!pidfd) return false;
  auto stat = read_stat(found.pid);
  if (!stat || stat->parent != found.parent || !is_live(stat->state)) return false;
  return send_signal_via_pidfd(pidfd->get(), signum).ok();
}

bool environ_holds(pid_t pid, const std::string& needle) {
  auto environ = read_file("/proc/" + std::to_string(pid) + "/environ");
  if (!environ) return false;
  // Entries are NUL-terminated; a leading NUL makes the first one match too.
  return ('\0' + *environ).find(needle) != std::string::npos;
}

}  // namespace

std::vector<Descendant> live_descendants(pid_t root) {
  std::vector<Descendant> found;
  std::set<pid_t> seen{root};
  std::vector<pid_t> parents{root};
  for (std::size_t next = 0; next < parents.size(); ++next) {
    for (pid_t child : children_of(parents[next])) {
      if (!seen.insert(child).second) continue;
      auto stat = read_stat(child);
      // A zombie has no children left: they re-parented when it exited.
      if (!stat || !is_live(stat->state)) continue;
      found.push_back({child, parents[next]});
      parents.push_back(child);
    }
  }
  return found;
}

std::size_t kill_descendants(pid_t root, milliseconds budget) {
  const auto deadline = Clock::now() + budget;
  std::set<pid_t> stopped;
  std::size_t signalled = 0;
  for (bool fresh = true; fresh && Clock::now() < deadline;) {
    fresh = false;
    for (const auto& found : live_descendants(root)) {
      if (stopped.count(found.pid) == 0 && signal_descendant(found, SIGSTOP)) {
        stopped.insert(found.pid);
        fresh = true;
      }
    }
  }
  signalled = stopped.size();
  // SIGKILL also ends a stopped process. Each killed parent's children
  // re-parent to root (the subreaper) and show up on the next walk.
  for (;;) {
    auto left = live_descendants(root);
    if (left.empty() || Clock::now() >= deadline) break;
    for (const auto& found : left) {
      if (signal_descendant(found, SIGKILL) && stopped.insert(found.pid).second) ++signalled;
    }
    std::this_thread::sleep_for(milliseconds(2));
  }
  return signalled;
}

std::size_t kill_marked(const std::string& mark, milliseconds budget) {
  if (mark.empty()) return 0;
  const auto deadline = Clock::now() + budget;
  const std::string needle = '\0' + mark + '\0';
  const pid_t self = ::getpid();
  std::set<pid_t> signalled;
  for (;;) {
    bool any = false;
    for (const auto& name : numeric_entries("/proc")) {
      const auto pid = static_cast<pid_t>(std::stol(name));
      if (pid == self || !environ_holds(pid, needle)) continue;
      auto pidfd = open_pidfd(pid);
      // Rechecked through the pin: a pid reused since the scan fails here.
      if (!pidfd || !environ_holds(pid, needle)) continue;
      auto stat = read_stat(pid);
      if (!stat || !is_live(stat->state)) continue;
      any = true;
      if (send_signal_via_pidfd(pidfd->get(), SIGKILL).ok()) signalled.insert(pid);
    }
    if (!any || Clock::now() >= deadline) break;
    std::this_thread::sleep_for(milliseconds(2));
  }
  return signalled.size();
}

}  // namespace o4s::proc
