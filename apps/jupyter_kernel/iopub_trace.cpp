#include "iopub_trace.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace o4s::jupyter_app {

namespace {

using Clock = std::chrono::steady_clock;

std::atomic<Clock::rep> bound_at{0};

long long ms_since_bind() {
  auto since = Clock::now().time_since_epoch().count() - bound_at.load(std::memory_order_relaxed);
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::duration(since)).count();
}

// The inode of the TCP socket whose local port is `port` and whose remote
// port is `remote_port` (the peer's own end of a loopback connection), from
// /proc/net/tcp and tcp6; 0 if none is listed.
unsigned long inode_of_local_end(unsigned port, unsigned remote_port) {
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(table);
    std::string line;
    std::getline(in, line);  // the column names
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout;
      unsigned long inode = 0;
      fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >>
          timeout >> inode;
      auto port_of = [](const std::string& address) {
        auto colon = address.rfind(':');
        return colon == std::string::npos
                   ? 0u
                   : static_cast<unsigned>(std::strtoul(address.c_str() + colon + 1, nullptr, 16));
      };
      if (port_of(local) == port && port_of(remote) == remote_port) return inode;
    }
  }
  return 0;
}

// "pid N (comm)" of the process holding socket `inode`, by walking
// /proc/*/fd (the kernel runs as the same user as its clients in tests).
std::string owner_of_socket(unsigned long inode) {
  if (inode == 0) return "owner unknown (not in /proc/net/tcp)";
  const std::string wanted = "socket:[" + std::to_string(inode) + "]";
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return "owner unknown (no /proc)";
  std::string found = "owner unknown (no process holds it)";
  while (dirent* entry = ::readdir(proc)) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    const std::string fd_dir = std::string("/proc/") + entry->d_name + "/fd";
    DIR* fds = ::opendir(fd_dir.c_str());
    if (fds == nullptr) continue;
    bool holds = false;
    while (dirent* fd = ::readdir(fds)) {
      char target[64] = {};
      const std::string link = fd_dir + "/" + fd->d_name;
      ssize_t size = ::readlink(link.c_str(), target, sizeof target - 1);
      if (size > 0 && wanted == std::string(target, static_cast<std::size_t>(size))) {
        holds = true;
        break;
      }
    }
    ::closedir(fds);
    if (holds) {
      std::ifstream comm(std::string("/proc/") + entry->d_name + "/comm");
      std::string name;
      std::getline(comm, name);
      found = std::string("pid ") + entry->d_name + " (" + name + ")";
      break;
    }
  }
  ::closedir(proc);
  return found;
}

// Reports an accepted connection at once (the peer's address), then which
// process owns the peer's end, which takes a walk over /proc.
void report_peer(int fd) {
  sockaddr_storage peer{}, local{};
  socklen_t peer_size = sizeof peer, local_size = sizeof local;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_size) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_size) != 0 ||
      peer.ss_family != AF_INET) {
    // A local (ipc://) peer names its process itself.
    ucred credentials{};
    socklen_t size = sizeof credentials;
    const bool named = peer.ss_family == AF_UNIX &&
                       ::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &size) == 0;
    trace_iopub(("accepted fd " + std::to_string(fd) +
                 (named ? " from local pid " + std::to_string(credentials.pid)
                        : std::string(" (peer gone or not IPv4)")))
                    .c_str());
    return;
  }
  const auto& peer_in = reinterpret_cast<const sockaddr_in&>(peer);
  const auto& local_in = reinterpret_cast<const sockaddr_in&>(local);
  char address[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &peer_in.sin_addr, address, sizeof address);
  const unsigned peer_port = ntohs(peer_in.sin_port);
  const unsigned local_port = ntohs(local_in.sin_port);
  const std::string peer_name = std::string(address) + ":" + std::to_string(peer_port);
  trace_iopub(("accepted fd " + std::to_string(fd) + " from " + peer_name + " on port " +
               std::to_string(local_port))
                  .c_str());
  trace_iopub(
      ("peer " + peer_name + " is " + owner_of_socket(inode_of_local_end(peer_port, local_port)))
          .c_str());
}

