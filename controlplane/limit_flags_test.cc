#include "controlplane/limit_flags.h"

#include <gtest/gtest.h>

#include "absl/flags/flag.h"

namespace lite::controlplane {
namespace {

TEST(LimitFlagsTest, CopiesEveryLimitAndRefusesNonsense) {
  ManagerOptions defaults;
  ManagerOptions options;
  ASSERT_TRUE(ApplyLimitFlags(&options).ok());
  // The flags' defaults are ManagerOptions' defaults.
  EXPECT_EQ(options.max_nodes, defaults.max_nodes);
  EXPECT_EQ(options.max_departed_records, defaults.max_departed_records);
  EXPECT_EQ(options.max_watchers, defaults.max_watchers);
  EXPECT_EQ(options.max_grants_per_node, defaults.max_grants_per_node);
  EXPECT_EQ(options.max_lmrs_per_owner, defaults.max_lmrs_per_owner);
  EXPECT_EQ(options.max_pending_allocs, defaults.max_pending_allocs);
  EXPECT_EQ(options.max_joins_per_minute, defaults.max_joins_per_minute);
  EXPECT_EQ(options.watch_history, defaults.watch_history);
  EXPECT_LT(options.watch_history, defaults.session_queue_limit);

  // The minimums themselves are taken.
  absl::SetFlag(&FLAGS_max_nodes, 7);
  absl::SetFlag(&FLAGS_max_watchers, 1);
  absl::SetFlag(&FLAGS_max_departed_records, 0);
  absl::SetFlag(&FLAGS_watch_history, 0);
  ASSERT_TRUE(ApplyLimitFlags(&options).ok());
  EXPECT_EQ(options.max_nodes, 7);
  EXPECT_EQ(options.max_watchers, 1);
  EXPECT_EQ(options.max_departed_records, 0);
  EXPECT_EQ(options.watch_history, 0);

  // Below a minimum: refused, naming the flag, and nothing copied.
  absl::SetFlag(&FLAGS_max_nodes, 9);
  absl::SetFlag(&FLAGS_max_watchers, 0);
  absl::Status refused = ApplyLimitFlags(&options);
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(refused.message(), "--max_watchers=0: must be at least 1");
  EXPECT_EQ(options.max_nodes, 7);
  absl::SetFlag(&FLAGS_max_watchers, 1);
  absl::SetFlag(&FLAGS_watch_history, -5);
  EXPECT_EQ(ApplyLimitFlags(&options).message(),
            "--watch_history=-5: must be at least 0");
  absl::SetFlag(&FLAGS_watch_history, 0);
  absl::SetFlag(&FLAGS_max_message_bytes, 100);
  EXPECT_EQ(ApplyLimitFlags(&options).message(),
            "--max_message_bytes=100: must be 1024..2147483647");
}

}  // namespace
}  // namespace lite::controlplane
