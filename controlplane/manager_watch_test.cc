// Watch resume (OpenWatch(since_revision)), the watcher limit, and the
// listings' revision: list-then-watch sees every change after the listing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "controlplane/manager_test_util.h"

namespace lite::controlplane::testing {
namespace {

using lite::v1::Event;
using ::testing::HasSubstr;

class WatchTest : public ManagerTest {
 protected:
  // Toggles `node`'s draining: one MemberDrainChanged event.
  void Toggle(const TestNode& node, bool draining) {
    lite::v1::DrainNodeRequest drain;
    drain.set_node_id(node.id);
    drain.set_cancel(!draining);
    ASSERT_TRUE(state_->DrainNode(drain).ok());
  }

  static std::vector<uint64_t> Sequences(const std::vector<Event>& events) {
    std::vector<uint64_t> out;
    for (const Event& e : events) out.push_back(e.sequence());
    return out;
  }
};

std::vector<uint64_t> Range(uint64_t first, uint64_t last) {
  std::vector<uint64_t> out;
  for (uint64_t s = first; s <= last; ++s) out.push_back(s);
  return out;
}

TEST_F(WatchTest, ResumesFromHistoryThenLive) {
  TestNode a = JoinAndOpen("alpha", 1);
  for (int i = 0; i < 4; ++i) Toggle(a, i % 2 == 0);
  const uint64_t last = state_->last_event_sequence();
  ASSERT_GE(last, 5u);
  absl::StatusOr<std::shared_ptr<Outbox>> watch = state_->OpenWatch(last - 3);
  ASSERT_TRUE(watch.ok()) << watch.status();
  Toggle(a, true);
  EXPECT_EQ(Sequences(DrainEvents(**watch)), Range(last - 2, last + 1));
  state_->CloseWatch(*watch);

  // From the last event: nothing old; 0: from now on.
  absl::StatusOr<std::shared_ptr<Outbox>> at_last =
      state_->OpenWatch(state_->last_event_sequence());
  absl::StatusOr<std::shared_ptr<Outbox>> now = state_->OpenWatch(0);
  ASSERT_TRUE(at_last.ok() && now.ok());
  EXPECT_TRUE(DrainEvents(**at_last).empty());
  EXPECT_TRUE(DrainEvents(**now).empty());
  Toggle(a, false);
  EXPECT_EQ(DrainEvents(**at_last).size(), 1u);
  EXPECT_EQ(DrainEvents(**now).size(), 1u);
}

TEST_F(WatchTest, OutOfRangeAndInvalid) {
  ManagerOptions options = TestOptions();
  options.watch_history = 3;
  Restart(options);
  TestNode a = JoinAndOpen("alpha", 1);
  for (int i = 0; i < 6; ++i) Toggle(a, i % 2 == 0);
  const uint64_t last = state_->last_event_sequence();
  // The last 3 are kept: resuming after last - 3 works, after last - 4 not.
  absl::StatusOr<std::shared_ptr<Outbox>> ok = state_->OpenWatch(last - 3);
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(DrainEvents(**ok).size(), 3u);
  absl::StatusOr<std::shared_ptr<Outbox>> old = state_->OpenWatch(last - 4);
  EXPECT_EQ(old.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(old.status().message(), HasSubstr("--watch_history"));
  absl::StatusOr<std::shared_ptr<Outbox>> future = state_->OpenWatch(last + 1);
  EXPECT_EQ(future.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(state_->counters().watchers, 1u);  // Only `ok`.

  // A restarted manager keeps the sequence but has no history: only the
  // last revision (or 0) can be resumed.
  options.watch_history = 0;
  Restart(options);
  EXPECT_TRUE(state_->OpenWatch(0).ok());
  EXPECT_TRUE(state_->OpenWatch(state_->last_event_sequence()).ok());
  if (state_->last_event_sequence() > 0) {
    EXPECT_EQ(
        state_->OpenWatch(state_->last_event_sequence() - 1).status().code(),
        absl::StatusCode::kOutOfRange);
  }
}

TEST_F(WatchTest, WatcherLimit) {
  ManagerOptions options = TestOptions();
  options.max_watchers = 2;
  Restart(options);
  auto w1 = state_->OpenWatch(0);
  auto w2 = state_->OpenWatch(0);
  ASSERT_TRUE(w1.ok() && w2.ok());
  auto w3 = state_->OpenWatch(0);
  EXPECT_EQ(w3.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(w3.status().message(), HasSubstr("--max_watchers"));
  // The legacy form hands the refusal over as a closed outbox.
  std::shared_ptr<Outbox> legacy = state_->OpenWatch();
  EXPECT_EQ(CloseStatus(*legacy)->code(), absl::StatusCode::kResourceExhausted);
  state_->CloseWatch(*w1);
  EXPECT_TRUE(state_->OpenWatch(0).ok());
}

// While another thread produces events, every listing followed by a watch
// from its revision sees exactly the events after it: no gap, no duplicate.
TEST_F(WatchTest, ListThenWatchHasNoGapUnderConcurrentEvents) {
  ManagerOptions options = TestOptions();
  options.session_queue_limit = 10000;  // Nobody reads until the end.
  Restart(options);
  TestNode a = JoinAndOpen("alpha", 1);
  constexpr int kToggles = 2000;
  std::atomic<bool> done{false};
  std::thread producer([&] {
    for (int i = 0; i < kToggles; ++i) Toggle(a, i % 2 == 0);
    done = true;
  });
  struct Opened {
    uint64_t revision;
    std::shared_ptr<Outbox> watch;
  };
  std::vector<Opened> opened;
  for (int i = 0; i < 20 && !done; ++i) {
    absl::StatusOr<lite::v1::ListLmrsResponse> list =
        state_->ListLmrs(lite::v1::ListLmrsRequest());
    ASSERT_TRUE(list.ok());
    absl::StatusOr<std::shared_ptr<Outbox>> watch =
        state_->OpenWatch(list->revision());
    ASSERT_TRUE(watch.ok()) << watch.status();
    opened.push_back({list->revision(), *watch});
    std::this_thread::yield();
  }
  producer.join();
  const uint64_t last = state_->last_event_sequence();
  ASSERT_FALSE(opened.empty());
  for (const Opened& o : opened) {
    EXPECT_EQ(Sequences(DrainEvents(*o.watch)), Range(o.revision + 1, last))
        << "watch from " << o.revision;
  }
}

TEST_F(WatchTest, ListingsCarryRevision) {
  TestNode a = JoinAndOpen("alpha", 1);
  Register(a, "r", 0600, Creds(1, 1));
  const uint64_t last = state_->last_event_sequence();
  EXPECT_EQ(state_->ListLmrs(lite::v1::ListLmrsRequest())->revision(), last);
  EXPECT_EQ(state_->ListGrants(lite::v1::ListGrantsRequest())->revision(),
            last);
  EXPECT_EQ(state_->ListNodes(lite::v1::ListNodesRequest())->event_sequence(),
            last);
}

}  // namespace
}  // namespace lite::controlplane::testing
