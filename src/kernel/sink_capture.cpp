#include "kernel/sink_capture.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <utility>
#include <vector>

#include "base/paths.h"
#include "base/utf8.h"
#include "proc/supervisor.h"

namespace o4s::kernel {

namespace {

std::string temp_root() {
  for (const char* name : {"TMPDIR", "TMP", "TEMP"}) {
    const char* value = ::getenv(name);
    if (value != nullptr && value[0] == '/') return value;
  }
  return "/tmp";
}

// Calls `visit(name)` for each entry of the directory `dir_fd` but . and ..
// (read through a copy of the descriptor, which stays where it was).
template <typename Visit>
void each_entry(int dir_fd, Visit&& visit) {
  int copy = ::dup(dir_fd);
  if (copy < 0) return;
  DIR* dir = ::fdopendir(copy);
  if (dir == nullptr) {
    ::close(copy);
    return;
  }
  while (dirent* entry = ::readdir(dir)) {
    if (std::strcmp(entry->d_name, ".") == 0 || std::strcmp(entry->d_name, "..") == 0) continue;
    visit(entry->d_name);
  }
  ::closedir(dir);
}

void remove_entries(int dir_fd) {
  // Only files: a directory a sandboxed cell made in here stays (and so
  // does the sink directory then), rather than recursing into its tree.
  each_entry(dir_fd, [&](const char* name) { ::unlinkat(dir_fd, name, 0); });
}

}  // namespace

// -- SinkStream ----------------------------------------------------------------

SinkStream::SinkStream(std::size_t budget, int wake_fd) : budget_(budget), wake_fd_(wake_fd) {}

void SinkStream::append(std::string_view bytes) {
  bool grew = false;
  {
    std::lock_guard lock(mutex_);
    seen_ += bytes.size();
    if (retained_.size() < budget_) {
      retained_.append(bytes.substr(0, budget_ - retained_.size()));
      grew = true;
    }
  }
  if (grew && wake_fd_ >= 0) {
    std::uint64_t one = 1;
    // A full counter (impossible in practice) only merges wakeups.
    [[maybe_unused]] ssize_t n = ::write(wake_fd_, &one, sizeof one);
  }
}

void SinkStream::mark_closed() {
  std::lock_guard lock(mutex_);
  closed_ = true;
}

std::string SinkStream::take_new() {
  std::lock_guard lock(mutex_);
  std::string fresh = retained_.substr(taken_);
  taken_ = retained_.size();
  return fresh;
}

SinkStream::Snapshot SinkStream::snapshot() const {
  std::lock_guard lock(mutex_);
  return Snapshot{retained_, seen_, seen_ - retained_.size(), closed_};
}

// -- SinkDirectory -------------------------------------------------------------

namespace {

constexpr const char* kSinkPrefix = "openai4s-sinks-";
// A directory younger than this is never swept: its host may be between
// mkdtemp and the lock.
constexpr time_t kStaleAfterSeconds = 60;

// The liveness lock: an open file description lock (F_OFD_*), a read lock
// because a directory opens read-only. Not flock: the sandbox's ACL edits
// take the directory's flock (sandbox_identity.cpp), and the two kinds of
// lock never conflict.
struct flock whole_directory(short type) {
  struct flock lock {};
  lock.l_type = type;
  lock.l_whence = SEEK_SET;
  return lock;
}

bool lock_while_alive(int dir_fd) {
  struct flock lock = whole_directory(F_RDLCK);
  return ::fcntl(dir_fd, F_OFD_SETLK, &lock) == 0;
}

bool held_by_a_live_host(int dir_fd) {
  struct flock probe = whole_directory(F_WRLCK);
  // Unknown counts as held: nothing is removed on a doubt.
  return ::fcntl(dir_fd, F_OFD_GETLK, &probe) != 0 || probe.l_type != F_UNLCK;
}

// Removes the sink directories of hosts that died without removing theirs
// (SIGKILL): ours (this uid's), not locked by any live host, and not new.
void sweep_stale(const std::string& root) {
  UniqueFd root_fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!root_fd) return;
  std::vector<std::string> stale;
  each_entry(root_fd.get(), [&](const char* name) {
    if (std::strncmp(name, kSinkPrefix, std::strlen(kSinkPrefix)) != 0) return;
    UniqueFd dir(::openat(root_fd.get(), name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW));
    struct stat st {};
    if (!dir || ::fstat(dir.get(), &st) != 0 || st.st_uid != ::geteuid()) return;
    if (::time(nullptr) - st.st_mtime < kStaleAfterSeconds) return;
    if (held_by_a_live_host(dir.get())) return;
    remove_entries(dir.get());
    stale.emplace_back(name);
  });
  for (const std::string& name : stale) ::unlinkat(root_fd.get(), name.c_str(), AT_REMOVEDIR);
}

}  // namespace

