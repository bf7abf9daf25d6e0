#include "socket_guard.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

#include "connection_guard.h"
#include "jupyter/message_signature.h"

namespace o4s::jupyter_app {

namespace {

// Indices into Guard::slots.
constexpr std::size_t kShell = 0, kControl = 1, kStdin = 2, kHeartbeat = 3, kIopub = 4, kRoles = 5;

struct FrameCloser {
  void operator()(zmq_msg_t* frame) const {
    zmq_msg_close(frame);
    delete frame;
  }
};
using Frame = std::unique_ptr<zmq_msg_t, FrameCloser>;
using Message = std::vector<Frame>;

Frame new_frame() {
  auto* frame = new zmq_msg_t;
  zmq_msg_init(frame);
  return Frame(frame);
}

// One of the kernel's sockets. xeus uses each from one thread (stdin
// shares the shell thread); the sweeper (start_sweeper) also reads shell
// and stdin while that thread is busy elsewhere. `use` orders the two:
// every libzmq call on those sockets, and everything below `socket`, is
// made holding it.
struct Slot {
  const char* name = "";
  std::atomic<void*> socket{nullptr};
  std::mutex use;
  std::deque<Message> ready;  // signed messages not yet handed to xeus
  std::size_t next_frame = 0;
  bool sending = false;  // a multipart send is under way
  bool in_wait = false;  // stdin: an input_request went out, its reply has not come
  std::uint64_t drops = 0;
};

struct Guard {
  Guard() {
    slots[kShell].name = "shell";
    slots[kControl].name = "control";
    slots[kStdin].name = "stdin";
    slots[kHeartbeat].name = "heartbeat";
    slots[kIopub].name = "iopub";
  }
  GuardSettings settings;
  std::unique_ptr<jupyter::SignatureCheck> check;
  std::array<Slot, kRoles> slots;
};

// Never destroyed: the sweeper may still run while the process exits.
Guard& guard() {
  static Guard* instance = new Guard;
  return *instance;
}

// The lock a call on `socket` takes: shell's and stdin's (see Slot); none
// for the others.
std::unique_lock<std::mutex> use_of(void* socket) {
  for (std::size_t role : {kShell, kStdin}) {
    Slot& slot = guard().slots[role];
    if (socket != nullptr && slot.socket.load(std::memory_order_acquire) == socket) {
      return std::unique_lock<std::mutex>(slot.use);
    }
  }
  return {};
}

Slot* checked_slot(void* socket) {
  if (socket == nullptr) return nullptr;
  for (std::size_t role : {kShell, kControl, kStdin}) {
    Slot& slot = guard().slots[role];
    if (slot.socket.load(std::memory_order_acquire) == socket) return &slot;
  }
  return nullptr;
}

// "tcp://127.0.0.1:5555" and "ipc://kernel-5555" both end with the port.
std::string_view trailing_port(std::string_view endpoint) {
  std::size_t start = endpoint.size();
  while (start > 0 && endpoint[start - 1] >= '0' && endpoint[start - 1] <= '9') --start;
  return endpoint.substr(start);
}

// Reads one whole message. 1: read; -1: none or an error (errno says).
int read_message(void* socket, int flags, Message& out) {
  for (;;) {
    Frame frame = new_frame();
    // A message's frames arrive together: only the first can be missing.
    if (real::msg_recv(frame.get(), socket, out.empty() ? flags : 0) < 0) return -1;
    bool more = zmq_msg_more(frame.get()) != 0;
    out.push_back(std::move(frame));
    if (!more) return 1;
  }
}

// The kernel's stderr is where a client's operator looks; a flood gets its
// first drops said one by one, then one line per thousand.
void log_drop(const char* socket_name, std::string_view why, std::uint64_t& drops) {
  ++drops;
  if (drops > 100 && drops % 1000 != 0) return;
  std::fprintf(stderr, "openai4s-jupyter-kernel: dropped a message on %s: %.*s (%llu so far)\n",
               socket_name, static_cast<int>(why.size()), why.data(),
               static_cast<unsigned long long>(drops));
}

bool signed_properly(Slot& slot, const Message& message) {
  if (!guard().check) return true;  // no connection file was read: nothing to check against
  std::vector<std::string_view> frames;
  frames.reserve(message.size());
  for (const Frame& frame : message) {
    frames.emplace_back(static_cast<const char*>(zmq_msg_data(frame.get())),
                        zmq_msg_size(frame.get()));
  }
  std::string_view why = guard().check->why_refused(frames);
  if (why.empty()) return true;
  log_drop(slot.name, why, slot.drops);
  return false;
}

// Reads what `socket` holds without waiting; keeps the signed messages
// when `keep`, drops everything otherwise.
void drain(Slot& slot, void* socket, bool keep) {
  const int saved = errno;
  for (;;) {
    Message message;
    if (read_message(socket, ZMQ_DONTWAIT, message) < 0) break;
    if (keep && signed_properly(slot, message)) slot.ready.push_back(std::move(message));
  }
  errno = saved;
}

int deliver(Slot& slot, zmq_msg_t* out) {
  Message& message = slot.ready.front();
  if (zmq_msg_move(out, message[slot.next_frame].get()) != 0) return -1;
  if (++slot.next_frame == message.size()) {
    slot.ready.pop_front();
    slot.next_frame = 0;
  }
  return static_cast<int>(zmq_msg_size(out));
}

void set_bounds(void* socket, std::int64_t max_frame, int queued) {
  zmq_setsockopt(socket, ZMQ_MAXMSGSIZE, &max_frame, sizeof max_frame);
  zmq_setsockopt(socket, ZMQ_RCVHWM, &queued, sizeof queued);
}

long remaining_ms(std::chrono::steady_clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  return left.count() > 0 ? static_cast<long>(left.count()) : 0;
}

}  // namespace

void set_guard_settings(GuardSettings settings) {
  Guard& g = guard();
  g.check = std::make_unique<jupyter::SignatureCheck>(settings.signature_scheme, settings.key);
  g.settings = std::move(settings);
}

const MessageBounds* bounds_for_port(std::string_view port) {
  static InFlightBudget in_flight(kMaxBytesInFlight);
  static const auto bounds = [](std::int64_t frame) {
    return MessageBounds{static_cast<std::uint64_t>(frame),
                         static_cast<std::uint64_t>(frame + std::min(frame, kMaxMessageSlack)),
                         kMaxMessageParts, &in_flight};
  };
  static const MessageBounds shell = bounds(kMaxShellFrame), control = bounds(kMaxControlFrame),
                             input = bounds(kMaxStdinFrame), heartbeat = bounds(kMaxHeartbeatFrame),
                             iopub = bounds(kMaxSubscriptionFrame);
  const GuardSettings& settings = guard().settings;
  if (port.empty()) return nullptr;
  if (port == settings.shell_port) return &shell;
  if (port == settings.control_port) return &control;
  if (port == settings.stdin_port) return &input;
  if (port == settings.hb_port) return &heartbeat;
  if (port == settings.iopub_port) return &iopub;
  return nullptr;
}

void guard_before_bind(void* socket, const char* endpoint) {
  if (endpoint == nullptr || std::strncmp(endpoint, "inproc://", 9) == 0) return;
  std::string_view port = trailing_port(endpoint);
  if (port.empty()) return;
  Guard& g = guard();
  // Small queues: a connection that floods waits on its own TCP buffer.
  if (port == g.settings.shell_port) {
    set_bounds(socket, kMaxShellFrame, 32);
    g.slots[kShell].socket.store(socket, std::memory_order_release);
  } else if (port == g.settings.control_port) {
    set_bounds(socket, kMaxControlFrame, 32);
    g.slots[kControl].socket.store(socket, std::memory_order_release);
  } else if (port == g.settings.stdin_port) {
    set_bounds(socket, kMaxStdinFrame, 8);
    g.slots[kStdin].socket.store(socket, std::memory_order_release);
  } else if (port == g.settings.hb_port) {
    set_bounds(socket, kMaxHeartbeatFrame, 8);
    g.slots[kHeartbeat].socket.store(socket, std::memory_order_release);
  } else if (port == g.settings.iopub_port) {
    set_bounds(socket, kMaxSubscriptionFrame, 32);
    g.slots[kIopub].socket.store(socket, std::memory_order_release);
  }
}

int guarded_recv(zmq_msg_t* message, void* socket, int flags) {
  Slot* slot = checked_slot(socket);
  if (slot == nullptr) return real::msg_recv(message, socket, flags);
  auto in_use = use_of(socket);
  while (slot->ready.empty()) {
    // Blocking (control's loop, an input wait): until a signed message
    // comes. Non-blocking (xeus's abort of queued cells): EAGAIN at once.
    Message incoming;
    if (read_message(socket, flags & ZMQ_DONTWAIT, incoming) < 0) return -1;
    if (signed_properly(*slot, incoming)) slot->ready.push_back(std::move(incoming));
  }
  int size = deliver(*slot, message);
  if (size >= 0 && zmq_msg_more(message) == 0) slot->in_wait = false;
  return size;
}

int guarded_poll(zmq_pollitem_t* items, int count, long timeout) {
  const auto n = static_cast<std::size_t>(count < 0 ? 0 : count);
  Slot* polled = nullptr;
  for (std::size_t i = 0; i < n && polled == nullptr; ++i) polled = checked_slot(items[i].socket);
  if (polled == nullptr) return real::poll(items, count, timeout);
  // Only xeus's shell thread polls a checked socket (shell, with its own
  // inproc controller). Held while it waits: the sweeper leaves shell alone
  // then, this poll reads it.
  auto in_use = use_of(polled->socket.load(std::memory_order_acquire));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout);
  for (;;) {
    bool kept = false;
    for (std::size_t i = 0; i < n; ++i) {
      Slot* slot = checked_slot(items[i].socket);
      kept = kept || (slot != nullptr && (items[i].events & ZMQ_POLLIN) && !slot->ready.empty());
    }
    long wait = kept ? 0 : (timeout < 0 ? -1 : remaining_ms(deadline));
    int rc = real::poll(items, count, wait);
    if (rc < 0) return rc;
    int ready = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (Slot* slot = checked_slot(items[i].socket)) {
        if (items[i].revents & ZMQ_POLLIN) drain(*slot, items[i].socket, true);
        items[i].revents = static_cast<short>(items[i].revents & ~ZMQ_POLLIN);
        if ((items[i].events & ZMQ_POLLIN) && !slot->ready.empty()) {
          items[i].revents = static_cast<short>(items[i].revents | ZMQ_POLLIN);
        }
      }
      if (items[i].revents != 0) ++ready;
    }
    if (ready > 0 || timeout == 0 || (timeout > 0 && remaining_ms(deadline) == 0)) return ready;
  }
}

