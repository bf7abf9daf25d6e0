#include "proc/supervisor.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <future>

#include "proc/signals.h"

namespace o4s::proc {

namespace {
// Bytes per read of a watched descriptor (the sink capture's 256 KiB).
constexpr std::size_t kDrainReadBytes = 256 * 1024;
}  // namespace

ProcessSupervisor& ProcessSupervisor::instance() {
  static ProcessSupervisor* supervisor = new ProcessSupervisor();
  return *supervisor;
}

ProcessSupervisor::ProcessSupervisor()
    : epoll_(::epoll_create1(EPOLL_CLOEXEC)),
      wakeup_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)),
      buffer_(kDrainReadBytes) {
  if (!epoll_ || !wakeup_) std::abort();  // no supervisor means no kernels at all
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = kWakeupToken;
  if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, wakeup_.get(), &ev) != 0) std::abort();
  thread_ = std::thread([this] { run(); });
  thread_.detach();
}

bool ProcessSupervisor::on_supervisor_thread() const {
  return std::this_thread::get_id() == thread_.get_id();
}

void ProcessSupervisor::post(std::function<void()> task) {
  {
    std::lock_guard lock(mutex_);
    tasks_.push_back(std::move(task));
  }
  std::uint64_t one = 1;
  // The eventfd counter cannot overflow in practice; a failed write would
  // only delay the task until the next wakeup.
  [[maybe_unused]] ssize_t n = ::write(wakeup_.get(), &one, sizeof one);
}

Result<SupervisedChild> ProcessSupervisor::spawn(const SpawnRequest& request,
                                                 std::size_t tail_budget) {
  auto work = [this, &request, tail_budget]() -> Result<SupervisedChild> {
    auto pipes = spawn_with_pipes(request);
    if (!pipes) return std::move(pipes).error();
    auto pidfd = open_pidfd(pipes->pid);
    if (!pidfd) {
      // Without a pidfd we cannot supervise safely; do not leave an orphan.
      ::kill(-pipes->pid, SIGKILL);
      ::waitpid(pipes->pid, nullptr, 0);
      return std::move(pidfd).error();
    }
    auto tail = std::make_shared<StderrTail>(tail_budget);
    watch(std::move(pipes->stderr_read), tail);
    return SupervisedChild{pipes->pid, std::move(pidfd.value()), std::move(pipes->stdin_write),
                           std::move(pipes->stdout_read), std::move(tail)};
  };
  if (on_supervisor_thread()) return work();
  std::promise<Result<SupervisedChild>> promise;
  auto future = promise.get_future();
  post([&] {
    // An exception (bad_alloc building argv) must reach the caller, not
    // escape the supervisor loop and terminate the host.
    try {
      promise.set_value(work());
    } catch (...) {
      promise.set_exception(std::current_exception());
    }
  });
  return future.get();
}

std::uint64_t ProcessSupervisor::watch(UniqueFd fd, std::shared_ptr<DrainTarget> target) {
  int raw = fd.get();
  int flags = ::fcntl(raw, F_GETFL);
  ::fcntl(raw, F_SETFL, flags | O_NONBLOCK);
  // epoll_ctl is safe beside a concurrent epoll_wait; the lock orders the
  // table with drain(), so no post to the thread (and no wait for it to be
  // scheduled) is needed.
  std::lock_guard lock(watch_mutex_);
  std::uint64_t token = next_token_;
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLRDHUP;
  ev.data.u64 = token;
  if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, raw, &ev) != 0) {
    target->mark_closed();
    return 0;  // fd closes here; the writer gets EPIPE rather than a hang
  }
  ++next_token_;
  watched_.emplace(token, Watched{std::move(fd), std::move(target)});
  return token;
}

UniqueFd ProcessSupervisor::unwatch(std::uint64_t token) {
  if (token == 0) return {};
  std::lock_guard lock(watch_mutex_);
  auto it = watched_.find(token);
  if (it == watched_.end()) return {};
  ::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, it->second.fd.get(), nullptr);
  UniqueFd fd = std::move(it->second.fd);
  watched_.erase(it);
  return fd;
}

void ProcessSupervisor::drain(std::uint64_t token) {
  // Held across the (non-blocking, bounded) reads: unwatch() then never
  // takes a descriptor out from under a read in progress.
  std::lock_guard lock(watch_mutex_);
  auto it = watched_.find(token);
  if (it == watched_.end()) return;  // unwatched after epoll_wait returned
  const int fd = it->second.fd.get();
  // A bounded number of reads per wakeup: epoll is level-triggered, so a
  // worker writing stderr nonstop is served again next round instead of
  // holding the thread every other kernel's spawn waits on.
  for (int reads = 0; reads < 16; ++reads) {
    ssize_t n = ::read(fd, buffer_.data(), buffer_.size());
    if (n > 0) {
      it->second.target->append(std::string_view(buffer_.data(), static_cast<std::size_t>(n)));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    // EOF or a real error: the last writer is gone.
    ::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, fd, nullptr);
    it->second.target->mark_closed();
    watched_.erase(it);
    return;
  }
}

void ProcessSupervisor::run() {
  epoll_event events[32];
  for (;;) {
    int n = ::epoll_wait(epoll_.get(), events, 32, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      std::abort();
    }
    for (int i = 0; i < n; ++i) {
      std::uint64_t token = events[i].data.u64;
      if (token == kWakeupToken) {
        std::uint64_t count;
        [[maybe_unused]] ssize_t r = ::read(wakeup_.get(), &count, sizeof count);
        std::deque<std::function<void()>> tasks;
        {
          std::lock_guard lock(mutex_);
          tasks.swap(tasks_);
        }
        for (auto& task : tasks) task();
      } else {
        drain(token);
      }
    }
  }
}

}  // namespace o4s::proc
