#include "jupyter/history.h"

#include <fnmatch.h>

#include <set>

namespace o4s::jupyter {

// xeus 2.4 passes the same line number for every input, so lines are
// numbered here: one per stored input, from 1, like execution counts.
void History::store_inputs_impl(int session, int /*line_num*/, const std::string& input,
                                const std::string& output) {
  std::lock_guard lock(mutex_);
  int line = static_cast<int>(entries_.size()) + 1;
  entries_.push_back(Entry{session, line, input, output});
}

nl::json History::row(const Entry& entry, bool output) const {
  if (output) return nl::json::array({entry.session, entry.line, {entry.input, entry.output}});
  return nl::json::array({entry.session, entry.line, entry.input});
}

nl::json History::reply(nl::json rows) {
  return nl::json{{"status", "ok"}, {"history", std::move(rows)}};
}

nl::json History::get_tail_impl(int n, bool /*raw*/, bool output) const {
  std::lock_guard lock(mutex_);
  nl::json rows = nl::json::array();
  std::size_t count = n < 0 ? entries_.size() : static_cast<std::size_t>(n);
  std::size_t first = entries_.size() > count ? entries_.size() - count : 0;
  for (std::size_t i = first; i < entries_.size(); ++i) rows.push_back(row(entries_[i], output));
  return reply(std::move(rows));
}

nl::json History::get_range_impl(int session, int start, int stop, bool /*raw*/,
                                 bool output) const {
  std::lock_guard lock(mutex_);
  nl::json rows = nl::json::array();
  for (const Entry& entry : entries_) {
    if (entry.session != session || entry.line < start || (stop > 0 && entry.line >= stop)) {
      continue;
    }
    rows.push_back(row(entry, output));
  }
  return reply(std::move(rows));
}

nl::json History::search_impl(const std::string& pattern, bool /*raw*/, bool output, int n,
                              bool unique) const {
  std::lock_guard lock(mutex_);
  // Newest first, so "unique" keeps each input's latest line and "n" the
  // latest matches; answered oldest first, as a tail is.
  std::vector<const Entry*> matches;
  std::set<std::string> seen;
  const std::string glob = pattern.empty() ? "*" : pattern;
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) {
    if (fnmatch(glob.c_str(), it->input.c_str(), 0) != 0) continue;
    if (unique && !seen.insert(it->input).second) continue;
    matches.push_back(&*it);
    if (n > 0 && matches.size() >= static_cast<std::size_t>(n)) break;
  }
  nl::json rows = nl::json::array();
  for (auto it = matches.rbegin(); it != matches.rend(); ++it) rows.push_back(row(**it, output));
  return reply(std::move(rows));
}

}  // namespace o4s::jupyter
