#include "iopub_hold.h"

#include <zmq.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "iopub_trace.h"

namespace o4s::jupyter_app {

namespace {

std::atomic<void*> iopub_socket{nullptr};
// The context of the newest publishing socket (xeus has one context).
std::atomic<void*> publisher_context{nullptr};
std::atomic<bool> released{false};

// Reads every subscription message waiting on the XPUB; true when one
// subscribes (first byte 1; 0 is an unsubscription).
bool drain_subscriptions(void* socket) {
  bool subscribed = false;
  zmq_msg_t message;
  zmq_msg_init(&message);
  while (zmq_msg_recv(&message, socket, ZMQ_DONTWAIT) >= 0) {
    const auto* data = static_cast<const unsigned char*>(zmq_msg_data(&message));
    if (zmq_msg_size(&message) > 0 && data[0] == 1) subscribed = true;
    trace_subscription(data, zmq_msg_size(&message));
  }
  zmq_msg_close(&message);
  return subscribed;
}

void wait_for_subscriber(void* socket) {
  if (released.load(std::memory_order_acquire)) {
    // libzmq queues each later subscription for the application without a
    // bound (one per subscriber coming and going); read them now and then.
    // Only the publisher thread gets here, so the counter needs no lock.
    static unsigned sends = 0;
    if (++sends % 64 == 0) (void)drain_subscriptions(socket);
    return;
  }
  // Only xeus's publisher thread sends on iopub, so only it waits here.
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + kIopubHoldLimit;
  // Short slices, so that release_hold() from another thread ends it.
  constexpr long kSliceMs = 50;
  while (!released.load(std::memory_order_acquire) && !drain_subscriptions(socket)) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) break;
    zmq_pollitem_t item{socket, 0, ZMQ_POLLIN, 0};
    zmq_poll(&item, 1, std::min<long>(kSliceMs, static_cast<long>(left.count())));
  }
  released.store(true, std::memory_order_release);
  if (iopub_trace_on()) {
    auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - deadline +
                                                                        kIopubHoldLimit);
    std::fprintf(stderr, "openai4s-jupyter-kernel: iopub held %lld ms (%s)\n",
                 static_cast<long long>(waited.count()),
                 Clock::now() >= deadline ? "no subscriber" : "subscribed or stopping");
  }
}

}  // namespace

int socket_type_for(void* context, int type) {
  if (type != ZMQ_PUB) return type;
  publisher_context.store(context, std::memory_order_release);
  return ZMQ_XPUB;
}

void note_bound(void* socket, const char* endpoint) {
  int type = 0;
  size_t size = sizeof type;
  if (zmq_getsockopt(socket, ZMQ_TYPE, &type, &size) != 0 || type != ZMQ_XPUB) return;
  // xeus also publishes to its own publisher thread over inproc://.
  if (endpoint == nullptr || std::strncmp(endpoint, "inproc://", 9) == 0) return;
  iopub_socket.store(socket, std::memory_order_release);
  watch_iopub(publisher_context.load(std::memory_order_acquire), socket);
}

void before_send(void* socket, zmq_msg_t* message, int flags) {
  if (socket != iopub_socket.load(std::memory_order_acquire)) return;
  wait_for_subscriber(socket);
  trace_sent_frame(message, flags);
}

void release_hold() { released.store(true, std::memory_order_release); }

}  // namespace o4s::jupyter_app
