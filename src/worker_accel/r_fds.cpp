// The R worker's fds 1 and 2 during a cell (r_worker.R): pointed at the
// cell's sink fifos, so what child processes (system(), system2(), a shell,
// a process left running) and native code write there joins the cell's
// stdout/stderr, in order with R's own output (R's sinks write the same
// fifos unbuffered). Between cells they are the worker's own again (the
// host's log). Loaded with dyn.load and called through .C, so every
// argument is a pointer and nothing of R's headers is needed; never part
// of the host.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

namespace {

// The worker's own fds 1 and 2, kept (close-on-exec, above the low fds)
// from the first cell on.
int saved_out = -1;
int saved_err = -1;

int keep(int fd) { return ::fcntl(fd, F_DUPFD_CLOEXEC, 10); }

// Opens the fifo for writing and puts it on `target`; errno on failure.
int point_at(const char* path, int target) {
  // Non-blocking open: the host's reader is there (it opened the read end
  // before sending the cell), and if it were not this fails instead of
  // hanging the worker. Writes then block, as a child expects of a pipe.
  int fd = ::open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return errno;
  int flags = ::fcntl(fd, F_GETFL);
  int failed = 0;
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0 || ::dup2(fd, target) < 0) {
    failed = errno;
  }
  ::close(fd);
  return failed;
}

void put_back() {
  std::fflush(stdout);
  std::fflush(stderr);
  if (saved_out >= 0) ::dup2(saved_out, 1);
  if (saved_err >= 0) ::dup2(saved_err, 2);
}

}  // namespace

extern "C" {

// .C("o4s_r_redirect", out_path, err_path, status = 0L): status is 0 or
// the errno of the step that failed (fds 1/2 are then the worker's own).
void o4s_r_redirect(char** out_path, char** err_path, int* status) {
  *status = 0;
  if (saved_out < 0) saved_out = keep(1);
  if (saved_err < 0) saved_err = keep(2);
  if (saved_out < 0 || saved_err < 0) {
    *status = errno != 0 ? errno : EBADF;
    return;
  }
  // What C stdio holds from before belongs to the log, not to this cell.
  std::fflush(stdout);
  std::fflush(stderr);
  int failed = point_at(*out_path, 1);
  if (failed == 0) failed = point_at(*err_path, 2);
  if (failed != 0) {
    put_back();
    *status = failed;
  }
}

// .C("o4s_r_restore", status = 0L): what native code left in C stdio goes
// to the cell first; then fds 1/2 are the worker's own again.
void o4s_r_restore(int* status) {
  put_back();
  *status = 0;
}

}  // extern "C"
