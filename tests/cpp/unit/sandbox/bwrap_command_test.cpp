// The bubblewrap argv builder: an argument vector of flag/value pairs in the
// shape spec kernel.md §2.13 describes, never --new-session (§2.3), mounts
// ordered so none hides another, and invalid input refused.
#include "sandbox/bwrap_command.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "base/paths.h"

namespace o4s::sandbox {
namespace {

using Kind = FsOperation::Kind;

std::vector<std::string> built(const BwrapCommand& command,
                               std::vector<std::string> worker = {"/usr/bin/python3", "-u"}) {
  auto argv = command.build(worker);
  EXPECT_TRUE(argv.ok()) << (argv.ok() ? "" : argv.error().message);
  return argv.ok() ? argv.value() : std::vector<std::string>{};
}

std::ptrdiff_t index_of(const std::vector<std::string>& argv,
                        const std::vector<std::string>& sequence) {
  auto found = std::search(argv.begin(), argv.end(), sequence.begin(), sequence.end());
  return found == argv.end() ? -1 : found - argv.begin();
}

std::string refusal(const BwrapCommand& command, std::vector<std::string> worker = {"/bin/true"}) {
  auto argv = command.build(worker);
  if (argv.ok()) return "<accepted>";
  EXPECT_EQ(argv.error().code, ErrorCode::kInvalidArgument);
  return argv.error().message;
}

TEST(BwrapCommandTest, KernelShapeIsFlagsThenMountsThenChdirThenCommand) {
  BwrapCommand command("/usr/bin/bwrap");
  command.die_with_parent()
      .unshare(Namespace::kUser)
      .unshare(Namespace::kPid)
      .unshare(Namespace::kNet)
      .unshare(Namespace::kPid)  // repeated: once
      .drop_all_capabilities()
      .disable_nested_user_namespaces()
      .info_fd(7)
      .seccomp_fd(9)
      .add({Kind::kReadOnlyBind, "/usr", "/usr", std::nullopt})
      .add({Kind::kBind, "/srv/ws", "/srv/ws", std::nullopt})
      .chdir("/srv/ws");
  EXPECT_EQ(built(command), (std::vector<std::string>{"/usr/bin/bwrap",
                                                      "--die-with-parent",
                                                      "--unshare-user",
                                                      "--unshare-pid",
                                                      "--unshare-net",
                                                      "--disable-userns",
                                                      "--cap-drop",
                                                      "ALL",
                                                      "--info-fd",
                                                      "7",
                                                      "--seccomp",
                                                      "9",
                                                      "--ro-bind",
                                                      "/usr",
                                                      "/usr",
                                                      "--bind",
                                                      "/srv/ws",
                                                      "/srv/ws",
                                                      "--chdir",
                                                      "/srv/ws",
                                                      "--",
                                                      "/usr/bin/python3",
                                                      "-u"}));
}

// Sources bound by descriptor: the sandbox uid may not be able to walk to
// them. They keep the depth order, and a negative descriptor is refused.
TEST(BwrapCommandTest, BindsByDescriptorInDepthOrder) {
  BwrapCommand command("bwrap");
  command.add({Kind::kReadOnlyBindFd, "", "/srv/ws/venv", std::nullopt, 12})
      .add({Kind::kBindFd, "", "/srv/ws", std::nullopt, 11})
      .add({Kind::kMaskFile, "", "/proc/1/mem", std::nullopt});
  auto argv = built(command);
  std::vector<std::string> expected = {
      "bwrap",       "--bind-fd",    "11", "/srv/ws",      "--ro-bind", "/dev/null",
      "/proc/1/mem", "--ro-bind-fd", "12", "/srv/ws/venv", "--",        "/usr/bin/python3",
      "-u"};
  EXPECT_EQ(argv, expected);
  BwrapCommand negative("bwrap");
  negative.add({Kind::kBindFd, "", "/srv/ws", std::nullopt, -1});
  EXPECT_FALSE(negative.build({"python3"}).ok());
}

TEST(BwrapCommandTest, NeverCreatesANewSession) {
  BwrapCommand command("bwrap");
  command.die_with_parent().unshare(Namespace::kPid).unshare(Namespace::kIpc);
  auto argv = built(command);
  EXPECT_EQ(std::count(argv.begin(), argv.end(), "--new-session"), 0);
}

TEST(BwrapCommandTest, AncestorsAreMountedBeforeWhatTheyContain) {
  BwrapCommand command("bwrap");
  // Declared deepest first on purpose.
  command.add({Kind::kReadOnlyBind, "/src/venv", "/home/u/ws/venv", std::nullopt})
      .add({Kind::kBind, "/home/u/ws", "/home/u/ws", std::nullopt})
      .add({Kind::kTmpfs, "", "/home/u", 4096})
      .add({Kind::kTmpfs, "", "/tmp", std::nullopt});
  auto argv = built(command);
  auto home = index_of(argv, {"--size", "4096", "--tmpfs", "/home/u"});
  auto workspace = index_of(argv, {"--bind", "/home/u/ws", "/home/u/ws"});
  auto venv = index_of(argv, {"--ro-bind", "/src/venv", "/home/u/ws/venv"});
  ASSERT_GE(home, 0);
  EXPECT_LT(home, workspace);
  EXPECT_LT(workspace, venv);
  EXPECT_GE(index_of(argv, {"--tmpfs", "/tmp"}), 0);
}

TEST(BwrapCommandTest, OnOnePathReadOnlyAndMasksWin) {
  BwrapCommand command("bwrap");
  command.add({Kind::kReadOnlyBind, "/ws", "/ws", std::nullopt})
      .add({Kind::kBind, "/ws", "/ws", std::nullopt})
      .add({Kind::kMaskFile, "", "/etc/shadow", std::nullopt})
      .add({Kind::kReadOnlyBind, "/etc", "/etc", std::nullopt})
      .add({Kind::kMaskDir, "", "/etc/ssl/private", std::nullopt});
  auto argv = built(command);
  EXPECT_LT(index_of(argv, {"--bind", "/ws", "/ws"}), index_of(argv, {"--ro-bind", "/ws", "/ws"}));
  EXPECT_LT(index_of(argv, {"--ro-bind", "/etc", "/etc"}),
            index_of(argv, {"--ro-bind", "/dev/null", "/etc/shadow"}));
  EXPECT_GE(index_of(argv, {"--tmpfs", "/etc/ssl/private", "--remount-ro", "/etc/ssl/private"}), 0);
}

TEST(BwrapCommandTest, ReadOnlyRemountsComeLastWithTheRootAtTheEnd) {
  BwrapCommand command("bwrap");
  command.remount_read_only("/").remount_read_only("/dev");
  command.add({Kind::kDev, "", "/dev", std::nullopt})
      .add({Kind::kTmpfs, "", "/dev/shm", 1024})
      .chdir("/tmp");
  auto argv = built(command);
  auto shm = index_of(argv, {"--tmpfs", "/dev/shm"});
  auto dev = index_of(argv, {"--remount-ro", "/dev"});
  auto root = index_of(argv, {"--remount-ro", "/"});
  ASSERT_GE(shm, 0);
  EXPECT_LT(shm, dev);
  EXPECT_LT(dev, root);
  EXPECT_LT(root, index_of(argv, {"--chdir", "/tmp"}));
}

TEST(BwrapCommandTest, PathsTravelAsSingleArgumentsWhateverTheyContain) {
  BwrapCommand command("bwrap");
  command.add({Kind::kBind, "/w/a b;$(rm -rf ~)", "/w/a b;$(rm -rf ~)", std::nullopt});
  auto argv = built(command, {"/bin/echo", "x y"});
  EXPECT_GE(index_of(argv, {"--bind", "/w/a b;$(rm -rf ~)", "/w/a b;$(rm -rf ~)"}), 0);
  EXPECT_EQ(argv.back(), "x y");
}

TEST(BwrapCommandTest, RefusesWhatIsNotANormalAbsolutePath) {
  for (const char* bad : {"relative", "/a/../etc", "/a/./b", "/a//b", "/a/", ""}) {
    BwrapCommand command("bwrap");
    command.add({Kind::kBind, "/ok", bad, std::nullopt});
    EXPECT_NE(refusal(command), "<accepted>") << bad;
    BwrapCommand source("bwrap");
    source.add({Kind::kReadOnlyBind, bad, "/ok", std::nullopt});
    EXPECT_NE(refusal(source), "<accepted>") << bad;
  }
  BwrapCommand root("bwrap");
  root.add({Kind::kBind, "/", "/", std::nullopt});
  EXPECT_NE(refusal(root), "<accepted>");
  BwrapCommand chdir("bwrap");
  chdir.chdir("ws");
  EXPECT_NE(refusal(chdir), "<accepted>");
}

TEST(BwrapCommandTest, RefusesAnEmptyCommandAndNegativeDescriptors) {
  BwrapCommand command("bwrap");
  EXPECT_EQ(refusal(command, {}), "bubblewrap command: empty command");
  EXPECT_EQ(refusal(command, {""}), "bubblewrap command: empty command");
  BwrapCommand info("bwrap");
  info.info_fd(-1);
  EXPECT_EQ(refusal(info), "bubblewrap command: negative --info-fd");
  BwrapCommand seccomp("bwrap");
  seccomp.seccomp_fd(-1);
  EXPECT_EQ(refusal(seccomp), "bubblewrap command: negative --seccomp fd");
}

TEST(BwrapCommandTest, AHostNameNeedsItsOwnUtsNamespaceAndAPlainName) {
  BwrapCommand shared("bwrap");
  shared.hostname("openai4s");
  EXPECT_EQ(refusal(shared), "bubblewrap command: --hostname needs a UTS namespace of its own");
  BwrapCommand own("bwrap");
  own.unshare(Namespace::kUts).hostname("openai4s");
  auto argv = built(own);
  EXPECT_GE(index_of(argv, {"--unshare-uts"}), 0);
  EXPECT_GE(index_of(argv, {"--hostname", "openai4s"}), 0);
  for (const char* bad : {"", "a b", "Host", "x\n", "--x\nlong"}) {
    BwrapCommand odd("bwrap");
    odd.unshare(Namespace::kUts).hostname(bad);
    EXPECT_NE(refusal(odd).find("not a host name"), std::string::npos) << bad;
  }
}

TEST(PathHelpersTest, NormalPathsDepthAndContainment) {
  EXPECT_TRUE(is_normal_absolute_path("/"));
  EXPECT_TRUE(is_normal_absolute_path("/a/b.c/..d"));
  EXPECT_FALSE(is_normal_absolute_path(std::string("/a\0b", 4)));
  EXPECT_EQ(path_depth("/"), 0U);
  EXPECT_EQ(path_depth("/a/b/c"), 3U);
  EXPECT_TRUE(o4s::path_contains("/a", "/a"));
  EXPECT_TRUE(o4s::path_contains("/a", "/a/b"));
  EXPECT_FALSE(o4s::path_contains("/a", "/ab"));
  EXPECT_TRUE(o4s::path_contains("/", "/x"));
  EXPECT_FALSE(o4s::path_contains("/a/b", "/a"));
}

TEST(PathHelpersTest, AbsolutePathResolvesNothing) {
  const std::string here = std::filesystem::current_path().string();
  EXPECT_EQ(o4s::absolute_path("/a/../b/./c"), "/a/../b/./c");
  EXPECT_EQ(o4s::absolute_path("x/.."), here + "/x/..");
  EXPECT_EQ(o4s::absolute_path(""), here);
}

TEST(PathHelpersTest, DirectoriesBetweenAnAncestorAndAPath) {
  using Dirs = std::vector<std::string>;
  EXPECT_EQ(o4s::directories_between("/w", "/w/a/b/c"), (Dirs{"/w/a", "/w/a/b"}));
  EXPECT_EQ(o4s::directories_between("/w", "/w/a"), Dirs{});
  EXPECT_EQ(o4s::directories_between("/w", "/w"), Dirs{});
  EXPECT_EQ(o4s::directories_between("/w", "/wx/a/b"), Dirs{});
  EXPECT_EQ(o4s::directories_between("/w/a", "/w"), Dirs{});
  EXPECT_EQ(o4s::directories_between("/", "/a/b/c"), (Dirs{"/a", "/a/b"}));
}

}  // namespace
}  // namespace o4s::sandbox