int guarded_send(zmq_msg_t* message, void* socket, int flags) {
  auto in_use = use_of(socket);
  Slot& input = guard().slots[kStdin];
  if (in_use && socket == input.socket.load(std::memory_order_acquire)) {
    if (!input.sending) {
      // An input_request goes out: whatever stdin holds from before is
      // stale, and from now until its reply the sweeper leaves stdin alone.
      input.ready.clear();
      input.next_frame = 0;
      drain(input, socket, false);
      input.in_wait = true;
    }
    input.sending = (flags & ZMQ_SNDMORE) != 0;
  }
  return real::msg_send(message, socket, flags);
}

void guard_before_close(void* socket) {
  for (Slot& slot : guard().slots) {
    if (socket == nullptr || slot.socket.load(std::memory_order_acquire) != socket) continue;
    std::lock_guard in_use(slot.use);
    slot.socket.store(nullptr, std::memory_order_release);
    slot.ready.clear();
    slot.next_frame = 0;
  }
}

void start_sweeper() {
  static std::once_flag started;
  std::call_once(started, [] {
    std::thread([] {
      // Reads shell and stdin whenever the shell thread is busy elsewhere
      // (running a cell): shell's signed messages wait in `ready` for
      // xeus, the rest is dropped, and stdin outside an input wait is
      // dropped whole. Without it, a flood while a cell ran queued up to
      // the high-water mark of bounded frames per connection (1.5 GiB
      // from 16 connections in a test).
      for (;;) {
        for (std::size_t role : {kShell, kStdin}) {
          Slot& slot = guard().slots[role];
          std::unique_lock in_use(slot.use, std::try_to_lock);
          void* socket = slot.socket.load(std::memory_order_acquire);
          if (!in_use || socket == nullptr || slot.in_wait || slot.sending) continue;
          drain(slot, socket, role == kShell);
        }
        std::this_thread::sleep_for(kSweepInterval);
      }
    }).detach();
  });
}

}  // namespace o4s::jupyter_app
