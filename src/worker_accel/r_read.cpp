// The R worker's reads of its protocol input (fd 4, r_worker.R): one wait
// that a SIGINT ends. R installs its SIGINT handler with SA_RESTART, so a
// read R's own connections block in resumes after the signal and the
// interrupt waits for the next frame; poll() is never restarted (it fails
// with EINTR whatever the flag), so here the wait returns and R raises the
// interrupt at once. The bytes go to R, which keeps the partial line: no
// buffer lives here. Loaded with the fd redirection (same module) through
// .C, so every argument is a pointer and nothing of R's headers is needed.
#include <poll.h>
#include <unistd.h>

#include <cerrno>

extern "C" {

// .C("o4s_r_read_some", fd, wait_ms, buffer = raw(n), n, count = 0L):
// count > 0 bytes read into buffer; 0 at the end of the stream; -1 when
// nothing came (wait_ms passed, or a signal: R checks for an interrupt);
// otherwise minus the errno of the failed read. wait_ms < 0 waits until
// data, the end or a signal.
void o4s_r_read_some(int* fd, int* wait_ms, unsigned char* buffer, int* capacity, int* count) {
  pollfd entry{*fd, POLLIN, 0};
  const int ready = ::poll(&entry, 1, *wait_ms);
  if (ready == 0 || (ready < 0 && errno == EINTR)) {
    *count = -1;
    return;
  }
  if (ready < 0) {
    *count = -errno;
    return;
  }
  // Readable, hung up or failed: read() says which (POLLHUP with data left
  // still reads the data first).
  const ssize_t got = ::read(*fd, buffer, static_cast<size_t>(*capacity));
  if (got >= 0) {
    *count = static_cast<int>(got);
  } else {
    *count = errno == EINTR || errno == EAGAIN ? -1 : -errno;
  }
}

}  // extern "C"
