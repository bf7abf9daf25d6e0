#include "connection_guard.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace o4s::jupyter_app {

namespace {

// Bytes read per filtered recv, and reads per call while a cut message is
// swallowed (so a flood is skipped in large steps, not one poll each).
constexpr std::size_t kFilteredRead = 64 << 10;
constexpr int kSwallowReads = 64;

struct Connection {
  Connection(const struct stat& st, const MessageBounds& bounds)
      : device(st.st_dev), inode(st.st_ino), filter(bounds) {}
  // The socket's identity: a descriptor number reused after libzmq closed
  // the connection names another file, which is not filtered.
  dev_t device;
  ino_t inode;
  ZmtpFilter filter;
  std::string outbox;  // filtered bytes libzmq has not read yet
  std::size_t outbox_at = 0;
  bool broken = false;
};

// Only libzmq's I/O thread accepts and reads these connections; the lock
// is for other threads' recv on their own descriptors.
std::mutex& table_mutex() {
  static auto* mutex = new std::mutex;
  return *mutex;
}
std::unordered_map<int, std::unique_ptr<Connection>>& table() {
  static auto* connections = new std::unordered_map<int, std::unique_ptr<Connection>>;
  return *connections;
}

// "5555" for 127.0.0.1:5555, and the trailing digits of an ipc path.
std::string local_port(int fd) {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) return {};
  if (address.ss_family == AF_INET) {
    return std::to_string(ntohs(reinterpret_cast<sockaddr_in*>(&address)->sin_port));
  }
  if (address.ss_family == AF_INET6) {
    return std::to_string(ntohs(reinterpret_cast<sockaddr_in6*>(&address)->sin6_port));
  }
  if (address.ss_family == AF_UNIX) {
    std::string path(reinterpret_cast<sockaddr_un*>(&address)->sun_path);
    std::size_t start = path.size();
    while (start > 0 && path[start - 1] >= '0' && path[start - 1] <= '9') --start;
    return path.substr(start);
  }
  return {};
}

bool same_file(const Connection& connection, int fd) {
  struct stat st {};
  return ::fstat(fd, &st) == 0 && st.st_dev == connection.device && st.st_ino == connection.inode;
}

void log_cut(const Connection& connection, int fd) {
  std::uint64_t cuts = connection.filter.cut_messages();
  if (cuts > 100 && cuts % 1000 != 0) return;
  std::fprintf(stderr,
               "openai4s-jupyter-kernel: dropped a message over its bounds (parts, bytes) "
               "from connection %d (%llu so far)\n",
               fd, static_cast<unsigned long long>(cuts));
}

// The peer closed or broke the connection: libzmq drops what it held of an
// unfinished message, so the shared budget gets it back now, not when the
// descriptor number is reused.
ssize_t note_read(Connection& connection, ssize_t n) {
  if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
    connection.filter.release();
  }
  return n;
}

ssize_t hand_out(Connection& connection, void* buffer, std::size_t size) {
  std::size_t left = connection.outbox.size() - connection.outbox_at;
  std::size_t n = std::min(size, left);
  std::memcpy(buffer, connection.outbox.data() + connection.outbox_at, n);
  connection.outbox_at += n;
  if (connection.outbox_at == connection.outbox.size()) {
    connection.outbox.clear();
    connection.outbox_at = 0;
  }
  return static_cast<ssize_t>(n);
}

// Reads through the filter until there is something for libzmq, the peer
// has nothing more now, or the peer is cut off.
ssize_t filtered_read(Connection& connection, int fd, void* buffer, std::size_t size, int flags) {
  static thread_local std::vector<char> scratch(kFilteredRead);
  for (int reads = 0; reads < kSwallowReads; ++reads) {
    const std::size_t want = std::min(size, scratch.size());
    ssize_t n = real::recv(fd, scratch.data(), want, flags);
    if (n <= 0) return note_read(connection, n);
    const std::uint64_t cuts = connection.filter.cut_messages();
    if (connection.filter.feed(std::string_view(scratch.data(), static_cast<std::size_t>(n)),
                               connection.outbox) == ZmtpFilter::Outcome::kDisconnect) {
      std::fprintf(stderr,
                   "openai4s-jupyter-kernel: disconnected a peer that does not speak ZMTP 3 "
                   "within the bounds (connection %d)\n",
                   fd);
      connection.broken = true;
      errno = ECONNRESET;
      return -1;
    }
    if (connection.filter.cut_messages() != cuts) log_cut(connection, fd);
    if (!connection.outbox.empty()) return hand_out(connection, buffer, size);
    if (static_cast<std::size_t>(n) < want) break;  // the peer has nothing more now
  }
  // All swallowed: libzmq polls again (level-triggered) when more comes.
  errno = EAGAIN;
  return -1;
}

}  // namespace

void note_accepted(int fd) {
  if (fd < 0) return;
  const MessageBounds* bounds = bounds_for_port(local_port(fd));
  struct stat st {};
  std::lock_guard lock(table_mutex());
  table().erase(fd);
  if (bounds == nullptr || ::fstat(fd, &st) != 0) return;
  table().emplace(fd, std::make_unique<Connection>(st, *bounds));
}

ssize_t guarded_recv_bytes(int fd, void* buffer, std::size_t size, int flags) {
  std::unique_lock lock(table_mutex());
  auto it = table().find(fd);
  if (it == table().end() || (flags & MSG_PEEK) != 0) {
    lock.unlock();
    return real::recv(fd, buffer, size, flags);
  }
  if (!same_file(*it->second, fd)) {
    table().erase(it);
    lock.unlock();
    return real::recv(fd, buffer, size, flags);
  }
  Connection& connection = *it->second;
  if (connection.broken) {
    errno = ECONNRESET;
    return -1;
  }
  if (!connection.outbox.empty()) return hand_out(connection, buffer, size);
  // A frame body being kept goes straight into libzmq's buffer (a large
  // message's body is read into the message itself).
  if (std::uint64_t passing = connection.filter.passing_body(); passing > 0) {
    ssize_t n = real::recv(fd, buffer,
                           static_cast<std::size_t>(std::min<std::uint64_t>(size, passing)), flags);
    if (n > 0) connection.filter.passed(static_cast<std::uint64_t>(n));
    return note_read(connection, n);
  }
  return filtered_read(connection, fd, buffer, size, flags);
}

}  // namespace o4s::jupyter_app
