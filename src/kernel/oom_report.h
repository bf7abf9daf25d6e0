// What the kernel's OOM killer did to a sandbox during one cell. A cell
// whose child was OOM-killed under the sandbox's memory limit may carry on
// and succeed; without this it would never learn why the child died. The
// sandbox's cgroup counter is read before and after the cell (one pread
// each on a held descriptor), and a rise is reported in the response: a
// line on its stderr and usage["oom_kills"].
#pragma once

#include <cstdint>
#include <optional>

#include "proto/frame_codec.h"
#include "sandbox/kernel_sandbox.h"

namespace o4s::kernel {

class OomWatch {
 public:
  // Reads the count as the cell starts; `sandbox` may be null.
  explicit OomWatch(const sandbox::KernelSandbox* sandbox);
  // Adds the kills since the start, if any, to the cell's response.
  void report(proto::Json& response) const;

 private:
  const sandbox::KernelSandbox* sandbox_;
  std::optional<std::uint64_t> before_;
};

}  // namespace o4s::kernel
