#include "controlplane/limit_flags.h"

#include <gtest/gtest.h>

#include "absl/flags/flag.h"

namespace lite::controlplane {
namespace {

TEST(LimitFlagsTest, CopiesEveryLimitAndRaisesNonsenseToTheMinimum) {
  ManagerOptions defaults;
  ManagerOptions options;
  ApplyLimitFlags(&options);
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

  absl::SetFlag(&FLAGS_max_nodes, 7);
  absl::SetFlag(&FLAGS_max_watchers, 0);
  absl::SetFlag(&FLAGS_max_departed_records, 0);
  absl::SetFlag(&FLAGS_watch_history, -5);
  ApplyLimitFlags(&options);
  EXPECT_EQ(options.max_nodes, 7);
  EXPECT_EQ(options.max_watchers, 1);
  EXPECT_EQ(options.max_departed_records, 0);
  EXPECT_EQ(options.watch_history, 0);
}

}  // namespace
}  // namespace lite::controlplane
