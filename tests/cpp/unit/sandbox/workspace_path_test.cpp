#include "sandbox/workspace_path.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "support/temp_dir.h"

namespace o4s::sandbox {
namespace {

namespace fs = std::filesystem;
using o4s::testing::TempDir;

constexpr uid_t kRoot = 0;
constexpr uid_t kSomeoneElse = 65534;

// A symlink `link` -> `target` owned by `owner` (changing it needs root).
void symlink_owned_by(const std::string& target, const std::string& link, uid_t owner) {
  fs::create_symlink(target, link);
  ASSERT_EQ(::lchown(link.c_str(), owner, owner), 0) << link;
}

TEST(ResolveWorkspaceTest, WithoutATrustedOwnerItIsRealpath) {
  TempDir dir;
  fs::create_directories(dir.file("real/inner"));
  fs::create_symlink(dir.file("real"), dir.file("via"));
  auto resolved = resolve_workspace(dir.file("via/./inner/../inner"), std::nullopt);
  ASSERT_TRUE(resolved.ok()) << resolved.error().message;
  EXPECT_EQ(*resolved, fs::canonical(dir.file("real/inner")).string());
}

TEST(ResolveWorkspaceTest, FollowsTheTrustedOwnersLinksRelativeAndAbsolute) {
  if (::geteuid() != 0) GTEST_SKIP() << "giving a symlink an owner needs root";
  TempDir dir;
  const std::string base = fs::canonical(dir.path()).string();
  fs::create_directories(base + "/real/inner");
  symlink_owned_by("real", base + "/relative", kRoot);
  symlink_owned_by(base + "/real/inner", base + "/absolute", kRoot);
  auto relative = resolve_workspace(base + "/relative/inner", kRoot);
  ASSERT_TRUE(relative.ok()) << relative.error().message;
  EXPECT_EQ(*relative, base + "/real/inner");
  auto absolute = resolve_workspace(base + "/absolute/..", kRoot);
  ASSERT_TRUE(absolute.ok()) << absolute.error().message;
  EXPECT_EQ(*absolute, base + "/real");
}

TEST(ResolveWorkspaceTest, RefusesALinkSomebodyElseOwnsAnywhereOnThePath) {
  if (::geteuid() != 0) GTEST_SKIP() << "giving a symlink an owner needs root";
  TempDir dir;
  const std::string base = fs::canonical(dir.path()).string();
  fs::create_directories(base + "/outer");
  fs::create_directories(base + "/victim/deeper");
  ::chmod((base + "/victim").c_str(), 0700);
  // What a cell of a sandbox with uid 65534 leaves in its workspace.
  symlink_owned_by(base + "/victim", base + "/outer/inner", kSomeoneElse);
  for (const std::string& asked : {base + "/outer/inner", base + "/outer/inner/deeper"}) {
    auto resolved = resolve_workspace(asked, kRoot);
    ASSERT_FALSE(resolved.ok()) << asked;
    EXPECT_EQ(resolved.error().code, ErrorCode::kSandboxUnavailable);
    EXPECT_NE(resolved.error().message.find(base + "/outer/inner, a symlink owned by uid 65534"),
              std::string::npos)
        << resolved.error().message;
  }
  // Reached through a trusted link first, the untrusted one is still refused.
  symlink_owned_by(base + "/outer", base + "/trusted", kRoot);
  EXPECT_FALSE(resolve_workspace(base + "/trusted/inner", kRoot).ok());
}

TEST(ResolveWorkspaceTest, NamesAMissingComponentAndALoop) {
  if (::geteuid() != 0) GTEST_SKIP() << "giving a symlink an owner needs root";
  TempDir dir;
  const std::string base = fs::canonical(dir.path()).string();
  auto missing = resolve_workspace(base + "/nope", kRoot);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find(base + "/nope"), std::string::npos);
  symlink_owned_by("loop", base + "/loop", kRoot);
  EXPECT_FALSE(resolve_workspace(base + "/loop", kRoot).ok());
  EXPECT_FALSE(resolve_workspace("relative/path", kRoot).ok());
}

TEST(HeldPathTest, ActsOnTheCheckedDirectoryAfterItsPathIsSwapped) {
  TempDir dir;
  const std::string base = fs::canonical(dir.path()).string();
  fs::create_directories(base + "/outer/inner");
  fs::create_directories(base + "/victim");
  auto held = HeldPath::open(base + "/outer/inner");
  ASSERT_TRUE(held.ok()) << held.error().message;
  const std::string asked = base + "/outer/inner";
  // "/" and one descriptor per component.
  EXPECT_EQ(held->size(),
            static_cast<std::size_t>(std::count(asked.begin(), asked.end(), '/')) + 1);
  // What a racing cell does: the checked directory moves away and a
  // symlink to somewhere else takes its name.
  fs::rename(base + "/outer/inner", base + "/outer/inner.aside");
  fs::create_directory_symlink(base + "/victim", base + "/outer/inner");
  struct stat through_held {};
  struct stat aside {};
  ASSERT_EQ(::stat(held->stable(held->size() - 1).c_str(), &through_held), 0);
  ASSERT_EQ(::stat((base + "/outer/inner.aside").c_str(), &aside), 0);
  EXPECT_EQ(through_held.st_ino, aside.st_ino);
  EXPECT_EQ(through_held.st_dev, aside.st_dev);
  // Opened now, the path is refused: its last component is a symlink.
  auto again = HeldPath::open(base + "/outer/inner");
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.error().message.find("changed while it was being opened"), std::string::npos)
      << again.error().message;
}

}  // namespace
}  // namespace o4s::sandbox
