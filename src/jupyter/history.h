// The kernel's input history (history_request), in memory for the life of
// the kernel process. xeus 2.4's own in-memory manager answers with rows
// of four strings, which clients' schemas reject; this one answers with
// the protocol's (session, line, input) or (session, line, [input, output]).
#pragma once

#include <mutex>
#include <string>
#include <vector>
#include <xeus/xhistory_manager.hpp>

namespace o4s::jupyter {

class History : public xeus::xhistory_manager {
 private:
  struct Entry {
    int session;
    int line;
    std::string input;
    std::string output;
  };

  void configure_impl() override {}
  void store_inputs_impl(int session, int line_num, const std::string& input,
                         const std::string& output) override;
  nl::json get_tail_impl(int n, bool raw, bool output) const override;
  nl::json get_range_impl(int session, int start, int stop, bool raw, bool output) const override;
  nl::json search_impl(const std::string& pattern, bool raw, bool output, int n,
                       bool unique) const override;

  nl::json row(const Entry& entry, bool output) const;
  static nl::json reply(nl::json rows);

  mutable std::mutex mutex_;
  std::vector<Entry> entries_;
};

}  // namespace o4s::jupyter
