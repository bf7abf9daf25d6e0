#include "sandbox/uid_lease.h"

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <thread>

#include "base/file_io.h"

namespace o4s::sandbox {

namespace {

using Clock = std::chrono::steady_clock;

// How long a release waits for the sandbox's last processes to be gone (a
// killed PID namespace is torn down asynchronously) before it leaves the
// uid for the next acquirer's /proc check.
constexpr std::chrono::milliseconds kReleaseSettle(300);

bool reserved(std::uint32_t id) { return id == 0 || id == 65534 || id == 65535 || id == ~0U; }

// One "inside outside count" line of /proc/self/{uid,gid}_map.
struct IdExtent {
  std::uint64_t inside = 0;
  std::uint64_t count = 0;
};

std::vector<IdExtent> read_id_map(const char* path) {
  std::vector<IdExtent> extents;
  auto text = read_file(path);
  if (!text) return extents;
  std::size_t at = 0;
  while (at < text->size()) {
    std::size_t end = text->find('\n', at);
    if (end == std::string::npos) end = text->size();
    unsigned long long inside = 0, outside = 0, count = 0;
    if (std::sscanf(text->substr(at, end - at).c_str(), "%llu %llu %llu", &inside, &outside,
                    &count) == 3) {
      extents.push_back({inside, count});
    }
    at = end + 1;
  }
  return extents;
}

// Can this process switch to `id` (a daemon in a container's user namespace
// maps only part of the id space)? The maps never change once written.
bool mapped(std::uint32_t id) {
  static const std::vector<IdExtent> uids = read_id_map("/proc/self/uid_map");
  static const std::vector<IdExtent> gids = read_id_map("/proc/self/gid_map");
  auto in = [id](const std::vector<IdExtent>& extents) {
    for (const auto& e : extents) {
      if (id >= e.inside && id - e.inside < e.count) return true;
    }
    return false;
  };
  return in(uids) && in(gids);
}

// Is the id taken by a real account or group (any name service)?
bool account_exists_now(std::uint32_t id) {
  char buffer[4096];
  struct passwd pw {};
  struct passwd* found_pw = nullptr;
  if (::getpwuid_r(id, &pw, buffer, sizeof buffer, &found_pw) == 0 && found_pw != nullptr) {
    return true;
  }
  struct group gr {};
  struct group* found_gr = nullptr;
  return ::getgrgid_r(id, &gr, buffer, sizeof buffer, &found_gr) == 0 && found_gr != nullptr;
}

// account_exists_now, remembered for a minute: one lookup through every
// name service costs a few hundred microseconds (systemd's userdb alone
// probes a dozen paths), on every kernel start otherwise.
bool account_exists(std::uint32_t id) {
  static std::mutex mutex;
  static std::map<std::uint32_t, std::pair<bool, Clock::time_point>> checked;
  constexpr std::chrono::seconds kRecheck(60);
  {
    std::lock_guard lock(mutex);
    auto found = checked.find(id);
    if (found != checked.end() && Clock::now() - found->second.second < kRecheck) {
      return found->second.first;
    }
  }
  const bool exists = account_exists_now(id);
  std::lock_guard lock(mutex);
  checked[id] = {exists, Clock::now()};
  return exists;
}

// The run directory, made if missing (root-only) and refused unless it is a
// real directory of ours that nobody else may write: whoever could would
// hand out uids, or lock them all.
Result<UniqueFd> open_run_directory(const std::string& path) {
  if (path.empty() || path.front() != '/') {
    return make_error(ErrorCode::kInvalidArgument,
                      "the sandbox uid run directory " + path + " is not an absolute path");
  }
  for (std::size_t slash = path.find('/', 1);; slash = path.find('/', slash + 1)) {
    std::string prefix = slash == std::string::npos ? path : path.substr(0, slash);
    if (::mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST) {
      return system_error("mkdir " + prefix, errno);
    }
    if (slash == std::string::npos) break;
  }
  UniqueFd dir(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!dir) return system_error("open " + path, errno);
  struct stat st {};
  if (::fstat(dir.get(), &st) != 0) return system_error("stat " + path, errno);
  if (st.st_uid != ::geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return make_error(ErrorCode::kSandboxUnavailable,
                      "the sandbox uid run directory " + path +
                          " is writable by another user or not owned by this daemon's uid");
  }
  return dir;
}

// Does a /proc/<pid>/status text show a live process (a zombie runs
// nothing: bubblewrap's PID 1 lingers as one until the host's init reaps
// it) with `uid` among the ids of its "Uid:" line?
bool runs_as(const std::string& status, std::uint32_t uid) {
  std::size_t state = status.find("\nState:");
  if (state == std::string::npos) return false;
  std::size_t letter = status.find_first_not_of(" \t", state + 7);
  if (letter == std::string::npos || status[letter] == 'Z' || status[letter] == 'X') return false;
  std::size_t at = status.find("\nUid:");
  if (at == std::string::npos) return false;
  const char* cursor = status.c_str() + at + 5;
  const char* end = status.c_str() + status.size();
  for (int field = 0; field < 4; ++field) {
    while (cursor < end && (*cursor == ' ' || *cursor == '\t')) ++cursor;
    std::uint32_t id = 0;
    auto [next, error] = std::from_chars(cursor, end, id);
    if (error != std::errc()) return false;
    if (id == uid) return true;
    cursor = next;
  }
  return false;
}

// Tries to take `uid`: its lock, then the checks that it is free.
Result<std::optional<UniqueFd>> try_take(int run_dir, std::uint32_t uid) {
  const std::string name = std::to_string(uid);
  UniqueFd lock(::openat(run_dir, name.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!lock) return system_error("open the lock file of uid " + name, errno);
  if (::flock(lock.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) return std::optional<UniqueFd>();  // another kernel's
    return system_error("lock uid " + name, errno);
  }
  struct stat st {};
  if (::fstat(lock.get(), &st) != 0) return system_error("stat the lock of uid " + name, errno);
  // Not released cleanly: free only once nothing runs as it any more.
  if (st.st_size > 0 && uid_in_use(uid).value_or(true)) return std::optional<UniqueFd>();
  if (account_exists(uid)) return std::optional<UniqueFd>();
  std::string holder = std::to_string(::getpid()) + "\n";
  if (::ftruncate(lock.get(), 0) != 0 || ::pwrite(lock.get(), holder.data(), holder.size(), 0) !=
                                             static_cast<ssize_t>(holder.size())) {
    return system_error("mark uid " + name + " as leased", errno);
  }
  return std::optional<UniqueFd>(std::move(lock));
}

}  // namespace

std::optional<bool> uid_in_use(std::uint32_t uid) {
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return std::nullopt;
  const int proc_fd = ::dirfd(proc);
  bool found = false;
  while (!found) {
    errno = 0;
    struct dirent* entry = ::readdir(proc);
    if (entry == nullptr) break;
    if (entry->d_name[0] < '1' || entry->d_name[0] > '9') continue;
    struct stat st {};
    if (::fstatat(proc_fd, entry->d_name, &st, 0) != 0) continue;  // gone meanwhile
    // A process that is not dumpable shows as root's whatever its ids;
    // any other owner is its effective uid.
    if (st.st_uid != uid && st.st_uid != 0) continue;
    std::string path = std::string(entry->d_name) + "/status";
    UniqueFd status(::openat(proc_fd, path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!status) continue;
    char buffer[2048];
    ssize_t n = ::read(status.get(), buffer, sizeof buffer);
    if (n > 0) found = runs_as(std::string(buffer, static_cast<std::size_t>(n)), uid);
  }
  ::closedir(proc);
  return found;
}

Result<UidLease> UidLease::acquire(const std::string& run_directory, const UidRange& range,
                                   const std::vector<std::uint32_t>& preferred) {
  auto dir = open_run_directory(run_directory);
  if (!dir) return std::move(dir).error();
  auto attempt = [&](std::uint32_t uid) -> Result<std::optional<UniqueFd>> {
    if (uid < range.first || uid > range.last || reserved(uid) || !mapped(uid)) {
      return std::optional<UniqueFd>();
    }
    return try_take(dir->get(), uid);
  };
  for (std::uint32_t uid : preferred) {
    auto taken = attempt(uid);
    if (!taken) return std::move(taken).error();
    if (*taken) return UidLease(std::move(**taken), uid);
  }
  for (std::uint64_t uid = range.first; uid <= range.last; ++uid) {
    auto taken = attempt(static_cast<std::uint32_t>(uid));
    if (!taken) return std::move(taken).error();
    if (*taken) return UidLease(std::move(**taken), static_cast<std::uint32_t>(uid));
  }
  return make_error(ErrorCode::kSandboxUnavailable,
                    "no sandbox uid is free in " + std::to_string(range.first) + "-" +
                        std::to_string(range.last) +
                        " (each running kernel holds one; widen OPENAI4S_SANDBOX_UID_RANGE)");
}

UidLease& UidLease::operator=(UidLease&& other) noexcept {
  if (this != &other) {
    release();
    lock_ = std::move(other.lock_);
    uid_ = other.uid_;
  }
  return *this;
}

UidLease::~UidLease() { release(); }

void UidLease::release() {
  if (!lock_) return;
  // Marked free only when no process of the uid is left; otherwise the
  // next acquirer checks /proc itself before it reuses the uid.
  auto deadline = Clock::now() + kReleaseSettle;
  std::optional<bool> in_use = uid_in_use(uid_);
  while (in_use.value_or(true) && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    in_use = uid_in_use(uid_);
  }
  if (in_use == false) (void)::ftruncate(lock_.get(), 0);
  lock_.reset();  // closing the last descriptor drops the flock
}

Result<UidRange> parse_uid_range(const std::string& text) {
  auto number = [](std::string_view part) -> std::optional<std::uint32_t> {
    std::uint32_t value = 0;
    auto [end, error] = std::from_chars(part.data(), part.data() + part.size(), value);
    if (part.empty() || error != std::errc() || end != part.data() + part.size()) {
      return std::nullopt;
    }
    return value;
  };
  std::size_t dash = text.find('-');
  auto first =
      dash == std::string::npos ? std::nullopt : number(std::string_view(text).substr(0, dash));
  auto last =
      dash == std::string::npos ? std::nullopt : number(std::string_view(text).substr(dash + 1));
  if (!first || !last || *first > *last) {
    return make_error(ErrorCode::kInvalidArgument,
                      "OPENAI4S_SANDBOX_UID_RANGE must be FIRST-LAST (decimal uids), got " + text);
  }
  for (std::uint32_t id : {0U, 65534U, 65535U, ~0U}) {
    if (*first <= id && id <= *last) {
      return make_error(
          ErrorCode::kInvalidArgument,
          "OPENAI4S_SANDBOX_UID_RANGE " + text + " includes the reserved id " + std::to_string(id));
    }
  }
  return UidRange{*first, *last};
}

}  // namespace o4s::sandbox
