// What an approval prompt shows of its target, rendered once for every
// front door (the REPL, the Jupyter kernel's input_request, the Python
// API's approver, MCP elicitation), so that a cell cannot make a prompt
// lie: the target's controls (CR, ESC sequences, backspace, C1, DEL) and
// its invisible or reordering characters (bidi overrides and isolates,
// marks, zero-widths, line separators) are shown as escapes, each of its
// lines sits behind a gutter, and a target too long to show whole is cut
// visibly, with its length and sha256, and then only "once" may be given.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace o4s::host {

// A target shows whole when it has at most this many bytes and lines.
inline constexpr std::size_t kApprovalShownBytes = 4000;
inline constexpr std::size_t kApprovalShownLines = 40;
// The gutter in front of each line of the target in a prompt.
inline constexpr std::string_view kApprovalGutter = "    | ";
// A Jupyter input_request that is the host's approval question starts so
// (a relaying client, the MCP server's Slurm bridge, tells it from a cell's
// own input() by it); a cell's own prompt never does (cell_output.cpp).
inline constexpr std::string_view kApprovalPromptPrefix = "openai4s: ";
// Replies a relaying client gives (python/openai4s/slurm/mcp_bridge.py):
// its own client cannot show an approval (a denial, as for a local MCP
// kernel), or it has no input channel for a cell's input() (an error in
// the cell). Any client may send either; each can only refuse.
inline constexpr std::string_view kClientCannotAskReply = "\x1bopenai4s:client-cannot-ask";
inline constexpr std::string_view kNoInputReply = "\x1bopenai4s:no-input";
// A reason the cell gave shows on one line of at most this many bytes.
inline constexpr std::size_t kApprovalReasonBytes = 500;

// `text` with every character a terminal or a bidi renderer would act on
// escaped: \t \r \n, \xNN for other C0 bytes, DEL and bytes that are not
// UTF-8, \u{NNNN} for C1 and the invisible/reordering code points.
// Printable text (backslashes included) passes unchanged.
std::string escape_for_display(std::string_view text);

// The decisions an approval offers, in this order: once, always (only
// when offered: a target shown whole and verbatim), deny. One table: the
// terminal's choices line (the prompt's last) and the MCP server's
// elicitation form are both made from it.
struct ApprovalChoice {
  std::string_view decision;  // the form's value: "once", "always", "deny"
  std::string_view title;     // the form's label
  std::string_view terminal;  // its part of the terminal's line: "[y]es once"
};
std::vector<ApprovalChoice> approval_choices(bool always_offered);

// The prompt's last line: "Allow? " and the choices' terminal parts.
std::string approval_choices_line(bool always_offered);

struct ApprovalText {
  // The target's lines, escaped, each behind kApprovalGutter and ending in
  // '\n'; when cut, the last line says so with the length and sha256.
  std::string target_block;
  bool whole = true;           // every byte of the target is shown
  std::size_t length = 0;      // bytes of the target
  std::string sha256;          // of the target
  bool always_offered = true;  // "always" may be offered (whole and verbatim)
  // The reason the cell gave, escaped onto one line behind the gutter
  // (newlines shown as \n), cut visibly past kApprovalReasonBytes; empty
  // when it gave none. Already part of `prompt`.
  std::string reason_block;
  // What is asked: who asks, the target block, the reason, the notes;
  // every line ends in '\n'.
  std::string question;
  // The whole question: `question` then approval_choices_line.
  std::string prompt;
};

// `verbatim`: the target is the call's own text (a bash target whose
// secrets were redacted is not, so "always" would approve what nobody saw).
// `reason`: what the cell said the call is for (request_network_access's
// reason=...), shown as the cell's words, never as the prompt's own.
ApprovalText render_approval(std::string_view tool, std::string_view target, bool verbatim = true,
                             std::string_view reason = {});

// A relayed approval prompt read back (a Slurm kernel's: a Jupyter
// input_request carries only the text): its question and whether "always"
// was offered, told by its last line being exactly one of
// approval_choices_line's (every line a target or a reason brings sits
// behind the gutter, so none can be taken for it). nullopt for any other
// text.
struct RelayedApproval {
  std::string question;
  bool always_offered = false;
};
std::optional<RelayedApproval> read_relayed_approval(std::string_view prompt);

// The target as a durable request row keeps it: whole up to
// kApprovalShownBytes, else that prefix and a mark with length and sha256.
std::string bounded_target(std::string_view target);

}  // namespace o4s::host