Result<std::unique_ptr<SinkDirectory>> SinkDirectory::create() {
  const std::string root = temp_root();
  sweep_stale(root);
  std::string pattern = root + "/" + kSinkPrefix + "XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) return system_error("mkdtemp " + pattern, errno);
  // Resolved once: the sandbox binds this exact directory, and fifos are
  // made relative to this descriptor so a path swapped later cannot
  // redirect them.
  auto resolved = real_path(pattern);
  if (!resolved) {
    ::rmdir(pattern.c_str());
    return std::move(resolved).error();
  }
  UniqueFd dir(::open(resolved->c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW));
  // Locked while this host lives: a host killed outright leaves its
  // directory unlocked, and the next one removes it (sweep_stale).
  if (!dir || !lock_while_alive(dir.get())) {
    int saved = errno;
    ::rmdir(resolved->c_str());
    return system_error("open " + *resolved, saved);
  }
  return std::unique_ptr<SinkDirectory>(new SinkDirectory(*resolved, std::move(dir)));
}

SinkDirectory::~SinkDirectory() { remove(); }

void SinkDirectory::remove() {
  if (std::exchange(removed_, true)) return;
  remove_entries(dir_.get());
  ::rmdir(path_.c_str());
}

// -- CellCapture ---------------------------------------------------------------

CellCapture::CellCapture(SinkDirectory& directory, std::uint64_t number)
    : directory_(directory),
      out_name_("out-" + std::to_string(number) + ".fifo"),
      err_name_("err-" + std::to_string(number) + ".fifo"),
      out_path_(directory.path() + "/" + out_name_),
      err_path_(directory.path() + "/" + err_name_) {}

Result<std::unique_ptr<CellCapture>> CellCapture::open(SinkDirectory& directory) {
  std::unique_ptr<CellCapture> capture(new CellCapture(directory, directory.next_number()));
  capture->wake_ = UniqueFd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!capture->wake_) return system_error("eventfd", errno);
  capture->out_ = std::make_shared<SinkStream>(kSinkRetainedBytes, capture->wake_.get());
  capture->err_ = std::make_shared<SinkStream>(kSinkRetainedBytes, -1);
  if (Status made = capture->make_stream(capture->out_name_, capture->out_, capture->out_token_);
      !made) {
    return std::move(made).error();
  }
  if (Status made = capture->make_stream(capture->err_name_, capture->err_, capture->err_token_);
      !made) {
    return std::move(made).error();
  }
  return capture;
}

Status CellCapture::make_stream(const std::string& name, std::shared_ptr<SinkStream> stream,
                                std::uint64_t& token) {
  int dir = directory_.fd();
  // A leftover of an earlier kernel generation (numbers restart with the
  // directory, never within it) or of a cell that planted one: replace it.
  ::unlinkat(dir, name.c_str(), 0);
  if (::mkfifoat(dir, name.c_str(), 0600) != 0) return system_error("mkfifo " + name, errno);
  // Writable by others: a sandboxed worker runs as its own uid. Only that
  // uid is let through the 0700 directory (search only), so only root and
  // the sandbox can reach the fifo at all.
  if (::fchmodat(dir, name.c_str(), 0622, 0) != 0) return system_error("chmod " + name, errno);
  // Non-blocking, so the open does not wait for the writer; before execute
  // is sent, so the worker's blocking open for writing finds a reader.
  UniqueFd fd(::openat(dir, name.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW));
  if (!fd) return system_error("open " + name, errno);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISFIFO(st.st_mode)) {
    return make_error(ErrorCode::kProtocol, "sink " + name + " is not the fifo the host made");
  }
  token = proc::ProcessSupervisor::instance().watch(std::move(fd), std::move(stream));
  return {};
}

