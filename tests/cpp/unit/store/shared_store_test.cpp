// One Store shared by many threads, as the server's request threads share
// it: every public method runs under the store's one (plain, non-recursive)
// mutex, so concurrent calls must neither deadlock, fail nor lose a write.
// Also what a ThreadSanitizer build checks for data races.
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "host/host_methods.h"
#include "store_fixture.h"

namespace o4s::store::testing {
namespace {

using SharedStoreTest = StoreTest;

constexpr int kThreads = 4;
constexpr int kRounds = 8;

// One thread's share: a frame tree, a setting, a rule, a permission request
// taken to a terminal state, an audit row, and the reads that follow each.
void one_round(Store& store, int thread, int round, std::atomic<int>& failures) {
  auto fail_unless = [&](bool ok) {
    if (!ok) failures.fetch_add(1);
  };
  const std::string tag = std::to_string(thread) + "-" + std::to_string(round);
  NewFrame root;
  root.project_id = "p" + std::to_string(thread);
  auto root_id = store.new_frame(root);
  fail_unless(root_id.ok());
  if (!root_id.ok()) return;
  NewFrame child;
  child.parent_id = root_id.value();
  auto child_id = store.new_frame(child);
  fail_unless(child_id.ok());
  if (child_id.ok()) {
    auto scope = store.resolve_frame_scope(child_id.value());
    fail_unless(scope.ok() && scope->root_frame_id == root_id.value() &&
                scope->project_id == root.project_id);
  }
  fail_unless(store.set_setting("key-" + tag, tag).ok());
  auto setting = store.get_setting("key-" + tag);
  fail_unless(setting.ok() && setting.value() == tag);
  fail_unless(
      store.set_permission_rule("conversation", root_id.value(), "read_file", tag, "allow").ok());
  auto rules = store.rules_for(root_id.value(), root.project_id);
  fail_unless(rules.ok());
  fail_unless(store.seed_default_permission_rules(host::default_rules()).ok());

  PermissionRequest request;
  request.root_frame_id = root_id.value();
  request.tool = "bash";
  request.target = tag;
  auto decision = store.create_permission_request(request);
  fail_unless(decision.ok());
  if (decision.ok()) {
    PermissionResolution allowed;
    allowed.state = "allowed";
    fail_unless(store.resolve_permission_request(decision.value(), allowed).ok());
    auto stored = store.get_permission_request(decision.value());
    fail_unless(stored.ok() && stored.value() && (*stored.value())["state"] == "allowed");
  }

  HostCallRecord call;
  call.method = "read_file";
  call.frame_id = child_id.ok() ? child_id.value() : root_id.value();
  call.args = Json::array({tag});
  fail_unless(store.log_host_call(call).ok());
}

TEST_F(SharedStoreTest, ConcurrentCallsFromManyThreadsAllLand) {
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRounds; ++r) one_round(store(), t, r, failures);
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);

  constexpr int kTotal = kThreads * kRounds;
  RawDb raw(db_path());
  EXPECT_EQ(raw.integer("SELECT count(*) FROM frames"), 2 * kTotal);
  EXPECT_EQ(raw.integer("SELECT count(*) FROM settings WHERE key LIKE 'key-%'"), kTotal);
  EXPECT_EQ(raw.integer("SELECT count(*) FROM permission_rules WHERE scope = 'conversation'"),
            kTotal);
  EXPECT_EQ(raw.integer("SELECT count(*) FROM permission_requests WHERE state = 'allowed'"),
            kTotal);
  EXPECT_EQ(raw.integer("SELECT count(*) FROM host_call_log"), kTotal);
  // The audit log's created_at stays strictly increasing under contention.
  EXPECT_EQ(raw.integer("SELECT count(DISTINCT created_at) FROM host_call_log"), kTotal);
}

}  // namespace
}  // namespace o4s::store::testing
