#include "host/approval_text.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>

#include "base/sha256.h"
#include "base/utf8.h"

namespace o4s::host {

namespace {

// One decoded code point and its length in bytes; length 1 and `valid`
// false for a byte that does not start a well-formed sequence.
struct CodePoint {
  char32_t value = 0;
  std::size_t length = 1;
  bool valid = false;
};

CodePoint decode_at(std::string_view text, std::size_t i) {
  const auto lead = static_cast<unsigned char>(text[i]);
  if (lead < 0x80) return {lead, 1, true};
  const std::size_t length = (lead >> 5) == 0x6    ? 2
                             : (lead >> 4) == 0xE  ? 3
                             : (lead >> 3) == 0x1E ? 4
                                                   : 0;
  if (length == 0 || i + length > text.size()) return {};
  char32_t value = lead & (0x7F >> length);
  for (std::size_t k = 1; k < length; ++k) {
    if (!utf8::is_continuation(text[i + k])) return {};
    value = (value << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
  }
  // Overlong forms, surrogates and values past U+10FFFF are not UTF-8: a
  // renderer might still decode them into a control.
  constexpr char32_t kMinimum[] = {0, 0, 0x80, 0x800, 0x10000};
  if (value < kMinimum[length] || (value >= 0xD800 && value <= 0xDFFF) || value > 0x10FFFF) {
    return {};
  }
  return {value, length, true};
}

// Code points that move the cursor, reorder text or are invisible.
bool needs_escape(char32_t c) {
  if (c < 0x20 || c == 0x7F) return true;       // C0 (ESC, CR, BS, ...) and DEL
  if (c >= 0x80 && c <= 0x9F) return true;      // C1 (CSI, NEL, ...)
  if (c == 0x061C || c == 0x180E) return true;  // Arabic letter mark, Mongolian separator
  if (c >= 0x200B && c <= 0x200F) return true;  // zero-widths, LRM, RLM
  if (c >= 0x2028 && c <= 0x202E) return true;  // line/paragraph separators, LRE..RLO
  if (c >= 0x2060 && c <= 0x206F) return true;  // word joiner, LRI..PDI, deprecated formats
  if (c == 0xFEFF) return true;                 // zero-width no-break space
  if (c >= 0xFFF9 && c <= 0xFFFB) return true;  // interlinear annotation
  return false;
}

void append_escape(std::string& out, char32_t c, bool byte) {
  char buffer[16];
  if (c == '\t') {
    out += "\\t";
  } else if (c == '\r') {
    out += "\\r";
  } else if (c == '\n') {
    out += "\\n";
  } else if (byte || c < 0x80) {
    std::snprintf(buffer, sizeof buffer, "\\x%02x", static_cast<unsigned>(c));
    out += buffer;
  } else {
    std::snprintf(buffer, sizeof buffer, "\\u%04x", static_cast<unsigned>(c));
    out += buffer;
  }
}

std::string cut_mark(std::size_t shown, std::string_view target, const std::string& sha256) {
  return "[cut: " + std::to_string(shown) + " of " + std::to_string(target.size()) +
         " bytes shown; sha256 " + sha256 + "]";
}

// The reason on one gutter line: escaped whole (a newline is "\n", so it
// cannot start a line of its own), cut on a code point past the budget.
std::string reason_line(std::string_view reason) {
  std::string_view shown = utf8::prefix_within_bytes(reason, kApprovalReasonBytes);
  std::string line = std::string(kApprovalGutter) + escape_for_display(shown);
  if (shown.size() < reason.size()) {
    line += " [cut: " + std::to_string(shown.size()) + " of " + std::to_string(reason.size()) +
            " bytes shown]";
  }
  return line + "\n";
}

}  // namespace

std::string escape_for_display(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    const CodePoint point = decode_at(text, i);
    if (!point.valid) {
      append_escape(out, static_cast<unsigned char>(text[i]), true);
    } else if (needs_escape(point.value)) {
      append_escape(out, point.value, false);
    } else {
      out.append(text.substr(i, point.length));
    }
    i += point.length;
  }
  return out;
}

ApprovalText render_approval(std::string_view tool, std::string_view target, bool verbatim,
                             std::string_view reason) {
  ApprovalText text;
  text.length = target.size();
  text.sha256 = sha256_hex(target);
  // The shown part: whole lines up to the byte and line budgets. A line is
  // escaped on its own, so its '\n' becomes the next gutter, never a bare
  // line a cell could dress up as the prompt's own text.
  std::string_view shown = utf8::prefix_within_bytes(target, kApprovalShownBytes);
  std::size_t lines = 0;
  std::size_t start = 0;
  while (start <= shown.size() && lines < kApprovalShownLines) {
    std::size_t end = shown.find('\n', start);
    if (end == std::string_view::npos) end = shown.size();
    text.target_block.append(kApprovalGutter)
        .append(escape_for_display(shown.substr(start, end - start)))
        .append("\n");
    ++lines;
    start = end + 1;
  }
  const std::size_t shown_bytes = std::min(start > 0 ? start - 1 : 0, shown.size());
  text.whole = shown_bytes >= target.size();
  if (!text.whole) {
    text.target_block.append(kApprovalGutter)
        .append(cut_mark(shown_bytes, target, text.sha256))
        .append("\n");
  }
  text.always_offered = text.whole && verbatim;
  text.prompt = "The cell asks to use host tool '" + escape_for_display(tool) + "' on (" +
                std::to_string(text.length) + " bytes):\n" + text.target_block;
  if (!verbatim) text.prompt += "(secrets in it are shown redacted)\n";
  if (!reason.empty()) {
    text.reason_block = reason_line(reason);
    text.prompt += "The cell's reason (its own words, not checked):\n" + text.reason_block;
  }
  if (!text.whole)
    text.prompt += "(the target is too long to show whole: only once may be given)\n";
  text.question = text.prompt;
  text.prompt += approval_choices_line(text.always_offered);
  return text;
}

std::vector<ApprovalChoice> approval_choices(bool always_offered) {
  std::vector<ApprovalChoice> choices{{"once", "Allow once", "[y]es once"}};
  if (always_offered) {
    choices.push_back({"always", "Always allow (this kernel)", "[a]lways this session"});
  }
  choices.push_back({"deny", "Deny", "[N]o"});
  return choices;
}

std::string approval_choices_line(bool always_offered) {
  std::string line = "Allow? ";
  const char* separator = "";
  for (const ApprovalChoice& choice : approval_choices(always_offered)) {
    line.append(separator).append(choice.terminal);
    separator = " / ";
  }
  return line + ": ";
}

std::optional<RelayedApproval> read_relayed_approval(std::string_view prompt) {
  const std::size_t cut = prompt.rfind('\n');
  const std::size_t start = cut == std::string_view::npos ? 0 : cut + 1;
  const std::string_view last = prompt.substr(start);
  for (bool always : {true, false}) {
    if (last == approval_choices_line(always)) {
      return RelayedApproval{std::string(prompt.substr(0, start)), always};
    }
  }
  return std::nullopt;
}

std::string bounded_target(std::string_view target) {
  if (target.size() <= kApprovalShownBytes) return std::string(target);
  const std::string_view shown = utf8::prefix_within_bytes(target, kApprovalShownBytes);
  return std::string(shown) + "\n" + cut_mark(shown.size(), target, sha256_hex(target));
}

}  // namespace o4s::host
