// What a response keeps of a cell's displays (issue 27, point 4): a count
// cap and a per-display overhead, so a flood of tiny displays is bounded
// like a few big ones, and a marker says how many were dropped.
#include <gtest/gtest.h>

#include <string>

#include "kernel/cell_io.h"

namespace o4s::kernel {
namespace {

Json tiny() {
  return Json{{"data", {{"text/plain", "1"}}},
              {"metadata", Json::object()},
              {"display_id", nullptr},
              {"update", false}};
}

TEST(DisplayCollector, KeepsAtMostTheCountCapThenAMarker) {
  DisplayCollector displays;
  for (std::size_t i = 0; i < kMaxCollectedDisplays + 25; ++i) displays.keep(tiny());
  EXPECT_TRUE(displays.truncated());
  EXPECT_EQ(displays.dropped(), 25u);
  Json kept = displays.take();
  ASSERT_EQ(kept.size(), kMaxCollectedDisplays + 1);
  const Json& marker = kept.back();
  EXPECT_EQ(marker["metadata"]["openai4s"]["dropped_displays"], 25);
  EXPECT_NE(marker["data"]["text/plain"].get<std::string>().find("25 more displays dropped"),
            std::string::npos);
}

TEST(DisplayCollector, ChargesEachDisplayItsOverheadAndMetadata) {
  DisplayCollector displays;
  // Big metadata counts: 7 displays of 10 MB metadata pass the 64 MB budget.
  Json heavy = tiny();
  heavy["metadata"] = {{"k", std::string(10'000'000, 'm')}};
  for (int i = 0; i < 7; ++i) displays.keep(heavy);
  EXPECT_EQ(displays.dropped(), 1u);
  // Once one is dropped the rest are too, so what is kept is a prefix.
  displays.keep(tiny());
  EXPECT_EQ(displays.dropped(), 2u);
  EXPECT_EQ(displays.take().size(), 7u);  // 6 kept and the marker
}

TEST(DisplayCollector, NothingDroppedMeansNoMarker) {
  DisplayCollector displays;
  displays.keep(tiny());
  EXPECT_FALSE(displays.truncated());
  EXPECT_EQ(displays.take().size(), 1u);
}

}  // namespace
}  // namespace o4s::kernel
