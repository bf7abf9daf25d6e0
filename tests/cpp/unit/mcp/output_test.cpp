// Output cutting (head and tail with a marker) and the resources the cut
// output and artifacts are read back from.
#include <gtest/gtest.h>

#include <fstream>

#include "mcp/execution_result.h"
#include "mcp/resources.h"
#include "support/temp_dir.h"

namespace o4s::mcp {
namespace {

TEST(HeadAndTail, KeepsShortTextWhole) {
  std::size_t cut = 99;
  EXPECT_EQ(head_and_tail("short", 10, "", cut), "short");
  EXPECT_EQ(cut, 0u);
}

TEST(HeadAndTail, KeepsHeadAndTailAndSaysWhatWasCutAndWhere) {
  std::string text = std::string(100, 'a') + std::string(100, 'b');
  std::size_t cut = 0;
  std::string out = head_and_tail(text, 20, "openai4s://kernels/k/outputs/e/stdout.txt", cut);
  EXPECT_EQ(cut, 180u);
  EXPECT_EQ(out.substr(0, 10), std::string(10, 'a'));
  EXPECT_EQ(out.substr(out.size() - 10), std::string(10, 'b'));
  EXPECT_NE(out.find("180 characters cut here"), std::string::npos);
  EXPECT_NE(out.find("openai4s://kernels/k/outputs/e/stdout.txt"), std::string::npos);
}

TEST(HeadAndTail, CountsCodePointsAndNeverSplitsOne) {
  std::string text;
  for (int i = 0; i < 50; ++i) text += "\xC3\xA9";  // é, two bytes
  std::size_t cut = 0;
  std::string out = head_and_tail(text, 10, "", cut);
  EXPECT_EQ(cut, 40u);
  EXPECT_EQ(out.substr(0, 10), std::string("\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9"));
}

TEST(ExecutionToolResult, CutsEachPartAndLinksTheWholeOutput) {
  testing::TempDir dir;
  ResourceRegistry resources(dir.path());
  ExecutionSnapshot snap;
  snap.id = "e1";
  snap.kernel_id = "k1";
  snap.status = "ok";
  snap.stdout_text = std::string(5000, 'x');
  snap.result = std::string(5000, 'r');
  Json result = execution_tool_result(snap, 300, resources);
  const Json& structured = result["structuredContent"];
  EXPECT_EQ(structured["truncated"]["stdout_chars"], 4700);
  EXPECT_EQ(structured["truncated"]["result_chars"], 4700);
  ASSERT_EQ(result["content"].size(), 2u);
  const Json& link = result["content"][1];
  EXPECT_EQ(link["type"], "resource_link");
  auto read = resources.read(link["uri"]);
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(read.value()["contents"][0]["text"], snap.stdout_text);
}

TEST(Resources, OnlyUrisHandedOutCanBeRead) {
  testing::TempDir dir;
  ResourceRegistry resources(dir.path());
  for (const char* uri :
       {"openai4s://kernels/k/outputs/e/stdout.txt",
        "openai4s://kernels/k/artifacts/v/../../../secret.txt", "file:///etc/passwd", ""}) {
    EXPECT_FALSE(resources.read(uri)) << uri;
  }
  std::string png = dir.write_file("plot.png", "\x89PNG\r\n");
  std::string uri = resources.add_artifact("k", "v1", "my plot#1.png", png);
  EXPECT_EQ(uri, "openai4s://kernels/k/artifacts/v1/my%20plot%231.png");
  auto read = resources.read(uri);
  ASSERT_TRUE(read);
  EXPECT_EQ(read.value()["contents"][0]["mimeType"], "image/png");
  EXPECT_TRUE(read.value()["contents"][0].contains("blob"));
  EXPECT_EQ(resources.list().size(), 1u);
}

}  // namespace
}  // namespace o4s::mcp
