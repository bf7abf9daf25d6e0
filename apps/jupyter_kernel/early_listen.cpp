#include "early_listen.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zmq.h>

#include <charconv>
#include <map>
#include <mutex>
#include <set>
#include <vector>

namespace o4s::jupyter_app {

namespace {

// One per port of the connection file: shell, control, stdin, hb, iopub.
constexpr std::size_t kPorts = 5;

struct Adopted {
  std::mutex mutex;
  std::map<std::string, int> fd_by_endpoint;  // "tcp://127.0.0.1:5555"
};

Adopted& adopted() {
  static Adopted instance;
  return instance;
}

// "tcp://ADDRESS:PORT" of a listening IPv4 TCP socket, or "" when `fd` is
// not one.
std::string listening_endpoint(int fd) {
  int listening = 0;
  socklen_t length = sizeof listening;
  if (::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &length) != 0 || !listening) {
    return {};
  }
  int type = 0;
  length = sizeof type;
  if (::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &length) != 0 || type != SOCK_STREAM) {
    return {};
  }
  sockaddr_in address{};
  length = sizeof address;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0 ||
      address.sin_family != AF_INET) {
    return {};
  }
  char text[INET_ADDRSTRLEN] = {};
  if (::inet_ntop(AF_INET, &address.sin_addr, text, sizeof text) == nullptr) return {};
  return "tcp://" + std::string(text) + ":" + std::to_string(ntohs(address.sin_port));
}

std::vector<int> parse_fds(std::string_view list) {
  std::vector<int> fds;
  for (;;) {
    std::size_t comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    int fd = -1;
    auto [end, error] = std::from_chars(item.data(), item.data() + item.size(), fd);
    if (item.empty() || error != std::errc() || end != item.data() + item.size() || fd < 3) {
      return {};
    }
    fds.push_back(fd);
    if (comma == std::string_view::npos) return fds;
    list.remove_prefix(comma + 1);
  }
}

}  // namespace

bool adopt_listening_fds(std::string_view list) {
  if (list.empty()) return true;  // no launcher
  // The launcher is the one producer: five listening sockets, on five
  // ports, or nothing is taken.
  std::vector<int> fds = parse_fds(list);
  std::set<int> distinct(fds.begin(), fds.end());
  if (fds.size() != kPorts || distinct.size() != kPorts) return false;
  std::map<std::string, int> found;
  for (int fd : fds) {
    std::string endpoint = listening_endpoint(fd);
    if (endpoint.empty() || !found.emplace(endpoint, fd).second) return false;
  }
  Adopted& a = adopted();
  std::lock_guard lock(a.mutex);
  for (const auto& [endpoint, fd] : found) {
    ::fcntl(fd, F_SETFD, FD_CLOEXEC);  // never a worker's
    a.fd_by_endpoint[endpoint] = fd;
  }
  return true;
}

void use_listening_fd(void* socket, std::string_view endpoint) {
  Adopted& a = adopted();
  std::lock_guard lock(a.mutex);
  auto it = a.fd_by_endpoint.find(std::string(endpoint));
  if (it == a.fd_by_endpoint.end()) return;
  // The ZeroMQ socket owns it from here (and closes it with itself).
  if (::zmq_setsockopt(socket, ZMQ_USE_FD, &it->second, sizeof it->second) == 0) {
    a.fd_by_endpoint.erase(it);
  }
}

void close_unused_listening_fds() {
  Adopted& a = adopted();
  std::lock_guard lock(a.mutex);
  for (const auto& [endpoint, fd] : a.fd_by_endpoint) ::close(fd);
  a.fd_by_endpoint.clear();
}

}  // namespace o4s::jupyter_app
