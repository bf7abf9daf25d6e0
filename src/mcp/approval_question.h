// What every kernel of the server asks the client when a cell needs an
// approval (elicitation/create): the choices' schema and how an answer is
// read. A local kernel's question is built from its ApprovalRequest
// (tools.cpp), a Slurm kernel's from its Jupyter kernel's prompt
// (slurm_tools.cpp); the choices and the answer's reading are these.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

namespace o4s::mcp {

using Json = nlohmann::json;

// How long a person has to answer an approval before it is denied.
inline constexpr auto kApprovalWait = std::chrono::seconds(600);

// The requested schema: host::approval_choices (once, always only when
// offered: a target shown whole and verbatim, deny).
Json approval_schema(bool always_offered);

// The decision in an elicitation answer ("once", "always", "deny"), or ""
// for anything else (the caller denies): the client's JSON is not trusted
// to have our shape.
std::string elicited_decision(const Json& answer);

// The elicitation for an approval asked as a Jupyter kernel's prompt
// (`openai4s: ` + the shared rendering: escaped, each target line behind
// its gutter, then the terminal's choices line, which the schema's choices
// replace). "always" is offered only when that last line is the rendering's
// own line offering it (host::read_relayed_approval); the kernel checks an
// "always" again. `who` names the kernel in the message.
Json prompt_elicitation(const std::string& prompt, const std::string& who, bool form_mode);

}  // namespace o4s::mcp
