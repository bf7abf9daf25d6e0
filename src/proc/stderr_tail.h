// The last N bytes a worker wrote to stderr, bounded at arrival.
#pragma once

#include <cstddef>
#include <mutex>
#include <string>
#include <string_view>

#include "proc/drain_target.h"

namespace o4s::proc {

class StderrTail final : public DrainTarget {
 public:
  explicit StderrTail(std::size_t budget);

  void append(std::string_view bytes) override;
  void mark_closed() override;

  std::string text() const;  // raw bytes; the binding decodes with replacement
  std::size_t seen_bytes() const;
  std::size_t dropped_bytes() const;
  std::size_t retained_bytes() const;
  bool truncated() const { return dropped_bytes() > 0; }
  bool closed() const;
  std::size_t budget() const { return budget_; }

 private:
  const std::size_t budget_;
  mutable std::mutex mutex_;
  std::string ring_;  // kept linear: appends trim the head when over budget
  std::size_t seen_ = 0;
  std::size_t dropped_ = 0;
  bool closed_ = false;
};

}  // namespace o4s::proc
