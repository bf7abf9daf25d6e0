// The kernel's iopub messages wait for its first subscriber.
//
// A PUB socket drops what it publishes while no subscriber has subscribed,
// and a subscription needs a round trip after the connection: a client that
// sends a request as soon as it can (jupyter console 6.4 does not wait for
// iopub) can lose that request's busy/stream/idle messages and then wait
// forever for idle. This happens to every kernel, ipykernel too. Here the
// iopub socket is made an XPUB, which hands the kernel each subscription,
// and the first message waits until one has arrived (or kIopubHoldLimit has
// passed, once: a kernel nobody listens to is never held again). Messages
// published meanwhile queue in xeus's in-process pipe, in order (up to its
// high-water mark of 1000; without the hold they would all be lost).
#pragma once

#include <zmq.h>

#include <chrono>

namespace o4s::jupyter_app {

inline constexpr std::chrono::milliseconds kIopubHoldLimit{10000};

// zmq_socket: the type the kernel creates in place of `type` (in `context`).
int socket_type_for(void* context, int type);
// zmq_bind: a publishing socket bound to a network endpoint is iopub.
void note_bound(void* socket, const char* endpoint);
// zmq_msg_send: blocks the first send on iopub until a subscription came.
void before_send(void* socket, zmq_msg_t* message, int flags);
// Ends the hold now, from any thread (the kernel is stopping).
void release_hold();

}  // namespace o4s::jupyter_app
