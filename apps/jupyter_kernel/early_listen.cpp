#include "early_listen.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zmq.h>

#include <charconv>
#include <map>
#include <mutex>

namespace o4s::jupyter_app {

namespace {

struct Adopted {
  std::mutex mutex;
  std::map<int, int> fd_by_port;
};

Adopted& adopted() {
  static Adopted instance;
  return instance;
}

// The local port of a listening TCP socket, or 0 when `fd` is not one.
int listening_port(int fd) {
  int listening = 0;
  socklen_t length = sizeof listening;
  if (::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &length) != 0 || !listening) return 0;
  int type = 0;
  length = sizeof type;
  if (::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &length) != 0 || type != SOCK_STREAM) return 0;
  sockaddr_storage address{};
  length = sizeof address;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) return 0;
  if (address.ss_family == AF_INET) {
    return ntohs(reinterpret_cast<sockaddr_in*>(&address)->sin_port);
  }
  if (address.ss_family == AF_INET6) {
    return ntohs(reinterpret_cast<sockaddr_in6*>(&address)->sin6_port);
  }
  return 0;
}

}  // namespace

bool adopt_listening_fds(std::string_view list) {
  Adopted& a = adopted();
  std::lock_guard lock(a.mutex);
  if (list.empty()) return true;  // no launcher
  for (;;) {
    std::size_t comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    int fd = -1;
    auto [end, error] = std::from_chars(item.data(), item.data() + item.size(), fd);
    if (item.empty() || error != std::errc() || end != item.data() + item.size() || fd < 3) {
      return false;
    }
    if (int port = listening_port(fd); port > 0 && !a.fd_by_port.contains(port)) {
      ::fcntl(fd, F_SETFD, FD_CLOEXEC);
      a.fd_by_port[port] = fd;
    }
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return true;
}

void use_listening_fd(void* socket, std::string_view endpoint) {
  if (endpoint.substr(0, 6) != "tcp://") return;
  std::size_t colon = endpoint.rfind(':');
  int port = 0;
  std::string_view digits = endpoint.substr(colon + 1);
  auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
  if (colon == std::string_view::npos || error != std::errc() ||
      end != digits.data() + digits.size()) {
    return;
  }
  Adopted& a = adopted();
  std::lock_guard lock(a.mutex);
  auto it = a.fd_by_port.find(port);
  if (it == a.fd_by_port.end()) return;
  // The ZeroMQ socket owns it from here (and closes it with itself).
  if (::zmq_setsockopt(socket, ZMQ_USE_FD, &it->second, sizeof it->second) == 0) {
    a.fd_by_port.erase(it);
  }
}

void close_unused_listening_fds() {
  Adopted& a = adopted();
  std::lock_guard lock(a.mutex);
  for (const auto& [port, fd] : a.fd_by_port) ::close(fd);
  a.fd_by_port.clear();
}

}  // namespace o4s::jupyter_app
