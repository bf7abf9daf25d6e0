// The one table of worker->host frames: every `type` in proto/frame_types.h
// mapped to the kind of frame it is. The manager's frame loop looks each
// frame up here and hands it to the request that waits (kernel/frame_wait.h);
// a type that is not here is kUnknown, and so is a frame that is not an object.
#pragma once

#include <array>
#include <string_view>

#include "proto/frame_codec.h"
#include "proto/frame_types.h"

namespace o4s::kernel {

enum class FrameKind {
  kReply,         // the answer to some request (whose, the waiting request says)
  kStdoutChunk,   // live stdout of a cell
  kDisplay,       // display or clear_output of a cell
  kInputRequest,  // input() of a cell asks the caller for a line
  kHostCall,      // cell code calls the host
  kLog,           // a diagnostic line for the worker log tail
  kSidecar,       // an untrusted skill-sidecar import event
  kUnknown,       // none of the above: not in the table, or not an object
};

struct FrameRoute {
  std::string_view type;
  FrameKind kind;
};

inline constexpr std::array kFrameRoutes = {
    FrameRoute{proto::frame::kInitialized, FrameKind::kReply},
    FrameRoute{proto::frame::kInitializationError, FrameKind::kReply},
    FrameRoute{proto::frame::kResponse, FrameKind::kReply},
    FrameRoute{proto::frame::kVariablesResponse, FrameKind::kReply},
    FrameRoute{proto::frame::kStdoutText, FrameKind::kReply},
    FrameRoute{proto::frame::kCompleteReply, FrameKind::kReply},
    FrameRoute{proto::frame::kInspectReply, FrameKind::kReply},
    FrameRoute{proto::frame::kIsCompleteReply, FrameKind::kReply},
    FrameRoute{proto::frame::kStdoutChunk, FrameKind::kStdoutChunk},
    FrameRoute{proto::frame::kDisplay, FrameKind::kDisplay},
    FrameRoute{proto::frame::kClearOutput, FrameKind::kDisplay},
    FrameRoute{proto::frame::kInputRequest, FrameKind::kInputRequest},
    FrameRoute{proto::frame::kHostCall, FrameKind::kHostCall},
    FrameRoute{proto::frame::kLog, FrameKind::kLog},
    FrameRoute{proto::frame::kSkillSidecarLoad, FrameKind::kSidecar},
};
// Every frame a worker may send has its row (tests check the names match).
static_assert(kFrameRoutes.size() == proto::frame::kWorkerToHost.size());

constexpr FrameKind route_of(std::string_view type) {
  for (const FrameRoute& route : kFrameRoutes) {
    if (route.type == type) return route.kind;
  }
  return FrameKind::kUnknown;
}

inline FrameKind route_of(const proto::Json& frame) { return route_of(proto::frame_type(frame)); }

}  // namespace o4s::kernel
