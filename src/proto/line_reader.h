// Bounded line reader over a blocking fd: the only place protocol bytes are
// read, so the frame cap is enforced before a line is materialised.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"

namespace o4s::proto {

class LineReader {
 public:
  // fd is borrowed; max_line bounds one line including its '\n'.
  LineReader(int fd, std::size_t max_line);

  // The next complete line with its '\n'; std::nullopt at end of stream.
  // A line longer than max_line is skipped up to its newline and reported as
  // a kProtocol error (counted in oversized_lines()); the reader stays usable.
  Result<std::optional<std::string>> read_line();

  std::size_t oversized_lines() const { return oversized_lines_; }

 private:
  Result<std::size_t> fill();

  int fd_;
  std::size_t max_line_;
  std::vector<char> buffer_;
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
  std::size_t oversized_lines_ = 0;
};

}  // namespace o4s::proto
