// openai4s-jupyter-kernel: what a kernelspec starts. It listens on the
// connection file's five ports at once, then execs the kernel itself
// (openai4s-jupyter-kernel-core, beside it) with those sockets.
//
// Why: a Jupyter client connects a few milliseconds after it starts the
// kernel, before the kernel has loaded its 48 shared libraries and bound
// its ports (11 ms). libzmq answers a refused connection by trying again
// only after its 100 ms reconnect interval, so every start paid 100 ms of
// waiting. This program needs only libc and libstdc++; a connection that
// comes before the kernel is up waits in the listening socket's backlog,
// and the kernel's ZeroMQ sockets take these sockets over (ZMQ_USE_FD).
//
// Anything it cannot do (no connection file, another transport, a port in
// use) it leaves to the kernel, which then binds, or fails to, itself.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace {

constexpr const char* kCoreName = "openai4s-jupyter-kernel-core";
// libzmq's own default backlog (ZMQ_BACKLOG).
constexpr int kBacklog = 100;
constexpr off_t kMaxConnectionFile = 64 << 10;
constexpr const char* kPortNames[] = {"shell_port", "control_port", "stdin_port", "hb_port",
                                      "iopub_port"};

// The last one given, as the kernel's own flag parsing takes it.
std::string connection_file_of(int argc, char** argv) {
  std::string path;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "-f") == 0 || std::strcmp(argv[i], "--connection-file") == 0) {
      path = argv[++i];
    }
  }
  return path;
}

// Only a regular file: the kernel reads it again, and a pipe read here
// would be empty there (a FIFO with no writer would block here).
nlohmann::json read_json(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return nullptr;
  struct stat st {};
  std::string text;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size <= kMaxConnectionFile) {
    text.resize(static_cast<std::size_t>(st.st_size));
    ssize_t n = ::read(fd, text.data(), text.size());
    text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  }
  ::close(fd);
  return nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
}

// A socket listening on ip:port, or -1 (errno says why).
int listen_on(const in_addr& ip, int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);  // inherited by the exec
  if (fd < 0) return -1;
  int on = 1;
  // As libzmq sets it on the sockets it binds itself.
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  address.sin_addr = ip;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(fd, kBacklog) != 0) {
    int saved = errno;
    ::close(fd);
    errno = saved;
    return -1;
  }
  return fd;
}

// The five listening sockets as "3,4,5,6,7", or "" (then none is open).
std::string listen_early(const std::string& connection_file) {
  if (connection_file.empty()) return {};
  nlohmann::json config = read_json(connection_file);
  if (!config.is_object()) return {};
  auto transport = config.find("transport");
  if (transport != config.end() && !(transport->is_string() && *transport == "tcp")) return {};
  auto ip_text = config.find("ip");
  in_addr ip{};
  if (ip_text == config.end() || !ip_text->is_string() ||
      ::inet_pton(AF_INET, ip_text->get<std::string>().c_str(), &ip) != 1) {
    return {};
  }
  // The kernel hands a socket over only to the endpoint spelled as the
  // socket's own address: any other spelling is left to the kernel.
  char canonical[INET_ADDRSTRLEN] = {};
  if (::inet_ntop(AF_INET, &ip, canonical, sizeof canonical) == nullptr ||
      ip_text->get<std::string>() != canonical) {
    return {};
  }
  std::vector<int> fds;
  for (const char* name : kPortNames) {
    auto port = config.find(name);
    int fd = -1;
    if (port != config.end() && port->is_number_integer() && *port > 0 && *port < 65536) {
      fd = listen_on(ip, port->get<int>());
    }
    if (fd < 0) {
      for (int open : fds) ::close(open);
      return {};
    }
    fds.push_back(fd);
  }
  std::string list;
  for (int fd : fds) list += (list.empty() ? "" : ",") + std::to_string(fd);
  return list;
}

std::string core_path() {
  char self[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return {};
  std::string path(self, static_cast<std::size_t>(n));
  return path.substr(0, path.rfind('/') + 1) + kCoreName;
}

}  // namespace

int main(int argc, char** argv) {
  std::string core = core_path();
  if (core.empty() || ::access(core.c_str(), X_OK) != 0) {
    std::fprintf(stderr, "openai4s-jupyter-kernel: %s was not found beside this launcher\n",
                 kCoreName);
    return 127;
  }
  std::vector<std::string> args(argv, argv + argc);
  if (std::string fds = listen_early(connection_file_of(argc, argv)); !fds.empty()) {
    args.insert(args.begin() + 1, {"--listening-fds", fds});
  }
  std::vector<char*> exec_argv;
  for (std::string& arg : args) exec_argv.push_back(arg.data());
  exec_argv.push_back(nullptr);
  // argv[0] stays the kernelspec's: `ps` and clients see the kernel's name.
  ::execv(core.c_str(), exec_argv.data());
  std::fprintf(stderr, "openai4s-jupyter-kernel: exec %s: %s\n", core.c_str(),
               std::strerror(errno));
  return 127;
}
