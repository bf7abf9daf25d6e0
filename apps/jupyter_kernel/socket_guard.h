// The kernel's sockets against a local process that can reach their ports
// but has no key (hooked into libzmq by zmq_interposition.cpp):
//
// - Every socket has a bound on the size of one frame (ZMQ_MAXMSGSIZE: a
//   peer that announces a bigger one is disconnected before anything is
//   allocated) and on the messages queued per connection (ZMQ_RCVHWM).
// - shell, control and stdin hand xeus only messages whose signature is
//   exact (message_signature.h); the rest are dropped unparsed. A poll on
//   shell reports it readable only once a signed message is there.
// - stdin traffic outside an input wait is discarded (as ipykernel flushes
//   it), and shell is read (its signed messages kept for xeus) while the
//   shell thread runs a cell: a sweeper thread does both every
//   kSweepInterval, and stdin is flushed before each input_request. Before
//   this, xeus never read stdin between prompts: its queue held whatever
//   came (64 MiB messages, never freed), and the first garbage to arrive
//   answered the next input() with "".
//
// - A message is bounded in parts and bytes below libzmq, which keeps a
//   multipart message whole until its last frame (connection_guard.h).
//
// What is not bounded here: between two sweeps, each connection may queue
// up to its high-water mark of bounded messages, and the number of
// connections is not bounded (each may hold one message in flight).
#pragma once

#include <zmq.h>

#include <chrono>
#include <cstdint>
#include <string>

namespace o4s::jupyter_app {

// From the connection file, before the kernel creates its sockets.
struct GuardSettings {
  std::string shell_port;
  std::string control_port;
  std::string stdin_port;
  std::string hb_port;
  std::string iopub_port;
  std::string signature_scheme;
  std::string key;
};

// A frame in flight is held whole, so a connection costs up to one frame
// of its socket's bound: a cell's code up to 16 MiB.
inline constexpr std::int64_t kMaxShellFrame = 16 << 20;
inline constexpr std::int64_t kMaxControlFrame = 1 << 20;
inline constexpr std::int64_t kMaxStdinFrame = 1 << 20;  // one line typed
inline constexpr std::int64_t kMaxHeartbeatFrame = 64 << 10;
// Jupyter clients subscribe to everything (an empty topic); libzmq keeps a
// subscription in a trie of one node per byte.
inline constexpr std::int64_t kMaxSubscriptionFrame = 1 << 10;

// One message (below libzmq, connection_guard.h): its frames, and its
// bytes: one frame's bound and as much again, up to 1 MiB, for the rest of
// the message (a cell's code, then its header, metadata and signature).
inline constexpr std::uint32_t kMaxMessageParts = 1024;
inline constexpr std::int64_t kMaxMessageSlack = 1 << 20;
// Unfinished messages of every connection together: many connections each
// holding one message under its own bound would otherwise add up without
// end. Above the largest message one socket accepts (17 MiB on shell).
inline constexpr std::uint64_t kMaxBytesInFlight = 48 << 20;

inline constexpr std::chrono::milliseconds kSweepInterval{20};

void set_guard_settings(GuardSettings settings);

// The real libzmq functions (zmq_interposition.cpp).
namespace real {
int msg_recv(zmq_msg_t* message, void* socket, int flags);
int msg_send(zmq_msg_t* message, void* socket, int flags);
int poll(zmq_pollitem_t* items, int count, long timeout);
}  // namespace real

// zmq_bind: sets the bounds of the socket bound to one of the kernel's
// ports (before the bind, so every connection gets them).
void guard_before_bind(void* socket, const char* endpoint);
// zmq_msg_recv, zmq_poll, zmq_msg_send: what the kernel calls, guarded.
int guarded_recv(zmq_msg_t* message, void* socket, int flags);
int guarded_poll(zmq_pollitem_t* items, int count, long timeout);
int guarded_send(zmq_msg_t* message, void* socket, int flags);
// zmq_close: the socket is forgotten (the sweeper no longer reads it).
void guard_before_close(void* socket);
// Once the kernel's sockets are bound.
void start_sweeper();

}  // namespace o4s::jupyter_app
