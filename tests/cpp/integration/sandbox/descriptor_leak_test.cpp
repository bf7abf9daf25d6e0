// A sandbox launch passes descriptors (bubblewrap's --info-fd and --seccomp),
// and passing must not open the door to everything else: a descriptor the
// host inherited without CLOEXEC (from the shell or daemon that started it)
// must not reach bubblewrap and so the sandboxed cell.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <set>
#include <sstream>

#include "base/pipe.h"
#include "proc/spawn.h"
#include "support/proc_helpers.h"

namespace o4s::proc {
namespace {

using namespace o4s::testing;

std::set<int> child_fds(const SpawnRequest& request) {
  auto spawned = spawn_with_pipes(request);
  EXPECT_TRUE(spawned.ok()) << (spawned.ok() ? "" : spawned.error().message);
  if (!spawned.ok()) return {};
  auto child = adopt(spawned->pid);
  spawned->stdin_write.reset();
  std::string out = read_all_with_timeout(spawned->stdout_read.get(), 10s).value_or("");
  child->wait(10'000ms);
  std::istringstream in(out);
  std::set<int> fds;
  for (int fd; in >> fd;) fds.insert(fd);
  return fds;
}

TEST(DescriptorLeakTest, PassingDescriptorsClosesInheritedOnes) {
  // Stand-ins for descriptors a parent process leaked to us: no CLOEXEC, one
  // below and one above the descriptor we pass.
  UniqueFd low(::open("/dev/null", O_RDONLY));
  UniqueFd high(::fcntl(low.get(), F_DUPFD, 400));
  auto pipe = make_pipe();
  ASSERT_TRUE(pipe.ok());
  UniqueFd pass_read = std::move(pipe->read);
  UniqueFd pass_write = std::move(pipe->write);
  UniqueFd passed(::fcntl(pass_read.get(), F_DUPFD_CLOEXEC, 300));
  ASSERT_TRUE(low && high && passed);
  ASSERT_LT(low.get(), passed.get());

  SpawnRequest request = probe_request({"fds"});
  request.pass_fds = {passed.get()};
  std::set<int> fds = child_fds(request);
  EXPECT_EQ(fds.count(passed.get()), 1U);
  EXPECT_EQ(fds.count(low.get()), 0U) << "a leaked descriptor below the passed one";
  EXPECT_EQ(fds.count(high.get()), 0U) << "a leaked descriptor above the passed one";
  EXPECT_EQ(fds.count(pass_write.get()), 0U);
}

}  // namespace
}  // namespace o4s::proc
