// What OPENAI4S_JUPYTER_TRACE_IOPUB=1 prints about iopub, on stderr, one
// line each, stamped with milliseconds since iopub was bound: every TCP
// connection accepted (with the peer's address and the process that owns
// the peer's socket, found through /proc), every subscription message the
// hold reads, and the topic of the first messages sent. This is how one
// finds out who subscribed to a kernel's iopub and what it was sent.
#pragma once

#include <zmq.h>

#include <cstddef>

namespace o4s::jupyter_app {

bool iopub_trace_on();
// One stderr line, "openai4s-jupyter-kernel: iopub +<ms> ms: <text>".
void trace_iopub(const char* text);
// zmq_bind of iopub: starts the clock, and (traced) a monitor thread that
// reports each accepted connection. `context` is the socket's context.
void watch_iopub(void* context, void* socket);
// A subscription (1) or unsubscription (0) message read from iopub.
void trace_subscription(const unsigned char* data, std::size_t size);
// A frame about to be sent on iopub; the first frames of the first
// messages are reported (a message's first frame is its topic).
void trace_sent_frame(zmq_msg_t* message, int flags);

}  // namespace o4s::jupyter_app
