#include "kernel/pipe_transport.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <climits>

#include "proc/supervisor.h"
#include "proto/limits.h"

namespace o4s::kernel {

using std::chrono::milliseconds;

Result<std::unique_ptr<PipeTransport>> PipeTransport::start(const proc::SpawnRequest& request) {
  auto spawned = proc::ProcessSupervisor::instance().spawn(request, proto::kStderrTailBytes);
  if (!spawned) return std::move(spawned).error();
  auto child = std::make_unique<proc::ChildProcess>(spawned->pid, std::move(spawned->pidfd));
  child->set_descendant_mark(request.descendant_mark);
  return std::unique_ptr<PipeTransport>(
      new PipeTransport(std::move(child), std::move(spawned->stdin_write),
                        std::move(spawned->stdout_read), std::move(spawned->stderr_tail)));
}

PipeTransport::PipeTransport(std::unique_ptr<proc::ChildProcess> child, UniqueFd stdin_write,
                             UniqueFd stdout_read, std::shared_ptr<proc::StderrTail> tail)
    : child_(std::move(child)),
      stdin_(std::move(stdin_write)),
      stdout_(std::move(stdout_read)),
      reader_(stdout_.get(), proto::kMaxFrameBytes),
      tail_(std::move(tail)) {
  // The answer to a frame we send usually comes within a few tens of
  // microseconds; see LineReader::set_spin_budget for why we spin for it.
  int flags = ::fcntl(stdout_.get(), F_GETFL);
  if (flags >= 0 && ::fcntl(stdout_.get(), F_SETFL, flags | O_NONBLOCK) == 0) {
    reader_.set_spin_budget(kAnswerSpin);
  }
}

PipeTransport::~PipeTransport() {
  close_input();
  // ChildProcess's destructor kills and reaps whatever is still running.
}

Status PipeTransport::write_line(std::string_view line) {
  std::lock_guard lock(write_mutex_);
  if (!stdin_) return make_error(ErrorCode::kNotAlive, "kernel worker input is closed");
  while (!line.empty()) {
    ssize_t n = ::write(stdin_.get(), line.data(), line.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return system_error("write protocol pipe", errno);
    }
    line.remove_prefix(static_cast<std::size_t>(n));
  }
  reader_.arm_spin();
  return {};
}

Result<std::optional<std::string>> PipeTransport::read_line() {
  std::lock_guard lock(read_mutex_);
  return reader_.read_line();
}

void PipeTransport::set_wake(int fd, std::function<void()> on_wake) {
  std::lock_guard lock(read_mutex_);
  reader_.set_wake(fd, std::move(on_wake));
}

std::size_t PipeTransport::dropped_lines() const { return reader_.oversized_lines(); }

std::optional<std::size_t> PipeTransport::unread_input_bytes() {
  std::unique_lock lock(write_mutex_, std::try_to_lock);
  if (!lock.owns_lock() || !stdin_) return std::nullopt;
  // FIONREAD on either end of a Linux pipe counts the bytes it holds.
  int queued = 0;
  if (::ioctl(stdin_.get(), FIONREAD, &queued) != 0 || queued < 0) return std::nullopt;
  return static_cast<std::size_t>(queued);
}

bool PipeTransport::offer_line(std::string_view line, milliseconds patience) {
  if (line.size() > PIPE_BUF) return false;
  // A moment for a write under way (a frame being sent) to finish; a write
  // blocked on a full pipe holds the lock longer, and this gives up.
  std::unique_lock lock(write_mutex_, patience);
  if (!lock.owns_lock() || !stdin_) return false;
  const int flags = ::fcntl(stdin_.get(), F_GETFL);
  ::fcntl(stdin_.get(), F_SETFL, flags | O_NONBLOCK);
  ssize_t n = -1;
  do {
    n = ::write(stdin_.get(), line.data(), line.size());
  } while (n < 0 && errno == EINTR);
  ::fcntl(stdin_.get(), F_SETFL, flags);
  if (n != static_cast<ssize_t>(line.size())) return false;
  reader_.arm_spin();
  return true;
}

bool PipeTransport::alive() { return !child_->exited(); }

void PipeTransport::kill() { child_->kill_group(); }

void PipeTransport::close_input() {
  std::lock_guard lock(write_mutex_);
  stdin_.reset();
}

void PipeTransport::offer_shutdown_frame() {
  // Only the polite first rung: the ladder below ends the worker regardless.
  (void)offer_line("{\"type\":\"shutdown\"}\n", milliseconds(200));
}

Status PipeTransport::close(bool graceful) {
  if (graceful && alive()) {
    // What the cells started goes first, while the worker still holds it:
    // a worker that exits hands its orphans to init.
    child_->end_descendants();
    offer_shutdown_frame();
    if (!child_->wait_exit(milliseconds(3000))) {
      // A worker busy in a cell never reads the shutdown frame; its SIGINT
      // handler turns this into the cell's interrupt, then it reads it.
      if (!stop_signal_ || !stop_signal_()) (void)child_->send_signal(SIGINT);
      if (!child_->wait_exit(milliseconds(2000))) child_->kill_group();
    }
  }
  close_input();
  // Reaping also ends the cell's orphaned grandchildren (ChildProcess::poll).
  child_->wait(milliseconds(graceful ? 2000 : 0));
  return {};
}

std::optional<StderrSnapshot> PipeTransport::stderr_snapshot() {
  return StderrSnapshot{tail_->text(), tail_->retained_bytes(), tail_->seen_bytes(),
                        tail_->dropped_bytes(), tail_->closed()};
}

}  // namespace o4s::kernel
