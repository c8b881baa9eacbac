#include "common/metrics/server.h"

#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/metrics/families.h"
#include "common/metrics/histogram.h"
#include "common/metrics/scrape.h"
#include "common/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace lite::metrics {
namespace {

using ::lite_testing::IsOk;
using ::lite_testing::StatusIs;
using ::testing::HasSubstr;

// Reports how often it was collected: the value changes at every scrape,
// proving the endpoint collects when asked, not once at start.
class Collected : public prometheus::Collectable {
 public:
  std::vector<prometheus::MetricFamily> Collect() const override {
    ++scrapes_;
    prometheus::MetricFamily gauge = Family(
        "lite_test_things", "things by color", prometheus::MetricType::Gauge);
    Add(gauge, {{"color", "red"}}, 2);
    Add(gauge, {{"color", "blue"}}, 0.5);
    LatencyHistogram latency;
    latency.Observe(absl::Microseconds(300));  // le 0.0005
    latency.Observe(absl::Milliseconds(20));   // le 0.025
    latency.Observe(absl::Milliseconds(20));   // le 0.025
    latency.Observe(absl::Seconds(11));        // above every bound
    prometheus::MetricFamily histogram =
        Family("lite_test_duration_seconds", "how long",
               prometheus::MetricType::Histogram);
    AddHistogram(histogram, {{"kind", "a"}}, latency);
    return {std::move(gauge), std::move(histogram),
            Single("lite_test_scrapes_total", "scrapes so far",
                   prometheus::MetricType::Counter, scrapes_)};
  }

 private:
  mutable int scrapes_ = 0;
};

TEST(MetricsServer, ServesWhatIsCollectedAtEachScrape) {
  absl::StatusOr<std::unique_ptr<MetricsServer>> server =
      MetricsServer::Start("127.0.0.1:0", {std::make_shared<Collected>()});
  ASSERT_THAT(server, IsOk());
  const int port = (*server)->port();
  ASSERT_GT(port, 0);

  absl::StatusOr<std::string> first = Scrape(port);
  ASSERT_THAT(first, IsOk());
  EXPECT_THAT(*first, HasSubstr("# HELP lite_test_things things by color\n"
                                "# TYPE lite_test_things gauge\n"));
  EXPECT_EQ(Sample(*first, R"(lite_test_things{color="red"})"), 2);
  EXPECT_EQ(Sample(*first, R"(lite_test_things{color="blue"})"), 0.5);
  EXPECT_EQ(Sample(*first, "lite_test_scrapes_total"), 1);
  // Buckets are cumulative and end with +Inf, which counts everything.
  EXPECT_EQ(
      Sample(*first,
             R"(lite_test_duration_seconds_bucket{kind="a",le="0.0005"})"),
      1);
  EXPECT_EQ(Sample(*first,
                   R"(lite_test_duration_seconds_bucket{kind="a",le="0.01"})"),
            1);
  EXPECT_EQ(Sample(*first,
                   R"(lite_test_duration_seconds_bucket{kind="a",le="0.025"})"),
            3);
  EXPECT_EQ(
      Sample(*first, R"(lite_test_duration_seconds_bucket{kind="a",le="10"})"),
      3);
  EXPECT_EQ(Sample(*first,
                   R"(lite_test_duration_seconds_bucket{kind="a",le="+Inf"})"),
            4);
  EXPECT_EQ(Sample(*first, R"(lite_test_duration_seconds_count{kind="a"})"), 4);
  EXPECT_NEAR(*Sample(*first, R"(lite_test_duration_seconds_sum{kind="a"})"),
              11.0403, 1e-9);
  // Exactly one +Inf bucket: the serializer adds one only when missing.
  EXPECT_EQ(first->find("le=\"+Inf\""), first->rfind("le=\"+Inf\""));

  absl::StatusOr<std::string> second = Scrape(port);
  ASSERT_THAT(second, IsOk());
  EXPECT_EQ(Sample(*second, "lite_test_scrapes_total"), 2);
}

TEST(MetricsServer, AnAddressInUseIsAClearError) {
  absl::StatusOr<std::unique_ptr<MetricsServer>> first =
      MetricsServer::Start("127.0.0.1:0", {});
  ASSERT_THAT(first, IsOk());
  const std::string taken = absl::StrCat("127.0.0.1:", (*first)->port());
  EXPECT_THAT(MetricsServer::Start(taken, {}),
              StatusIs(absl::StatusCode::kUnavailable,
                       HasSubstr(absl::StrCat("--metrics_listen=", taken))));
  // Not an address of this host.
  EXPECT_THAT(MetricsServer::Start("192.0.2.1:0", {}),
              StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_THAT(MetricsServer::Start("127.0.0.1", {}),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(MetricsServer::Start("", {}),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(MetricsServer, StopsServingWhenDestroyed) {
  absl::StatusOr<std::unique_ptr<MetricsServer>> server =
      MetricsServer::Start("127.0.0.1:0", {std::make_shared<Collected>()});
  ASSERT_THAT(server, IsOk());
  const int port = (*server)->port();
  ASSERT_THAT(Scrape(port), IsOk());
  server->reset();
  EXPECT_THAT(Scrape(port), StatusIs(absl::StatusCode::kUnavailable));
}

}  // namespace
}  // namespace lite::metrics
