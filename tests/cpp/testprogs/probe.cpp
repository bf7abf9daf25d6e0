// A helper program the integration tests spawn. Each mode does one small,
// observable thing at the OS boundary and reports on stdout (fd 1) with raw
// write(2), so nothing sits in a stdio buffer when the test reads or kills it.
//
//   probe status             print the Sig* lines of /proc/self/status
//   probe fds                print the open fd numbers, space separated
//   probe cwd                print the working directory
//   probe exit <code>        exit with <code>
//   probe wait-stdin         block until stdin reaches end of stream, exit 0
//   probe pause              block forever (default dispositions apply)
//   probe stderr-flood <n>   write n patterned bytes to stderr, then "done"
//   probe grandchild [exit]  fork a child that blocks forever in this process
//                            group, print its pid, then block (or exit 0)
//   probe pdeathsig          arm PR_SET_PDEATHSIG=SIGKILL, print "armed",
//                            then block until stdin reaches end of stream
//   probe shutdown-aware     echo stdin lines to stderr; exit 0 on a line
//                            containing "shutdown"
//   probe ignore-sigint      catch SIGINT (report it on stderr), fork a
//                            blocking grandchild, print its pid, block forever
#include <dirent.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <string>
#include <string_view>

namespace {

void write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      std::_Exit(90);
    }
    text.remove_prefix(static_cast<std::size_t>(n));
  }
}

[[noreturn]] void block_forever() {
  for (;;) ::pause();
}

int mode_status() {
  std::ifstream in("/proc/self/status");
  std::string line;
  std::string out;
  while (std::getline(in, line)) {
    if (line.rfind("Sig", 0) == 0) out += line + "\n";
  }
  write_all(1, out);
  return 0;
}

int mode_fds() {
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) return 91;
  const int own = ::dirfd(dir);
  std::set<int> fds;
  while (dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    int fd = std::atoi(entry->d_name);
    if (fd != own) fds.insert(fd);
  }
  ::closedir(dir);
  std::string out;
  for (int fd : fds) out += std::to_string(fd) + " ";
  write_all(1, out + "\n");
  return 0;
}

int mode_cwd() {
  char buffer[4096];
  if (::getcwd(buffer, sizeof buffer) == nullptr) return 92;
  write_all(1, std::string(buffer) + "\n");
  return 0;
}

int mode_wait_stdin() {
  char buffer[256];
  for (;;) {
    ssize_t n = ::read(0, buffer, sizeof buffer);
    if (n == 0) return 0;
    if (n < 0 && errno != EINTR) return 93;
  }
}

// Byte i of the flood; a period of 251 (prime) makes any window of the
// stream identify its own offset.
char flood_byte(std::size_t i) { return static_cast<char>('!' + (i % 251) % 90); }

int mode_stderr_flood(std::size_t total) {
  std::string chunk;
  for (std::size_t offset = 0; offset < total; offset += chunk.size()) {
    chunk.clear();
    for (std::size_t i = offset; i < total && chunk.size() < 4096; ++i) {
      chunk.push_back(flood_byte(i));
    }
    write_all(2, chunk);
  }
  write_all(1, "done\n");
  return 0;
}

pid_t fork_blocking_grandchild() {
  pid_t pid = ::fork();
  if (pid < 0) std::_Exit(94);
  if (pid == 0) {
    // Close the pipes to the test so only the leader holds them: the test
    // then sees end of stream exactly when the leader goes.
    for (int fd = 0; fd <= 2; ++fd) ::close(fd);
    block_forever();
  }
  return pid;
}

int mode_grandchild(bool leader_exits) {
  pid_t pid = fork_blocking_grandchild();
  write_all(1, std::to_string(pid) + "\n");
  if (leader_exits) return 0;
  block_forever();
}

int mode_pdeathsig() {
  const pid_t parent = ::getppid();
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) return 95;
  // The parent thread may have gone between fork and prctl: then the signal
  // would never come, so report that instead of arming silently.
  if (::getppid() != parent) return 96;
  write_all(1, "armed\n");
  return mode_wait_stdin();
}

int mode_shutdown_aware() {
  std::string pending;
  char buffer[256];
  for (;;) {
    ssize_t n = ::read(0, buffer, sizeof buffer);
    if (n == 0) return 3;  // end of stream without a shutdown frame
    if (n < 0) {
      if (errno == EINTR) continue;
      return 97;
    }
    pending.append(buffer, static_cast<std::size_t>(n));
    for (auto nl = pending.find('\n'); nl != std::string::npos; nl = pending.find('\n')) {
      std::string line = pending.substr(0, nl + 1);
      pending.erase(0, nl + 1);
      write_all(2, "read: " + line);
      if (line.find("shutdown") != std::string::npos) return 0;
    }
  }
}

void on_sigint(int) {
  constexpr char kMessage[] = "got SIGINT\n";
  [[maybe_unused]] ssize_t n = ::write(2, kMessage, sizeof kMessage - 1);
}

int mode_ignore_sigint() {
  struct sigaction action {};
  action.sa_handler = on_sigint;
  ::sigemptyset(&action.sa_mask);
  if (::sigaction(SIGINT, &action, nullptr) != 0) return 98;
  pid_t pid = fork_blocking_grandchild();
  write_all(1, std::to_string(pid) + "\n");
  block_forever();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const std::string_view mode = argv[1];
  const char* arg = argc > 2 ? argv[2] : "";
  if (mode == "status") return mode_status();
  if (mode == "fds") return mode_fds();
  if (mode == "cwd") return mode_cwd();
  if (mode == "exit") return std::atoi(arg);
  if (mode == "wait-stdin") return mode_wait_stdin();
  if (mode == "pause") block_forever();
  if (mode == "stderr-flood") return mode_stderr_flood(std::strtoull(arg, nullptr, 10));
  if (mode == "grandchild") return mode_grandchild(std::string_view(arg) == "exit");
  if (mode == "pdeathsig") return mode_pdeathsig();
  if (mode == "shutdown-aware") return mode_shutdown_aware();
  if (mode == "ignore-sigint") return mode_ignore_sigint();
  return 2;
}
