// What a sandbox may see and write, decided before bubblewrap runs: the
// system layout with /etc's secrets masked, the runtime roots derived from an
// interpreter path, the workspace check, and locating a pids cgroup.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "sandbox/bubblewrap_launcher.h"
#include "sandbox/sandbox_cgroup.h"
#include "sandbox/system_layout.h"
#include "support/proc_helpers.h"

namespace o4s::sandbox {
namespace {

using Kind = FsOperation::Kind;
using o4s::testing::TempDir;
namespace fs = std::filesystem;

bool has_op(const std::vector<FsOperation>& ops, Kind kind, const std::string& target,
            const std::string& source = "") {
  return std::any_of(ops.begin(), ops.end(), [&](const FsOperation& op) {
    return op.kind == kind && op.target == target && (source.empty() || op.source == source);
  });
}

void make_file(const std::string& path, unsigned mode) {
  std::ofstream(path) << "x";
  ::chmod(path.c_str(), mode);
}

TEST(SystemLayoutTest, MergedUsrBecomesSymlinksAndSecretsInEtcAreMasked) {
  TempDir root;
  const std::string r = root.path();
  fs::create_directories(r + "/usr/bin");
  fs::create_directories(r + "/etc/ssl/private");
  fs::create_directories(r + "/etc/ssl/certs");
  fs::create_directories(r + "/sys/devices/system/cpu");
  fs::create_symlink("usr/bin", r + "/bin");
  fs::create_symlink("usr/lib", r + "/lib");
  make_file(r + "/etc/passwd", 0644);
  make_file(r + "/etc/shadow", 0640);
  make_file(r + "/etc/ssl/certs/ca.pem", 0644);
  ::chmod((r + "/etc/ssl/private").c_str(), 0700);
  make_file(r + "/etc/ssl/private/key.pem", 0600);
  fs::create_symlink("/etc/shadow", r + "/etc/shadow-link");

  SystemLayout layout = build_system_layout(r);
  const auto& ops = layout.operations;
  const auto masks = masks_for(layout, HostReader{0, {0}});  // root reads every secret
  EXPECT_TRUE(has_op(ops, Kind::kReadOnlyBind, "/usr", r + "/usr"));
  EXPECT_TRUE(has_op(ops, Kind::kReadOnlyBind, "/etc", r + "/etc"));
  EXPECT_TRUE(has_op(ops, Kind::kSymlink, "/bin", "usr/bin"));
  EXPECT_TRUE(has_op(ops, Kind::kSymlink, "/lib", "usr/lib"));
  EXPECT_FALSE(has_op(ops, Kind::kReadOnlyBind, "/sbin"));  // absent on this root
  EXPECT_TRUE(has_op(ops, Kind::kReadOnlyBind, "/sys/devices/system/cpu"));
  EXPECT_TRUE(has_op(masks, Kind::kMaskFile, "/etc/shadow"));
  EXPECT_TRUE(has_op(masks, Kind::kMaskDir, "/etc/ssl/private"));
  // A masked directory is not descended into; readable files stay; symlinks
  // are judged where they point.
  EXPECT_FALSE(has_op(masks, Kind::kMaskFile, "/etc/ssl/private/key.pem"));
  EXPECT_FALSE(has_op(masks, Kind::kMaskFile, "/etc/passwd"));
  EXPECT_FALSE(has_op(masks, Kind::kMaskFile, "/etc/shadow-link"));
  EXPECT_EQ(layout.secrets.size(), 2U);
  EXPECT_EQ(masks.size(), 2U);
  // The layout's own operations carry no mask: they are the reader's.
  EXPECT_FALSE(has_op(ops, Kind::kMaskFile, "/etc/shadow"));
}

bool masks(const BwrapCommand& command, const std::string& target) {
  auto argv = command.build({"/bin/true"});
  if (!argv) return false;
  const auto& a = argv.value();
  for (std::size_t i = 0; i + 2 < a.size(); ++i) {
    if (a[i] == "--ro-bind" && a[i + 1] == "/dev/null" && a[i + 2] == target) return true;
  }
  return false;
}

TEST(IsolationCommandTest, ProcLeaksAreMaskedForIdsTheirModesLetIn) {
  struct stat keys {
  }, kpage{};
  if (::stat("/proc/keys", &keys) != 0 || ::stat("/proc/kpagecount", &kpage) != 0) {
    GTEST_SKIP() << "this procfs has no /proc/keys or /proc/kpagecount";
  }
  if (!(keys.st_mode & S_IROTH) || (kpage.st_mode & (S_IROTH | S_IWOTH)) || kpage.st_uid != 0) {
    GTEST_SKIP() << "this kernel's modes differ (keys world-readable, kpagecount root-only)";
  }
  const HostReader root{0, {0}};
  const HostReader nobody{65534, {65534}};
  auto as_root = isolation_command("/usr/bin/bwrap", SandboxSettings{}, root);
  auto as_nobody = isolation_command("/usr/bin/bwrap", SandboxSettings{}, nobody);
  EXPECT_TRUE(masks(as_root, "/proc/keys"));
  EXPECT_TRUE(masks(as_root, "/proc/kpagecount"));
  EXPECT_TRUE(masks(as_nobody, "/proc/keys"));         // its mode lets anyone read
  EXPECT_FALSE(masks(as_nobody, "/proc/kpagecount"));  // root's alone: the mode guards it
  // bubblewrap's init runs as the worker's uid, whoever that is.
  EXPECT_TRUE(masks(as_nobody, "/proc/1/mem"));
}

// A POSIX access ACL granting `uid` read on top of `mode` (the kernel's xattr
// layout: version 2, then tag/perm/id entries sorted by tag).
bool grant_read_acl(const std::string& path, unsigned mode, std::uint32_t uid) {
  struct Entry {
    std::uint16_t tag, perm;
    std::uint32_t id;
  };
  const std::uint32_t none = 0xffffffffU;
  const Entry entries[] = {{0x01, static_cast<std::uint16_t>((mode >> 6) & 7), none},
                           {0x02, 4, uid},
                           {0x04, static_cast<std::uint16_t>((mode >> 3) & 7), none},
                           {0x10, 4, none},
                           {0x20, static_cast<std::uint16_t>(mode & 7), none}};
  std::string value(4 + 8 * std::size(entries), '\0');
  const std::uint32_t version = 2;
  std::memcpy(value.data(), &version, 4);
  for (std::size_t i = 0; i < std::size(entries); ++i) {
    std::memcpy(value.data() + 4 + 8 * i, &entries[i].tag, 2);
    std::memcpy(value.data() + 6 + 8 * i, &entries[i].perm, 2);
    std::memcpy(value.data() + 8 + 8 * i, &entries[i].id, 4);
  }
  return ::setxattr(path.c_str(), "system.posix_acl_access", value.data(), value.size(), 0) == 0;
}

TEST(SystemLayoutTest, ASecretIsMaskedForEveryIdThatCouldReadItAndOnlyThose) {
  TempDir root;
  const std::string r = root.path();
  fs::create_directories(r + "/etc/private");
  make_file(r + "/etc/key", 0640);
  ::chmod((r + "/etc/private").c_str(), 0710);
  // Created by this test, so owned by its effective ids.
  const uid_t owner = ::geteuid();
  const gid_t group = ::getegid();
  const uid_t stranger = owner == 4242 ? 4343 : 4242;
  const gid_t other_group = group == 4242 ? 4343 : 4242;

  SystemLayout layout = build_system_layout(r);
  ASSERT_EQ(layout.secrets.size(), 2U);
  auto count = [&](HostReader reader) { return masks_for(layout, reader).size(); };
  EXPECT_EQ(count({0, {other_group}}), 2U);                // root
  EXPECT_EQ(count({owner, {other_group}}), 2U);            // the owner
  EXPECT_EQ(count({stranger, {other_group, group}}), 2U);  // a member of the group
  EXPECT_EQ(count({stranger, {other_group}}), 0U);         // neither: the modes bar it

  // A named-user ACL entry lets a stranger in whatever the mode says.
  if (!grant_read_acl(r + "/etc/key", 0640, stranger)) {
    GTEST_SKIP() << "this filesystem keeps no POSIX ACLs: " << std::strerror(errno);
  }
  layout = build_system_layout(r);
  auto masks = masks_for(layout, HostReader{stranger, {other_group}});
  EXPECT_EQ(masks.size(), 1U);
  EXPECT_TRUE(has_op(masks, Kind::kMaskFile, "/etc/key"));
}

TEST(RuntimeRootsTest, AnInterpreterContributesItsLexicalAndResolvedPrefixes) {
  TempDir dir;
  const std::string d = dir.path();
  fs::create_directories(d + "/base/bin");
  fs::create_directories(d + "/venv/bin");
  make_file(d + "/venv/pyvenv.cfg", 0644);
  make_file(d + "/base/bin/python3.11", 0755);
  fs::create_symlink(d + "/base/bin/python3.11", d + "/venv/bin/python");
  fs::create_directories(d + "/src/pkg");

  auto roots = runtime_roots({d + "/venv/bin/python", d + "/src/pkg", "python3", "", "/"});
  EXPECT_EQ(roots, (std::vector<std::string>{d + "/venv", d + "/base", d + "/src/pkg"}));
}

TEST(RuntimeRootsTest, ARootInsideAnotherIsNotBoundTwiceUnlessAWritableBindHoldsIt) {
  TempDir dir;
  const std::string d = dir.path();
  fs::create_directories(d + "/python/pkg");
  fs::create_directories(d + "/python/ws/pkg");
  fs::create_symlink(d + "/python", d + "/link");
  const std::vector<std::string> roots = {d + "/python", d + "/python/pkg", d + "/python/ws/pkg",
                                          d + "/link/pkg"};
  EXPECT_TRUE(shown_by_another_root(d + "/python/pkg", roots, {d + "/elsewhere"}));
  EXPECT_FALSE(shown_by_another_root(d + "/python", roots, {}));
  // The workspace's read-write bind would show it writable without its own.
  EXPECT_FALSE(shown_by_another_root(d + "/python/ws/pkg", roots, {d + "/python/ws"}));
  // Through a link, the path inside need not lead where the outer root does.
  EXPECT_FALSE(shown_by_another_root(d + "/link/pkg", {d + "/link", d + "/link/pkg"}, {}));
}

TEST(RuntimeRootsTest, TheFilesystemRootIsNeverARoot) {
  // /bin/sh's lexical grandparent is "/".
  auto roots = runtime_roots({"/bin/sh"});
  EXPECT_EQ(std::count(roots.begin(), roots.end(), "/"), 0);
}

TEST(RuntimeRootsTest, AShallowInterpreterNeverExposesAWholeTopLevelDirectory) {
  // /tmp/x/python's grandparent is /tmp: every temp file of the host. Its
  // directory is the root instead; a file right under a top-level directory
  // is bound alone.
  TempDir dir;  // a directory directly under the temp root, e.g. /tmp/abc
  const std::string d = dir.path();
  if (std::count(d.begin() + 1, d.end(), '/') != 1) GTEST_SKIP() << d << " is not two levels deep";
  make_file(d + "/python", 0755);
  auto roots = runtime_roots({d + "/python"});
  EXPECT_EQ(roots, (std::vector<std::string>{d}));
  const std::string top = d.substr(0, d.find('/', 1));  // e.g. /tmp
  for (const auto& root : roots) EXPECT_NE(root, top);
}

TEST(RuntimeRootsTest, ALinkOutsideAVenvShowsOnlyItselfNotTheDirectoriesAroundIt) {
  // ~/bin/python -> .../base/bin/python3.11: the link's grandparent (the
  // home) holds no interpreter and is not shown; the link itself is.
  TempDir dir;
  const std::string d = dir.path();
  fs::create_directories(d + "/base/bin");
  fs::create_directories(d + "/home/bin");
  make_file(d + "/base/bin/python3.11", 0755);
  fs::create_symlink(d + "/base/bin/python3.11", d + "/home/bin/python");
  auto roots = runtime_roots({d + "/home/bin/python"});
  EXPECT_EQ(roots, (std::vector<std::string>{d + "/home/bin/python", d + "/base"}));
}

TEST(CheckWorkspaceTest, RefusesTheRootSystemDirectoriesAndVirtualFilesystems) {
  auto reason = [](const std::string& path) {
    Status status = check_workspace(path);
    if (status.ok()) return std::string("<accepted>");
    EXPECT_EQ(status.error().code, ErrorCode::kSandboxUnavailable);
    return status.error().message;
  };
  EXPECT_EQ(reason("/"), "the workspace / cannot be sandboxed: it is the filesystem root");
  EXPECT_EQ(reason("/usr"), "the workspace /usr cannot be sandboxed: it contains /usr");
  EXPECT_EQ(reason("/etc"), "the workspace /etc cannot be sandboxed: it contains /etc");
  EXPECT_EQ(reason("/proc/self"),
            "the workspace /proc/self cannot be sandboxed: it is under /proc");
  EXPECT_EQ(reason("/root"), "the workspace /root cannot be sandboxed: it contains /root");
  EXPECT_EQ(reason("/etc/profile.d"),
            "the workspace /etc/profile.d cannot be sandboxed: it is under /etc");
  EXPECT_EQ(reason("/usr/local/lib"),
            "the workspace /usr/local/lib cannot be sandboxed: it is under /usr");
  EXPECT_NE(reason("/nonexistent-o4s").find("not a directory"), std::string::npos);
  TempDir ok;
  EXPECT_EQ(reason(ok.path()), "<accepted>");
}

TEST(BubblewrapPrepareTest, AWorkspaceThatHoldsTheRuntimeIsRefused) {
  TempDir package;
  BubblewrapLauncher launcher("/usr/bin/bwrap", SandboxSettings{});
  LaunchSpec spec;
  spec.request.argv = {"/usr/bin/python3"};
  spec.workspace = package.path();
  spec.runtime_paths = {package.path()};
  auto prepared = launcher.prepare(spec);
  ASSERT_FALSE(prepared.ok());
  EXPECT_EQ(prepared.error().code, ErrorCode::kSandboxUnavailable);
  EXPECT_NE(prepared.error().message.find("choose a workspace outside it"), std::string::npos);
}

TEST(BubblewrapPrepareTest, TheRequestWrapsTheWorkerAndPointsTemporaryFilesInside) {
  TempDir workspace;
  TempDir home;
  BubblewrapLauncher launcher("/usr/bin/bwrap", SandboxSettings{});
  LaunchSpec spec;
  spec.request.argv = {"/usr/bin/python3", "-u", "worker.py"};
  spec.request.env = {"PATH=/usr/bin", "HOME=" + home.path(), "TMPDIR=/host/tmp"};
  spec.workspace = workspace.path();
  auto prepared = launcher.prepare(spec);
  ASSERT_TRUE(prepared.ok()) << prepared.error().message;
  const proc::SpawnRequest& request = prepared.value()->request();
  EXPECT_EQ(request.argv.front(), "/usr/bin/bwrap");
  auto separator = std::find(request.argv.begin(), request.argv.end(), "--");
  ASSERT_NE(separator, request.argv.end());
  EXPECT_EQ(std::vector<std::string>(separator + 1, request.argv.end()), spec.request.argv);
  EXPECT_EQ(std::count(request.argv.begin(), request.argv.end(), "--new-session"), 0);
  const std::size_t machine_id = ::access("/etc/machine-id", F_OK) == 0 ? 1 : 0;
  const std::size_t boot_id = ::access("/proc/sys/kernel/random/boot_id", F_OK) == 0 ? 1 : 0;
  const std::size_t version = ::access("/proc/version", F_OK) == 0 ? 1 : 0;
  EXPECT_EQ(request.pass_fds.size(), 6U + machine_id + boot_id + version)
      << "the info pipe, the seccomp program, the workspace's descriptor and the sandbox's own "
         "/etc/passwd, /etc/group, /etc/hosts (and /etc/machine-id, the boot id and "
         "/proc/version where the host has them)";
  for (const char* file : {"/etc/passwd", "/etc/group", "/etc/hosts"}) {
    auto at = std::find(request.argv.begin(), request.argv.end(), file);
    ASSERT_NE(at, request.argv.end()) << file;
    EXPECT_EQ(*(at - 2), "--ro-bind-data") << file;
  }
  auto has_env = [&](const std::string& entry) {
    return std::find(request.env.begin(), request.env.end(), entry) != request.env.end();
  };
  EXPECT_TRUE(has_env("TMPDIR=/tmp"));
  EXPECT_TRUE(has_env("MPLCONFIGDIR=/tmp/openai4s-matplotlib"));
  EXPECT_FALSE(has_env("TMPDIR=/host/tmp"));
  EXPECT_TRUE(has_env("HOME=" + home.path()));
}

TEST(PidsHierarchyTest, FindsTheCgroupV1PidsControllerUnderItsMount) {
  const std::string mountinfo =
      "30 25 0:26 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs ro,mode=755\n"
      "38 30 0:33 / /sys/fs/cgroup/pids rw,nosuid - cgroup cgroup rw,pids\n"
      "39 30 0:34 / /sys/fs/cgroup/memory rw,nosuid - cgroup cgroup rw,memory\n";
  const std::string cgroup = "8:pids:/user.slice\n4:memory:/x\n0::/\n";
  auto located = locate_controller(mountinfo, cgroup, "pids");
  ASSERT_TRUE(located.ok()) << located.error().message;
  EXPECT_EQ(located->directory, "/sys/fs/cgroup/pids/user.slice");
  EXPECT_EQ(located->version, 1);
  auto memory = locate_controller(mountinfo, cgroup, "memory");
  ASSERT_TRUE(memory.ok()) << memory.error().message;
  EXPECT_EQ(memory->directory, "/sys/fs/cgroup/memory/x");
}

TEST(PidsHierarchyTest, FallsBackToTheUnifiedHierarchyAndHonoursMountRoots) {
  const std::string mountinfo =
      "29 24 0:25 /ctr /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n";
  auto located = locate_controller(mountinfo, "0::/ctr/job\n", "pids");
  ASSERT_TRUE(located.ok()) << located.error().message;
  EXPECT_EQ(located->directory, "/sys/fs/cgroup/job");
  EXPECT_EQ(located->version, 2);
  // Our cgroup lies outside the mounted subtree: nothing usable.
  EXPECT_FALSE(locate_controller(mountinfo, "0::/elsewhere\n", "pids").ok());
  EXPECT_FALSE(locate_controller("", "0::/\n", "memory").ok());
}

}  // namespace
}  // namespace o4s::sandbox
