#pragma once

#include <algorithm>
#include <chrono>

namespace o4s {

// The time left before `deadline` as a wait a call can take: whole
// milliseconds, never negative, and never below `floor` (a caller whose
// callee reads 0 as "no time at all" but still wants one last try passes
// 1ms). `now` is a parameter so a test needs no clock.
inline std::chrono::milliseconds left_until(std::chrono::steady_clock::time_point deadline,
                                            std::chrono::steady_clock::time_point now,
                                            std::chrono::milliseconds floor = {}) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
  return std::max({left, floor, std::chrono::milliseconds(0)});
}

inline std::chrono::milliseconds left_until(std::chrono::steady_clock::time_point deadline,
                                            std::chrono::milliseconds floor = {}) {
  return left_until(deadline, std::chrono::steady_clock::now(), floor);
}

}  // namespace o4s
