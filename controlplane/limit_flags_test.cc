#include "controlplane/limit_flags.h"

#include <gtest/gtest.h>

#include <string>

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
  EXPECT_EQ(options.max_grants_per_lmr, defaults.max_grants_per_lmr);
  EXPECT_EQ(options.max_lmrs_per_node, defaults.max_lmrs_per_node);
  EXPECT_EQ(options.max_lmr_chunks_per_node, defaults.max_lmr_chunks_per_node);
  EXPECT_EQ(options.max_lmr_bytes_per_owner, defaults.max_lmr_bytes_per_owner);
  EXPECT_EQ(options.max_lmr_bytes_per_owner_per_home,
            defaults.max_lmr_bytes_per_owner_per_home);
  EXPECT_EQ(options.max_pending_binds_per_node,
            defaults.max_pending_binds_per_node);
  EXPECT_TRUE(CheckBurstLimits(options).ok());

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

// Review cp H2: a configuration in which one operation's burst can overflow
// an idle session by design does not start.
TEST(LimitFlagsTest, BurstsThatCouldOverflowASessionAreRefused) {
  ManagerOptions options;
  options.session_queue_limit = 16384;
  EXPECT_TRUE(CheckBurstLimits(options).ok());
  options.max_grants_per_lmr = 8191;
  EXPECT_TRUE(CheckBurstLimits(options).ok());
  options.max_grants_per_lmr = 8192;
  absl::Status refused = CheckBurstLimits(options);
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(refused.message(),
            "--max_grants_per_lmr=8192 must be below "
            "--session_queue_limit/2 (8192): a burst of that many messages "
            "into one idle session would close it and fail its node");
  options.max_grants_per_lmr = 7;
  options.session_queue_limit = 16;
  EXPECT_NE(CheckBurstLimits(options).message().find("--max_lmrs_per_node"),
            std::string::npos);
  options.max_lmrs_per_node = 7;
  EXPECT_NE(
      CheckBurstLimits(options).message().find("--max_pending_binds_per_node"),
      std::string::npos);
  options.max_pending_binds_per_node = 7;
  EXPECT_TRUE(CheckBurstLimits(options).ok());
}

}  // namespace
}  // namespace lite::controlplane
