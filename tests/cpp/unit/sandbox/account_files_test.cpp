// The sandbox's own /etc/passwd and /etc/group: root, nobody and the
// kernel's user, and nothing of the host's.
#include "sandbox/account_files.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

namespace o4s::sandbox {
namespace {

TEST(AccountFiles, NameTheKernelsUserBetweenRootAndNobody) {
  EXPECT_EQ(passwd_text(1328807936, 1328807936, "/root"),
            "root:x:0:0:root:/root:/usr/sbin/nologin\n"
            "openai4s:x:1328807936:1328807936:openai4s:/root:/bin/sh\n"
            "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n");
  EXPECT_EQ(group_text(1328807936), "root:x:0:\nopenai4s:x:1328807936:\nnogroup:x:65534:\n");
}

TEST(AccountFiles, AKernelRunningAsNobodyOrRootIsNotNamedTwice) {
  EXPECT_EQ(passwd_text(65534, 65534, "/home/x").find("openai4s"), std::string::npos);
  EXPECT_EQ(group_text(0).find("openai4s"), std::string::npos);
}

TEST(AccountFiles, TheHostTableNamesLoopbackAndTheSandboxOnly) {
  EXPECT_EQ(hosts_text("openai4s"),
            "127.0.0.1\tlocalhost openai4s\n::1\tlocalhost ip6-localhost ip6-loopback openai4s\n");
}

TEST(AccountFiles, EachSandboxGetsAMachineIdOfItsOwn) {
  const std::string first = machine_id_text();
  ASSERT_EQ(first.size(), 33U);
  EXPECT_EQ(first.find_first_not_of("0123456789abcdef"), 32U);
  EXPECT_NE(first, machine_id_text());
}

TEST(AccountFiles, TheBoundFileIsSealed) {
  auto fd = sealed_memory_file("passwd", "root:x:0:0::/:/bin/sh\n");
  ASSERT_TRUE(fd);
  char buffer[64] = {};
  ASSERT_EQ(::pread(fd.value().get(), buffer, sizeof buffer, 0), 22);
  EXPECT_EQ(std::string(buffer), "root:x:0:0::/:/bin/sh\n");
  EXPECT_EQ(::pwrite(fd.value().get(), "x", 1, 0), -1);
  EXPECT_NE(::ftruncate(fd.value().get(), 0), 0);
}

}  // namespace
}  // namespace o4s::sandbox
