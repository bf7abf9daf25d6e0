// The sandbox's resource envelope and identity without a real cgroupfs or
// root: cgroup v2 (which this project's CI host does not run) is exercised
// against a plain directory laid out like a delegated cgroup, so every file
// the envelope writes and reads is checked; the v1 path runs for real in the
// Python sandbox tests on a v1 host.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "sandbox/sandbox_cgroup.h"
#include "sandbox/sandbox_identity.h"
#include "support/proc_helpers.h"

namespace o4s::sandbox {
namespace {

using o4s::testing::TempDir;

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void put(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// A delegated v2 cgroup: controllers available, none yet enabled below.
std::map<std::string, CgroupBase> fake_v2(const std::string& dir) {
  put(dir + "/cgroup.controllers", "cpuset cpu io memory pids\n");
  put(dir + "/cgroup.subtree_control", "\n");
  return {{"memory", {dir, 2}}, {"pids", {dir, 2}}, {"cpuacct", {dir, 2}}};
}

TEST(SandboxCgroupV2Test, OneDirectoryCarriesTheMemoryAndProcessLimits) {
  TempDir base;
  auto made = SandboxCgroup::create({1ULL << 30, 64, std::nullopt}, fake_v2(base.path()), "k1");
  ASSERT_TRUE(made.ok()) << made.error().message;
  const std::string dir = base.path() + "/k1";
  EXPECT_EQ(slurp(dir + "/memory.max"), "1073741824");
  EXPECT_EQ(slurp(dir + "/pids.max"), "64");
  // The controllers were delegated to the child (one write each).
  EXPECT_NE(slurp(base.path() + "/cgroup.subtree_control").find("+"), std::string::npos);
  EXPECT_NE((*made)->mechanisms().memory.find("cgroup v2"), std::string::npos);
  EXPECT_NE((*made)->mechanisms().processes.find("cgroup v2"), std::string::npos);
  EXPECT_TRUE((*made)->mechanisms().cpu.empty()) << "no CPU limit was asked for";

  ASSERT_TRUE((*made)->attach(4242).ok());
  EXPECT_EQ(slurp(dir + "/cgroup.procs"), "4242\n");
}

TEST(SandboxCgroupV2Test, AnOomKillSinceTheGenerationBeganNamesTheMemoryLimit) {
  TempDir base;
  auto made = SandboxCgroup::create({1ULL << 30, 64, std::nullopt}, fake_v2(base.path()), "k2");
  ASSERT_TRUE(made.ok()) << made.error().message;
  const std::string dir = base.path() + "/k2";
  put(dir + "/memory.events", "low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n");
  put(dir + "/pids.events", "max 0\n");
  (*made)->begin_generation();
  EXPECT_FALSE((*made)->limit_hit()) << "old kills belong to an earlier worker";
  put(dir + "/memory.events", "low 0\nhigh 0\nmax 9\noom 2\noom_kill 2\n");
  auto hit = (*made)->limit_hit();
  ASSERT_TRUE(hit);
  EXPECT_NE(hit->find("memory limit"), std::string::npos) << *hit;
  EXPECT_NE(hit->find("1 process"), std::string::npos) << *hit;
}

TEST(SandboxCgroupV2Test, AWatchedCgroupIsKilledThroughCgroupKill) {
  TempDir base;
  auto bases = fake_v2(base.path());
  auto made = SandboxCgroup::create({1ULL << 30, std::nullopt, 2}, bases, "k4");
  ASSERT_TRUE(made.ok()) << made.error().message;
  const std::string dir = base.path() + "/k4";
  put(dir + "/cpu.stat", "usage_usec 1000000\n");
  put(dir + "/cgroup.kill", "");  // the kernel's file, written to kill
  (*made)->begin_generation();
  EXPECT_EQ((*made)->cpu_usage_ns(), 1000000000ULL);
  EXPECT_FALSE((*made)->limit_hit());
  // 2.5 s more: over the 2 s budget of this generation.
  put(dir + "/cpu.stat", "usage_usec 3500000\n");
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!(*made)->limit_hit() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  auto hit = (*made)->limit_hit();
  ASSERT_TRUE(hit) << "the watchdog never fired";
  EXPECT_NE(hit->find("CPU limit"), std::string::npos) << *hit;
  EXPECT_EQ(slurp(dir + "/cgroup.kill"), "1");
  // A new generation (a restart) gets a fresh budget.
  (*made)->begin_generation();
  EXPECT_FALSE((*made)->limit_hit());
}

TEST(SandboxIdentityTest, ARootDaemonNeverHandsTheSandboxUidZero) {
  SandboxSettings settings;
  // Only the facility probe runs without a lease: as nobody, shared.
  auto nobody = choose_identity(settings, 0, 0, std::nullopt);
  EXPECT_TRUE(nobody.dropped);
  EXPECT_EQ(nobody.uid, kNobody);
  EXPECT_EQ(nobody.gid, kNobody);
  EXPECT_FALSE(nobody.own_uid);
  auto own = choose_identity(settings, 0, 0, 0x4F340007U);
  EXPECT_TRUE(own.dropped && own.own_uid);
  EXPECT_EQ(own.uid, 0x4F340007U);
  EXPECT_EQ(own.gid, 0x4F340007U);
  EXPECT_TRUE(own.shared.empty()) << own.shared;
  settings.sandbox_uid = 2000;
  auto configured = choose_identity(settings, 0, 0, 0x4F340007U);
  EXPECT_EQ(configured.uid, 2000u);
  EXPECT_EQ(configured.gid, 2000u);
  EXPECT_FALSE(configured.own_uid);
  EXPECT_NE(configured.shared.find("OPENAI4S_SANDBOX_UID 2000 is one fixed uid"), std::string::npos)
      << configured.shared;
  settings.sandbox_gid = 3000;
  EXPECT_EQ(choose_identity(settings, 0, 0, std::nullopt).gid, 3000u);
  // A user daemon keeps its own ids: bubblewrap maps the sandbox to them,
  // and the status says what its kernels then share.
  auto user = choose_identity(settings, 1000, 100, std::nullopt);
  EXPECT_FALSE(user.dropped);
  EXPECT_EQ(user.uid, 1000u);
  EXPECT_NE(user.shared.find("inotify instances"), std::string::npos) << user.shared;
}

// The workspace is shared with the sandbox uid by an ACL entry, never by a
// change of owner (git refuses a repository whose root changed hands).
TEST(SandboxIdentityTest, TheWorkspaceIsSharedByAnAclEntryAndKeepsItsOwner) {
  TempDir workspace;
  ASSERT_EQ(::chmod(workspace.path().c_str(), 0750), 0);
  SandboxIdentity identity;
  identity.uid = 54321;
  identity.gid = 54321;
  identity.dropped = true;
  Status handed = hand_over_workspace(identity, workspace.path());
  if (!handed && handed.error().message.find("supported") != std::string::npos) {
    GTEST_SKIP() << "no POSIX ACLs here: " << handed.error().message;
  }
  ASSERT_TRUE(handed.ok()) << handed.error().message;
  struct stat st {};
  ASSERT_EQ(::stat(workspace.path().c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, ::getuid());
  char acl[256];
  ssize_t n = ::getxattr(workspace.path().c_str(), "system.posix_acl_access", acl, sizeof acl);
  ASSERT_GT(n, 4);
  bool granted = false;
  for (ssize_t at = 4; at + 8 <= n; at += 8) {
    std::uint16_t tag = 0, perm = 0;
    std::uint32_t id = 0;
    std::memcpy(&tag, acl + at, 2);
    std::memcpy(&perm, acl + at + 2, 2);
    std::memcpy(&id, acl + at + 4, 4);
    if (tag == 0x02 && id == 54321) granted = perm == 7;
  }
  EXPECT_TRUE(granted);
  // Everyone else's access is what the mode said: group r-x, others none.
  EXPECT_EQ(st.st_mode & 07, 0U);
  // Idempotent: a restart hands it over again without piling up entries.
  ASSERT_TRUE(hand_over_workspace(identity, workspace.path()).ok());
  EXPECT_EQ(::getxattr(workspace.path().c_str(), "system.posix_acl_access", acl, sizeof acl), n);
}

TEST(SandboxIdentityTest, KernelsStartingAtOnceKeepEveryOnesAccessToASharedAncestor) {
  // A 0700 directory above each kernel's workspace (the MCP server's data
  // directory): each kernel's uid gets search access by an ACL entry, read,
  // changed and written whole. Kernels starting at once must not lose each
  // other's entries (a lost one made that kernel's bubblewrap fail: EACCES).
  TempDir root;
  ASSERT_EQ(::chmod(root.path().c_str(), 0700), 0);
  constexpr std::uint32_t kKernels = 16;
  std::vector<std::string> workspaces;
  for (std::uint32_t i = 0; i < kKernels; ++i) {
    workspaces.push_back(root.path() + "/kernel-" + std::to_string(i));
    ASSERT_EQ(::mkdir(workspaces.back().c_str(), 0700), 0);
  }
  std::vector<Status> results(kKernels);
  std::vector<std::thread> threads;
  for (std::uint32_t i = 0; i < kKernels; ++i) {
    threads.emplace_back([&, i] {
      SandboxIdentity identity;
      identity.uid = identity.gid = 60000u + i;
      identity.dropped = true;
      results[i] = hand_over_workspace(identity, workspaces[i]);
    });
  }
  for (auto& thread : threads) thread.join();
  for (const Status& result : results) {
    if (!result && result.error().message.find("supported") != std::string::npos) {
      GTEST_SKIP() << "no POSIX ACLs here: " << result.error().message;
    }
    ASSERT_TRUE(result.ok()) << result.error().message;
  }
  std::vector<std::uint32_t> ids = acl_user_ids(root.path());
  for (std::uint32_t i = 0; i < kKernels; ++i) {
    EXPECT_NE(std::find(ids.begin(), ids.end(), 60000u + i), ids.end()) << "uid " << 60000u + i;
  }
}

TEST(SandboxIdentityTest, SettingsRefuseRootAndNonNumericIds) {
  for (const char* bad : {"0", "-1", "root", "4294967295", "12a"}) {
    auto parsed = settings_from_environment({{"OPENAI4S_SANDBOX_UID", bad}}, 1ULL << 34);
    EXPECT_FALSE(parsed.ok()) << bad;
  }
  auto parsed = settings_from_environment(
      {{"OPENAI4S_SANDBOX_UID", "1234"}, {"OPENAI4S_SANDBOX_GID", "99"}}, 1ULL << 34);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(parsed->sandbox_uid, 1234u);
  EXPECT_EQ(parsed->sandbox_gid, 99u);
}

TEST(SandboxIdentityTest, SettingsTakeTheUidRangeAndRunDirectory) {
  auto defaults = settings_from_environment({}, 1ULL << 34);
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->uid_range.first, kDefaultUidRange.first);
  EXPECT_EQ(defaults->uid_run_directory, kDefaultRunDirectory);
  auto parsed = settings_from_environment(
      {{"OPENAI4S_SANDBOX_UID_RANGE", "200000-200099"}, {"OPENAI4S_SANDBOX_RUN_DIR", "/run/x"}},
      1ULL << 34);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(parsed->uid_range.first, 200000u);
  EXPECT_EQ(parsed->uid_range.last, 200099u);
  EXPECT_EQ(parsed->uid_run_directory, "/run/x");
  EXPECT_FALSE(settings_from_environment({{"OPENAI4S_SANDBOX_UID_RANGE", "0-9"}}, 1ULL << 34).ok());
  EXPECT_FALSE(settings_from_environment({{"OPENAI4S_SANDBOX_RUN_DIR", "run"}}, 1ULL << 34).ok());
}

}  // namespace
}  // namespace o4s::sandbox
