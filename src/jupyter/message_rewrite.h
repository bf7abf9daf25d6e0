// Where xeus 2.4 departs from the letter of the messaging protocol, the
// server (interrupting_server.h) rewrites the message on its way:
//
// - input_request says `password` (xeus 2.4 sends `pwd`, which clients
//   ignore: a getpass() prompt was echoed in jupyter console and the
//   Notebook).
// - An execute_request with store_history false does not advance the
//   execution count. xeus counts every non-silent request, in a counter the
//   interpreter cannot reach; such a request goes on to xeus as silent
//   (which xeus does not count), and the interpreter is told it is to be
//   shown all the same.
#pragma once

#include <xeus/xmessage.hpp>

namespace o4s::jupyter {

// `message` with `content` in place of its own (everything else kept).
xeus::xmessage with_content(xeus::xmessage&& message, nl::json content);

// An input_request as the protocol spells it: `password`, no `pwd`.
xeus::xmessage input_request_to_the_letter(xeus::xmessage&& message);

// True for an execute_request that is shown (not silent) but not stored
// (store_history false).
bool shown_but_unstored(const xeus::xmessage& request);

// The request made silent for xeus (see above); only for one that
// shown_but_unstored() said is.
xeus::xmessage as_uncounted(xeus::xmessage&& request);

// The reply to a request skipped because an earlier cell failed
// (stop_on_error): `status: aborted`, as ipykernel sends it.
xeus::xmessage aborted_reply(const xeus::xmessage& request);

}  // namespace o4s::jupyter
