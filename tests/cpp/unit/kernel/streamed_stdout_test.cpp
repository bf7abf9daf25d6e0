#include "kernel/streamed_stdout.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace o4s::kernel {
namespace {

TEST(StreamedStdoutTest, WithoutTrimIsTheConcatenation) {
  EXPECT_EQ(assemble_streamed_stdout({"hello", "\n", "w\xC3\xA9"}, 0), "hello\nw\xC3\xA9");
  EXPECT_EQ(assemble_streamed_stdout({}, 0), "");
}

TEST(StreamedStdoutTest, TrimCutsCodePointsBeforeTheLastChunk) {
  std::vector<std::string> chunks{"abc", "def", "\n...(marker)"};
  EXPECT_EQ(assemble_streamed_stdout(chunks, 2), "abcd\n...(marker)");
  EXPECT_EQ(assemble_streamed_stdout(chunks, 4), "ab\n...(marker)");
}

TEST(StreamedStdoutTest, TrimCountsCodePointsNotBytes) {
  // "é" is two bytes, the emoji four: trimming two code points removes six.
  std::vector<std::string> chunks{"x\xC3\xA9\xF0\x9F\x99\x82", "|m"};
  EXPECT_EQ(assemble_streamed_stdout(chunks, 2), "x|m");
  EXPECT_EQ(assemble_streamed_stdout(chunks, 1), "x\xC3\xA9|m");
}

TEST(StreamedStdoutTest, TrimLongerThanTheHeadLeavesTheMarker) {
  EXPECT_EQ(assemble_streamed_stdout({"ab", "|m"}, 10), "|m");
}

TEST(StreamedStdoutTest, ASingleChunkIsNeverTrimmed) {
  // Nothing to keep whole and nothing before it: the text is taken as is.
  EXPECT_EQ(assemble_streamed_stdout({"only"}, 3), "only");
}

TEST(StreamedStdoutTest, NoDeclaredChunksIsTheEmptyText) {
  std::vector<StreamedChunk> none;
  EXPECT_EQ(rebuild_declared_stdout(none, StreamDeclaration{1, 0, 0}), std::string());
  std::vector<StreamedChunk> other{{"x", 2, 0}};
  EXPECT_EQ(rebuild_declared_stdout(other, StreamDeclaration{1, 0, 0}), std::string());
  EXPECT_EQ(rebuild_declared_stdout(other, StreamDeclaration{1, 1, 0}), std::nullopt);
}

TEST(StreamedStdoutTest, ChunksWithoutASequenceNumberNeverMatchADeclaration) {
  std::vector<StreamedChunk> chunks{{"x", 1, std::nullopt}};
  EXPECT_EQ(rebuild_declared_stdout(chunks, StreamDeclaration{1, 1, 0}), std::nullopt);
}

}  // namespace
}  // namespace o4s::kernel
