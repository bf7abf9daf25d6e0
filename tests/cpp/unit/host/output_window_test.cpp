// A background job's bounded output (host/output_window.h): the head, a
// rolling tail, and an exact count of the bytes dropped between them.
#include "host/output_window.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

namespace o4s::host {
namespace {

TEST(OutputWindow, KeepsEverythingWithinItsBounds) {
  OutputWindow window(8, 8);
  window.append("abc");
  window.append("def");
  EXPECT_EQ(window.render(), "abcdef");
  EXPECT_EQ(window.total_bytes(), 6U);
  EXPECT_EQ(window.dropped_bytes(), 0U);
}

TEST(OutputWindow, KeepsTheHeadAndTheLatestTailWithAMarker) {
  OutputWindow window(4, 6);
  for (int i = 0; i < 1000; ++i) window.append(std::to_string(i % 10));
  std::string shown = window.render();
  EXPECT_EQ(shown.substr(0, 4), "0123");
  EXPECT_EQ(shown.substr(shown.size() - 6), "456789");
  EXPECT_EQ(window.total_bytes(), 1000U);
  EXPECT_EQ(window.dropped_bytes(), 1000U - 4 - 6);
  EXPECT_NE(shown.find("990 bytes of output dropped"), std::string::npos);
}

TEST(OutputWindow, StaysBoundedWhateverArrives) {
  OutputWindow window(1024, 1024);
  std::string line(1000, 'x');
  for (int i = 0; i < 10000; ++i) window.append(line);
  EXPECT_LT(window.render().size(), 2048U + 200U);
  EXPECT_EQ(window.total_bytes(), 10'000'000U);
}

TEST(OutputWindow, NeverCutsACodePoint) {
  // "é" is two bytes: neither bound may split one, and the rendering must
  // serialise as JSON (nlohmann refuses invalid UTF-8).
  OutputWindow window(5, 5);
  for (int i = 0; i < 101; ++i) window.append("\xC3\xA9");
  std::string shown = window.render();
  EXPECT_NO_THROW((void)nlohmann::json(shown).dump());
  EXPECT_EQ(shown.substr(0, 4), "\xC3\xA9\xC3\xA9");
  EXPECT_EQ(shown.substr(shown.size() - 4), "\xC3\xA9\xC3\xA9");
  // 202 bytes: 4 in the head, 4 in the tail, the rest counted as dropped.
  EXPECT_EQ(window.dropped_bytes(), 202U - 4 - 4);
}

}  // namespace
}  // namespace o4s::host
