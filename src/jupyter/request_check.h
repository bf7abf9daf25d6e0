// Shape checks for the requests the kernel answers. xeus reads each field
// with a typed accessor and, when a client sends the wrong type (a number
// for `code`), logs the exception and sends nothing: the client then waits
// forever for a reply that never comes. A request that fails these checks
// is answered here instead, with the protocol's error reply.
#pragma once

#include <optional>
#include <string>
#include <xeus/xmessage.hpp>

namespace o4s::jupyter {

// Why `content` is not a valid `msg_type` request, or nothing when it is
// (also for message types this kernel does not check).
std::optional<std::string> request_problem(const std::string& msg_type, const nl::json& content);

// `<type>_reply` content for a rejected request: status error, ename
// "BadRequest", the problem as evalue.
nl::json bad_request_content(const std::string& problem);

// The reply message to `request` (its identities and parent header), with
// a fresh header of type `reply_type` in the request's session.
xeus::xmessage reply_to(const xeus::xmessage& request, const std::string& reply_type,
                        nl::json content);

// An iopub status message (busy/idle) whose parent is `request`.
xeus::xpub_message status_for(const xeus::xmessage& request, const std::string& state);

}  // namespace o4s::jupyter
