// The host's precheck against the shared corpus (tests/precheck/corpus.jsonl,
// also run by the worker's Python suite): the same rule table, the same
// verdict for every command.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "host/precheck.h"
#include "host/precheck_rules.h"

namespace o4s::host {
namespace {

using Json = nlohmann::json;

std::vector<Json> corpus() {
  std::vector<Json> entries;
  std::ifstream in(O4S_PRECHECK_CORPUS);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) entries.push_back(Json::parse(line));
  }
  return entries;
}

TEST(PrecheckCorpus, EveryCommandGetsTheSharedVerdict) {
  const std::vector<Json> entries = corpus();
  ASSERT_GT(entries.size(), 100u);
  for (const Json& entry : entries) {
    const std::string command = entry["command"].get<std::string>();
    std::optional<std::string> expected;
    if (entry["refused"].is_string()) {
      expected = precheck_rules().reasons.at(entry["refused"].get<std::string>());
    }
    EXPECT_EQ(static_precheck(command), expected) << command;
  }
}

TEST(PrecheckCorpus, EveryRowOfTheTableIsCovered) {
  std::set<std::string> covered;
  for (const Json& entry : corpus()) {
    if (entry["refused"].is_string()) covered.insert(entry["refused"].get<std::string>());
  }
  for (const std::string& row : precheck_rules().row_order) {
    if (row != "unanalysable") {
      EXPECT_TRUE(covered.count(row)) << row;
    }
  }
}

TEST(PrecheckCorpus, NestingPastTheLimitIsRefused) {
  std::string deep = "ls";
  for (int i = 0; i < 50; ++i) deep = "echo $(" + deep + ")";
  EXPECT_EQ(static_precheck(deep), precheck_rules().reasons.at("too_deep"));
}

}  // namespace
}  // namespace o4s::host
