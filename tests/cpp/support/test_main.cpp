// The main of every test binary. SIGPIPE is ignored process-wide because many
// tests write to pipes whose reader (a child, a closed fd) may already be gone;
// a write must fail with EPIPE there, not kill the test binary. This is also
// what every embedder does (CPython ignores SIGPIPE at startup).
#include <gtest/gtest.h>
#include <signal.h>

int main(int argc, char** argv) {
  ::signal(SIGPIPE, SIG_IGN);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