// Reads the monitor's events until the context ends (ETERM), then closes
// its socket so that zmq_ctx_term can finish. It must not stop earlier:
// libzmq's I/O thread sends each event to this socket and would block
// once nobody reads it, so an interrupted read (EINTR) is retried.
void report_events(void* events) {
  for (;;) {
    zmq_msg_t head;
    zmq_msg_init(&head);
    if (zmq_msg_recv(&head, events, 0) < 0) {
      zmq_msg_close(&head);
      if (zmq_errno() == EINTR) continue;
      break;
    }
    std::uint16_t event = 0;
    std::uint32_t value = 0;
    if (zmq_msg_size(&head) >= 6) {
      std::memcpy(&event, zmq_msg_data(&head), 2);
      std::memcpy(&value, static_cast<const char*>(zmq_msg_data(&head)) + 2, 4);
    }
    zmq_msg_close(&head);
    zmq_msg_t endpoint;
    zmq_msg_init(&endpoint);
    while (zmq_msg_recv(&endpoint, events, 0) < 0 && zmq_errno() == EINTR) {
    }
    zmq_msg_close(&endpoint);
    if (event == ZMQ_EVENT_ACCEPTED) {
      report_peer(static_cast<int>(value));
    } else if (event == ZMQ_EVENT_DISCONNECTED) {
      trace_iopub(("disconnected fd " + std::to_string(value)).c_str());
    } else if (event == ZMQ_EVENT_HANDSHAKE_SUCCEEDED) {
      trace_iopub("handshake succeeded");
    } else if (event == ZMQ_EVENT_MONITOR_STOPPED) {
      break;
    }
  }
  int zero = 0;
  zmq_setsockopt(events, ZMQ_LINGER, &zero, sizeof zero);
  zmq_close(events);
}

}  // namespace

bool iopub_trace_on() {
  static const bool on = std::getenv("OPENAI4S_JUPYTER_TRACE_IOPUB") != nullptr;
  return on;
}

void trace_iopub(const char* text) {
  std::fprintf(stderr, "openai4s-jupyter-kernel: iopub +%lld ms: %s\n", ms_since_bind(), text);
}

void watch_iopub(void* context, void* socket) {
  bound_at.store(Clock::now().time_since_epoch().count(), std::memory_order_relaxed);
  if (!iopub_trace_on() || context == nullptr) return;
  constexpr const char* kEndpoint = "inproc://openai4s-iopub-monitor";
  if (zmq_socket_monitor(
          socket, kEndpoint,
          ZMQ_EVENT_ACCEPTED | ZMQ_EVENT_DISCONNECTED | ZMQ_EVENT_HANDSHAKE_SUCCEEDED) != 0) {
    return;
  }
  void* events = zmq_socket(context, ZMQ_PAIR);
  if (events == nullptr) return;
  if (zmq_connect(events, kEndpoint) != 0) {
    zmq_close(events);
    return;
  }
  std::thread(report_events, events).detach();
  trace_iopub("bound; watching connections");
}

void trace_subscription(const unsigned char* data, std::size_t size) {
  if (!iopub_trace_on()) return;
  std::string text = size > 0 && data[0] == 1 ? "subscription" : "unsubscription";
  text += " to topic '" +
          std::string(reinterpret_cast<const char*>(data) + (size > 0 ? 1 : 0),
                      size > 0 ? size - 1 : 0) +
          "'";
  trace_iopub(text.c_str());
}

void trace_sent_frame(zmq_msg_t* message, int flags) {
  if (!iopub_trace_on()) return;
  // Only the publisher thread sends on iopub.
  static bool first_frame = true;
  static unsigned messages = 0;
  constexpr unsigned kReported = 12;
  if (first_frame && messages < kReported) {
    const auto* data = static_cast<const char*>(zmq_msg_data(message));
    std::string topic(data, std::min<std::size_t>(zmq_msg_size(message), 80));
    trace_iopub(
        ("sends message " + std::to_string(messages + 1) + ", topic '" + topic + "'").c_str());
  }
  first_frame = (flags & ZMQ_SNDMORE) == 0;
  if (first_frame) ++messages;
}

}  // namespace o4s::jupyter_app
