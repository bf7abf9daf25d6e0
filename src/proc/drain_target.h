// Where the supervisor thread puts the bytes it drains from a watched
// descriptor. Both calls run on the supervisor thread; implementations
// lock whatever their readers share and must never block.
#pragma once

#include <string_view>

namespace o4s::proc {

class DrainTarget {
 public:
  virtual ~DrainTarget() = default;
  virtual void append(std::string_view bytes) = 0;
  // The last writer is gone (end of stream or a read error), or the
  // descriptor was never watched: nothing more will arrive.
  virtual void mark_closed() = 0;
};

}  // namespace o4s::proc
