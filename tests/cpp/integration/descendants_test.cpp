// Containment without a PID namespace (proc/descendants.h): a child made a
// subreaper keeps what it orphans in its tree, and a ChildProcess with a
// descendant mark ends that tree at kill_group(), and what still carries the
// mark once the child died on its own.
#include "proc/descendants.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>

#include "base/random_id.h"
#include "proc/child_process.h"
#include "support/proc_helpers.h"

namespace o4s::proc {
namespace {

using namespace o4s::testing;

// A subshell backgrounds a `setsid sleep`, prints its pid and exits: the
// sleep is an orphan in a session of its own. The shell then waits on stdin.
constexpr char kOrphanScript[] = "(setsid sleep 1000 & echo $!); exec cat";

struct Started {
  SpawnedPipes pipes;
  std::unique_ptr<ChildProcess> child;
  pid_t orphan = -1;
  std::string mark;
};

Started start(bool contained) {
  SpawnRequest request;
  request.argv = {"/bin/sh", "-c", kOrphanScript};
  request.env = {"PATH=/usr/bin:/bin"};
  Started s;
  if (contained) {
    s.mark = "O4S_TEST_MARK=" + uuid4();
    request.env.push_back(s.mark);
    request.subreaper = true;
    request.descendant_mark = s.mark;
  }
  auto pipes = spawn_with_pipes(request);
  if (!pipes) std::abort();
  s.child = adopt(pipes->pid);
  s.child->set_descendant_mark(request.descendant_mark);
  s.pipes = std::move(pipes.value());
  auto line = read_line_with_timeout(s.pipes.stdout_read.get(), 10s);
  s.orphan = line ? static_cast<pid_t>(std::stol(*line)) : -1;
  return s;
}

bool in_tree(pid_t root, pid_t pid) {
  auto tree = live_descendants(root);
  return std::any_of(tree.begin(), tree.end(), [&](const Descendant& d) { return d.pid == pid; });
}

TEST(DescendantsTest, ASubreaperKeepsWhatItOrphans) {
  auto s = start(true);
  ASSERT_GT(s.orphan, 0);
  // The subshell has exited; its orphan re-parented to the child.
  ASSERT_TRUE(wait_until([&] { return in_tree(s.pipes.pid, s.orphan); }, 5s));
  s.child->kill_group();
  EXPECT_TRUE(wait_until([&] { return !process_running(s.orphan); }, 5s));
}

TEST(DescendantsTest, WithoutASubreaperTheOrphanLeavesTheTree) {
  auto s = start(false);
  ASSERT_GT(s.orphan, 0);
  EXPECT_TRUE(wait_until([&] { return !in_tree(s.pipes.pid, s.orphan); }, 5s));
  ::kill(s.orphan, SIGKILL);
}

TEST(DescendantsTest, KillDescendantsLeavesTheRootRunning) {
  auto s = start(true);
  ASSERT_GT(s.orphan, 0);
  ASSERT_TRUE(wait_until([&] { return in_tree(s.pipes.pid, s.orphan); }, 5s));
  s.child->end_descendants();
  EXPECT_TRUE(wait_until([&] { return !process_running(s.orphan); }, 5s));
  EXPECT_FALSE(s.child->exited());
  EXPECT_TRUE(live_descendants(s.pipes.pid).empty());
}

TEST(DescendantsTest, ReapingEndsWhatADeadChildOrphaned) {
  auto s = start(true);
  ASSERT_GT(s.orphan, 0);
  // Killed behind the ChildProcess's back: its orphan goes up to init.
  ASSERT_EQ(::kill(s.pipes.pid, SIGKILL), 0);
  ASSERT_TRUE(s.child->wait_exit(10s));
  EXPECT_FALSE(in_tree(s.pipes.pid, s.orphan));
  EXPECT_EQ(s.child->poll(), std::optional<int>(-SIGKILL));
  EXPECT_TRUE(wait_until([&] { return !process_running(s.orphan); }, 5s));
}

TEST(DescendantsTest, TheMarkScanSparesUnmarkedProcesses) {
  auto bystander = start(false);
  ASSERT_GT(bystander.orphan, 0);
  EXPECT_EQ(kill_marked("O4S_TEST_MARK=" + uuid4(), 200ms), 0U);
  EXPECT_TRUE(process_running(bystander.orphan));
  ::kill(bystander.orphan, SIGKILL);
}

}  // namespace
}  // namespace o4s::proc
