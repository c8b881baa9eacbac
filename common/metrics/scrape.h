// Test helpers: scrape a metrics endpoint over HTTP and read samples out of
// the text exposition format, as Prometheus would.
#ifndef LITE_COMMON_METRICS_SCRAPE_H_
#define LITE_COMMON_METRICS_SCRAPE_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace lite::metrics {

// GET http://127.0.0.1:port/metrics: the body of a 200 answer. UNAVAILABLE
// if nothing answers, DEADLINE_EXCEEDED after `timeout`, INTERNAL for any
// other HTTP status.
absl::StatusOr<std::string> Scrape(int port,
                                   absl::Duration timeout = absl::Seconds(10));

// The value of the sample whose name and labels are exactly `series`, as
// the exposition writes them (e.g. `lite_manager_members{state="alive"}`,
// `lite_manager_grants`); nullopt if there is none.
std::optional<double> Sample(absl::string_view text, absl::string_view series);

}  // namespace lite::metrics

#endif  // LITE_COMMON_METRICS_SCRAPE_H_
