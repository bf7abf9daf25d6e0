#include "host/output_window.h"

#include "base/utf8.h"

namespace o4s::host {

OutputWindow::OutputWindow(std::size_t head_bytes, std::size_t tail_bytes)
    : head_cap_(head_bytes), tail_cap_(tail_bytes) {}

void OutputWindow::append(std::string_view text) {
  total_ += text.size();
  if (!head_full_) {
    std::size_t room = head_cap_ - head_.size();
    if (text.size() <= room) {
      head_.append(text);
      return;
    }
    // The head ends on a sequence boundary; the cut sequence's bytes go on
    // into the tail, so no byte is lost between the two.
    std::string_view fits = utf8::prefix_within_bytes(text, room);
    head_.append(fits);
    text.remove_prefix(fits.size());
    head_full_ = true;
  }
  tail_.append(text);
  tail_seen_ += text.size();
  if (tail_.size() > 2 * tail_cap_) {
    // Kept from a lead byte: the tail never starts inside a sequence.
    tail_.erase(0, tail_.size() - utf8::suffix_within_bytes(tail_, tail_cap_).size());
  }
}

std::size_t OutputWindow::dropped_bytes() const {
  return tail_seen_ - utf8::suffix_within_bytes(tail_, tail_cap_).size();
}

std::string OutputWindow::render() const {
  std::string_view tail = utf8::suffix_within_bytes(tail_, tail_cap_);
  std::size_t dropped = dropped_bytes();
  std::string out = head_;
  if (dropped > 0) {
    out += "\n[... " + std::to_string(dropped) +
           " bytes of output dropped: a background job keeps its first " +
           std::to_string(head_cap_) + " and last " + std::to_string(tail_cap_) + " bytes ...]\n";
  }
  out.append(tail);
  return out;
}

}  // namespace o4s::host
