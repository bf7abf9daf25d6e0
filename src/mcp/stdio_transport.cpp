#include "mcp/stdio_transport.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "base/write_all.h"

namespace o4s::mcp {

namespace {

// One message may carry a 16 MiB file as base64 (about 22 MiB); longer
// lines are refused without being kept.
constexpr std::size_t kMaxLineBytes = 32u << 20;

// A message that fails to be handled costs the client an error answer,
// never the server its life.
void handle_guarded(McpServer& server, const std::shared_ptr<Session>& session,
                    const std::string& text) {
  try {
    server.handle_text(session, text);
  } catch (const std::exception& error) {
    session->send(error_response(nullptr, rpc_error::kInternalError,
                                 std::string("internal error: ") + error.what()));
  }
}

}  // namespace

int take_protocol_stdout() {
  int protocol = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  if (protocol < 0) return -1;
  if (::dup2(STDERR_FILENO, STDOUT_FILENO) < 0) return -1;
  return protocol;
}

Session::Writer line_writer(int fd) {
  return [fd](const std::string& message) {
    std::string line = message;
    line += '\n';
    return write_all(fd, line);
  };
}

void serve_stdio(McpServer& server, const std::shared_ptr<Session>& session) {
  std::string pending;
  bool skipping = false;  // inside a line that is over the bound
  char buffer[1 << 16];
  for (;;) {
    ssize_t n = ::read(STDIN_FILENO, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    std::size_t start = 0;
    for (std::size_t i = 0; i < static_cast<std::size_t>(n); ++i) {
      if (buffer[i] != '\n') continue;
      if (!skipping) {
        pending.append(buffer + start, i - start);
        if (!pending.empty() && pending.back() == '\r') pending.pop_back();
        if (!pending.empty()) handle_guarded(server, session, pending);
      }
      pending.clear();
      skipping = false;
      start = i + 1;
    }
    if (!skipping) pending.append(buffer + start, static_cast<std::size_t>(n) - start);
    if (!skipping && pending.size() > kMaxLineBytes) {
      pending.clear();
      pending.shrink_to_fit();
      skipping = true;
      session->send(error_response(nullptr, rpc_error::kInvalidRequest,
                                   "Invalid Request: a message over 32 MiB was refused"));
    }
  }
  session->close();
}

}  // namespace o4s::mcp