void CellCapture::end_watches() {
  auto& supervisor = proc::ProcessSupervisor::instance();
  supervisor.unwatch(std::exchange(out_token_, 0));
  supervisor.unwatch(std::exchange(err_token_, 0));
}

void CellCapture::drain_rest(std::uint64_t& token, SinkStream& stream,
                             std::chrono::steady_clock::time_point deadline,
                             const std::shared_ptr<proc::DrainTarget>& strays) {
  UniqueFd fd = proc::ProcessSupervisor::instance().unwatch(std::exchange(token, 0));
  // Invalid: the supervisor already saw end of stream (and marked it).
  if (!fd) return;
  // This thread reads what is left itself rather than wait for the
  // supervisor thread to be scheduled for it: the cell's writers are
  // normally gone already, so this is a few reads and end of stream.
  static thread_local std::vector<char> buffer(256 * 1024);
  for (;;) {
    ssize_t n = ::read(fd.get(), buffer.data(), buffer.size());
    if (n > 0) {
      stream.append(std::string_view(buffer.data(), static_cast<std::size_t>(n)));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        // A writer outlived the grace: the rest is not this cell's.
        proc::ProcessSupervisor::instance().watch(std::move(fd),
                                                  std::make_shared<StrayOutput>(strays));
        return;
      }
      pollfd waiting{fd.get(), POLLIN, 0};
      ::poll(&waiting, 1, static_cast<int>(left.count()));
      continue;
    }
    stream.mark_closed();
    return;
  }
}

CellCapture::~CellCapture() {
  end_watches();
  ::unlinkat(directory_.fd(), out_name_.c_str(), 0);
  ::unlinkat(directory_.fd(), err_name_.c_str(), 0);
}

void CellCapture::release_unopened(const std::string& name) {
  UniqueFd poke(::openat(directory_.fd(), name.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC));
}

std::string CellCapture::take_live_stdout() {
  std::uint64_t count;
  [[maybe_unused]] ssize_t n = ::read(wake_.get(), &count, sizeof count);
  std::string bytes = live_carry_ + out_->take_new();
  std::size_t whole = utf8::complete_prefix(bytes);
  live_carry_ = bytes.substr(whole);
  bytes.resize(whole);
  return utf8::replace_invalid(bytes);
}

CellCapture::Finished CellCapture::finish(std::chrono::milliseconds grace,
                                          std::shared_ptr<proc::DrainTarget> strays) {
  release_unopened(out_name_);
  release_unopened(err_name_);
  drain_rest(out_token_, *out_, std::chrono::steady_clock::now() + grace, strays);
  drain_rest(err_token_, *err_, std::chrono::steady_clock::now() + grace, strays);

  Finished finished;
  finished.live_tail = take_live_stdout();
  finished.live_tail += utf8::replace_invalid(std::exchange(live_carry_, std::string()));
  finished.usage = proto::Json::object();
  auto describe = [&](const SinkStream& stream, const std::string& prefix, std::string& text) {
    SinkStream::Snapshot snap = stream.snapshot();
    text = utf8::replace_invalid(snap.retained);
    if (snap.dropped > 0) text += kSinkTruncationMarker;
    finished.usage[prefix + "_seen_bytes"] = snap.seen;
    finished.usage[prefix + "_retained_bytes"] = snap.retained.size();
    finished.usage[prefix + "_dropped_bytes"] = snap.dropped;
    finished.usage[prefix + "_truncated"] = snap.dropped > 0;
  };
  describe(*out_, "stdout", finished.stdout_text);
  describe(*err_, "stderr", finished.stderr_text);
  return finished;
}

}  // namespace o4s::kernel
