// litemgr's metrics as ManagerState reports them (ManagerFamilies of a
// MetricsSnapshot), driven with a fake clock: gauges follow the state,
// counters count each event once, node requests are timed exactly.
#include "controlplane/manager_metrics.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "common/metrics/sample_value.h"
#include "controlplane/lmr_test_fixture.h"

namespace lite::controlplane::testing {
namespace {

using metrics::Labels;
using metrics::SampleValue;

class ManagerMetricsTest : public LmrTest {
 protected:
  std::vector<prometheus::MetricFamily> Scrape() const {
    return ManagerMetrics(state_.get()).Collect();
  }
  absl::Status Answer(const TestNode& node, uint64_t request_id, int code) {
    lite::v1::NodeRequestResult result;
    result.set_request_id(request_id);
    result.set_status_code(code);
    if (code != 0) result.set_status_message("no memory");
    return state_->HandleResult(node.binding(), result);
  }
};

TEST_F(ManagerMetricsTest, GaugesFollowTheState) {
  std::vector<prometheus::MetricFamily> m = Scrape();
  EXPECT_EQ(SampleValue(m, "lite_manager_members", {{"state", "alive"}}), 3);
  EXPECT_EQ(SampleValue(m, "lite_manager_members", {{"state", "failed"}}), 0);
  EXPECT_EQ(SampleValue(m, "lite_manager_members", {{"state", "left"}}), 0);
  EXPECT_EQ(SampleValue(m, "lite_manager_sessions_open"), 3);
  EXPECT_EQ(SampleValue(m, "lite_manager_joins_total"), 3);
  EXPECT_EQ(SampleValue(m, "lite_manager_lmrs", {{"state", "live"}}), 0);

  Register(a_, "kv", 0644, Creds(1000, 100), 1 << 20);
  Map(b_, "kv", Creds(1000, 100), true, false);
  lite::v1::DrainNodeRequest drain;
  drain.set_node_id(c_.id);
  ASSERT_TRUE(state_->DrainNode(drain).ok());
  m = Scrape();
  EXPECT_EQ(SampleValue(m, "lite_manager_lmrs", {{"state", "live"}}), 1);
  EXPECT_EQ(SampleValue(m, "lite_manager_lmr_bytes", {{"state", "live"}}),
            1 << 20);
  EXPECT_EQ(SampleValue(m, "lite_manager_grants"), 1);
  EXPECT_EQ(SampleValue(m, "lite_manager_grants_issued_total"), 1);
  EXPECT_EQ(SampleValue(m, "lite_manager_members_draining"), 1);

  // c leaves; then b misses its lease while a heartbeats.
  lite::v1::LeaveRequest leave;
  *leave.mutable_caller() = c_.caller();
  ASSERT_TRUE(state_->Leave(leave).ok());
  for (int i = 0; i < 3; ++i) {
    clock_.Advance(absl::Milliseconds(400));
    Beat(a_);
    state_->Tick();
  }
  m = Scrape();
  EXPECT_EQ(SampleValue(m, "lite_manager_members", {{"state", "alive"}}), 1);
  EXPECT_EQ(SampleValue(m, "lite_manager_members", {{"state", "failed"}}), 1);
  EXPECT_EQ(SampleValue(m, "lite_manager_members", {{"state", "left"}}), 1);
  EXPECT_EQ(SampleValue(m, "lite_manager_members_draining"), 0);
  EXPECT_EQ(SampleValue(m, "lite_manager_sessions_open"), 1);
  EXPECT_EQ(SampleValue(m, "lite_manager_member_leaves_total"), 1);
  EXPECT_EQ(SampleValue(m, "lite_manager_member_failures_total",
                        {{"cause", "lease_expired"}}),
            1);
  EXPECT_EQ(SampleValue(m, "lite_manager_member_failures_total",
                        {{"cause", "evicted"}}),
            0);
  // b's grant went with it; a's LMR stays.
  EXPECT_EQ(SampleValue(m, "lite_manager_grants"), 0);
  EXPECT_EQ(SampleValue(m, "lite_manager_lmrs", {{"state", "live"}}), 1);
}

TEST_F(ManagerMetricsTest, NodeRequestsCountOnceByOutcomeAndAreTimed) {
  const Labels alloc_ok = {{"kind", "allocate_lmr_memory"}, {"outcome", "ok"}};
  const Labels alloc_error = {{"kind", "allocate_lmr_memory"},
                              {"outcome", "error"}};
  const Labels alloc_timeout = {{"kind", "allocate_lmr_memory"},
                                {"outcome", "timeout"}};
  const Labels alloc_abandoned = {{"kind", "allocate_lmr_memory"},
                                  {"outcome", "abandoned"}};
  const Labels alloc = {{"kind", "allocate_lmr_memory"}};

  // Answered OK after 30 ms.
  StartAlloc(AllocRequest(a_, b_.id, "one"));
  uint64_t id = TakeRequest(b_).request_id();
  EXPECT_EQ(
      SampleValue(Scrape(), "lite_manager_node_requests_in_flight", alloc), 1);
  clock_.Advance(absl::Milliseconds(30));
  ASSERT_TRUE(state_->HandleResult(b_.binding(), Allocated(id, 8192)).ok());
  // Answered with an error after 2 s.
  StartAlloc(AllocRequest(a_, b_.id, "two"));
  id = TakeRequest(b_).request_id();
  clock_.Advance(absl::Seconds(2));
  ASSERT_TRUE(Answer(b_, id, 8).ok());
  // Not answered in time; its late answer changes nothing.
  StartAlloc(AllocRequest(a_, b_.id, "three"));
  const uint64_t late = TakeRequest(b_).request_id();
  for (int i = 0; i < 6; ++i) {
    clock_.Advance(absl::Seconds(1));
    for (const TestNode* n : {&a_, &b_, &c_}) Beat(*n);
    state_->Tick();
  }
  ASSERT_TRUE(state_->HandleResult(b_.binding(), Allocated(late, 8192)).ok());

  std::vector<prometheus::MetricFamily> m = Scrape();
  EXPECT_EQ(SampleValue(m, "lite_manager_node_requests_total", alloc_ok), 1);
  EXPECT_EQ(SampleValue(m, "lite_manager_node_requests_total", alloc_error), 1);
  EXPECT_EQ(SampleValue(m, "lite_manager_node_requests_total", alloc_timeout),
            1);
  EXPECT_EQ(SampleValue(m, "lite_manager_node_requests_total", alloc_abandoned),
            0);
  EXPECT_EQ(SampleValue(m, "lite_manager_node_requests_in_flight", alloc), 0);
  // The histogram holds the two answers: 30 ms and 2 s, exactly.
  EXPECT_EQ(SampleValue(m, "lite_manager_node_request_duration_seconds", alloc),
            2);
  const ManagerMetricsSnapshot snapshot = state_->MetricsSnapshot();
  const metrics::LatencyHistogram& latency =
      snapshot.node_requests
          .latency[static_cast<size_t>(NodeRequests::Kind::kAllocateLmrMemory)];
  EXPECT_DOUBLE_EQ(latency.sum_seconds(), 2.03);
  size_t bucket_30ms = 0;
  while (metrics::LatencyHistogram::kBounds[bucket_30ms] < 0.03) ++bucket_30ms;
  EXPECT_EQ(latency.buckets()[bucket_30ms], 1u);  // (0.025, 0.05]

  // Pending when its home is evicted: abandoned.
  StartAlloc(AllocRequest(a_, c_.id, "four"));
  TakeRequest(c_);
  lite::v1::EvictNodeRequest evict;
  evict.set_node_id(c_.id);
  ASSERT_TRUE(state_->EvictNode(evict).ok());
  m = Scrape();
  EXPECT_EQ(SampleValue(m, "lite_manager_node_requests_total", alloc_abandoned),
            1);
  EXPECT_EQ(SampleValue(m, "lite_manager_member_failures_total",
                        {{"cause", "evicted"}}),
            1);
  EXPECT_EQ(SampleValue(m, "lite_manager_node_requests_in_flight", alloc), 0);
}

TEST_F(ManagerMetricsTest, TheFencedFreeShowsReleasingBytesUntilTheAnswer) {
  StartAlloc(AllocRequest(a_, b_.id, "buf"));
  const uint64_t id = TakeRequest(b_).request_id();
  ASSERT_TRUE(state_->HandleResult(b_.binding(), Allocated(id, 8192)).ok());
  DrainAll();
  lite::v1::FreeLmrRequest free;
  *free.mutable_caller() = a_.caller();
  *free.mutable_requester() = Creds(1000, 100);
  free.set_name("buf");
  ASSERT_TRUE(state_->FreeLmr(free).ok());
  // No grant to wait for: the release goes to the home at once.
  const lite::v1::NodeRequest release = TakeRequest(b_);
  ASSERT_TRUE(release.has_release_lmr_memory());
  std::vector<prometheus::MetricFamily> m = Scrape();
  EXPECT_EQ(SampleValue(m, "lite_manager_lmrs", {{"state", "live"}}), 0);
  EXPECT_EQ(SampleValue(m, "lite_manager_lmrs", {{"state", "releasing"}}), 1);
  EXPECT_EQ(SampleValue(m, "lite_manager_lmr_bytes", {{"state", "releasing"}}),
            8192);
  EXPECT_EQ(SampleValue(m, "lite_manager_node_requests_in_flight",
                        {{"kind", "release_lmr_memory"}}),
            1);
  clock_.Advance(absl::Milliseconds(5));
  ASSERT_TRUE(Answer(b_, release.request_id(), 0).ok());
  m = Scrape();
  EXPECT_EQ(SampleValue(m, "lite_manager_lmrs", {{"state", "releasing"}}), 0);
  EXPECT_EQ(SampleValue(m, "lite_manager_lmr_bytes", {{"state", "releasing"}}),
            0);
  EXPECT_EQ(SampleValue(m, "lite_manager_lmr_releases_total"), 1);
  EXPECT_EQ(SampleValue(m, "lite_manager_node_requests_total",
                        {{"kind", "release_lmr_memory"}, {"outcome", "ok"}}),
            1);
  EXPECT_EQ(SampleValue(m, "lite_manager_node_request_duration_seconds",
                        {{"kind", "release_lmr_memory"}}),
            1);
}

}  // namespace
}  // namespace lite::controlplane::testing
