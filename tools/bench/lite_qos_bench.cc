// lite-qos-bench: one round of LITE's QoS experiment (docs/qos.md). A
// high-priority client does small synchronous READs of an LMR while `--low`
// low-priority clients WRITE 64 KiB blocks into the same LMR, all from
// this process, each on its own context (so its own priority). Prints the
// high-priority latency (p50, p99) and the low-priority throughput; with
// --timeline, every high-priority operation's latency over time as CSV.
// Whether lite.ko's `qos` throttle is on is the caller's business
// (tools/bench/qos_experiment flips it between rounds). It measures; it
// never judges.
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "api/lite.hpp"
#include "common/cli/cli.h"
#include "common/cli/json.h"
#include "common/status/macros.h"

namespace lite::bench {
namespace {

double NowUs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

struct Options {
  std::string device = LITE_DEVICE_PATH;
  std::string lmr;
  double seconds = 5;
  double warmup = 0.5;
  uint32_t low = 2;
  uint64_t high_size = 64;
  uint64_t low_size = 64 << 10;
  std::string timeline;
  double qos_on_after = -1;  // < 0: leave lite.ko's qos parameter alone
};

struct Sample {
  float t_ms;    // since the start
  float lat_us;  // the READ's latency
};

// lite.ko's throttle on the home node, from debugfs qos/peers.
struct RateSample {
  float t_ms;
  double mib_s;  // 0: not throttled
  std::string rule;
};

constexpr char kQosPeers[] = "/sys/kernel/debug/lite/qos/peers";
constexpr char kQosParam[] = "/sys/module/lite/parameters/qos";

// The home node's line of qos/peers: "ID NAME rate_bps=R ... rule=RULE";
// rule "off" (rate 0) while lite.ko's qos parameter is off.
bool ReadThrottle(uint32_t node, double* mib_s, std::string* rule) {
  std::ifstream param(kQosParam);
  std::string on;
  if (std::getline(param, on) && on == "N") {
    *mib_s = 0;
    *rule = "off";
    return true;
  }
  std::ifstream in(kQosPeers);
  std::string line;
  const std::string id = absl::StrCat(node, " ");
  while (std::getline(in, line)) {
    if (line.rfind(id, 0) != 0) continue;
    size_t r = line.find("rate_bps="), u = line.find("rule=");
    if (r == std::string::npos || u == std::string::npos) return false;
    *mib_s = std::strtod(line.c_str() + r + 9, nullptr) / (1 << 20);
    *rule = line.substr(u + 5);
    return true;
  }
  return false;
}

struct Result {
  uint64_t high_ops = 0;
  double high_p50_us = 0, high_p99_us = 0, high_max_us = 0;
  uint64_t low_bytes = 0;
  double low_mib_s = 0;
  double seconds = 0;
};

double Percentile(std::vector<float> v, double p) {
  if (v.empty()) return 0;
  size_t i = std::min(v.size() - 1, static_cast<size_t>(p * v.size()));
  std::nth_element(v.begin(), v.begin() + i, v.end());
  return v[i];
}

absl::Status Fail(absl::string_view what, const absl::Status& s) {
  return absl::Status(s.code(), absl::StrCat(what, ": ", s.message()));
}

absl::StatusOr<Result> RunRound(const Options& o, std::ostream& err) {
  // One context per client: priority belongs to the context.
  std::vector<Lite> ctxs;
  std::vector<Lmr> lmrs;
  for (uint32_t i = 0; i <= o.low; i++) {
    absl::StatusOr<Lite> l = Lite::Open(o.device);
    if (!l.ok()) return Fail("open", l.status());
    absl::Status s = l->SetPriority(i == 0 ? LITE_PRIO_HIGH : LITE_PRIO_LOW);
    if (!s.ok()) return Fail(i == 0 ? "high priority" : "low priority", s);
    absl::StatusOr<Lmr> m = l->Map(o.lmr, LITE_ACCESS_READ | LITE_ACCESS_WRITE);
    if (!m.ok()) return Fail(absl::StrCat("map ", o.lmr), m.status());
    if (m->size() < (o.low + 1) * o.low_size) {
      return cli::UsageError(absl::StrFormat(
          "LMR %s has %u bytes; %u low clients of --low_size %u need %u", o.lmr,
          m->size(), o.low, o.low_size, (o.low + 1) * o.low_size));
    }
    ctxs.push_back(std::move(*l));
    lmrs.push_back(std::move(*m));
  }

  std::atomic<bool> stop{false};
  std::atomic<int> failed{0};
  std::vector<uint64_t> low_bytes(o.low, 0);
  std::vector<std::thread> lows;
  const double start = NowUs();
  const double warm_end = start + o.warmup * 1e6;
  for (uint32_t i = 0; i < o.low; i++) {
    lows.emplace_back([&, i] {
      std::vector<uint8_t> block(o.low_size, static_cast<uint8_t>(i));
      const uint64_t at = (i + 1) * o.low_size;
      while (!stop.load(std::memory_order_relaxed)) {
        absl::Status s = lmrs[i + 1].Write(at, absl::MakeSpan(block));
        if (!s.ok()) {
          err << "lite-qos-bench: low client " << i << ": " << s.message()
              << "\n";
          failed++;
          return;
        }
        if (NowUs() >= warm_end) low_bytes[i] += o.low_size;
      }
    });
  }

  // With a timeline, the throttle's rate every 10 ms beside the latencies.
  std::vector<RateSample> rates;
  std::thread sampler;
  if (!o.timeline.empty()) {
    sampler = std::thread([&] {
      const uint32_t home = lmrs[0].home_node_id();
      double mib_s;
      std::string rule;
      while (!stop.load(std::memory_order_relaxed)) {
        const double t = NowUs();
        if (ReadThrottle(home, &mib_s, &rule)) {
          rates.push_back({static_cast<float>((t - start) / 1e3), mib_s, rule});
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    });
  }

  std::vector<Sample> samples;
  std::vector<float> lat;
  std::vector<uint8_t> buf(o.high_size);
  const double end = warm_end + o.seconds * 1e6;
  absl::Status high_status;
  // --qos_on_after: this process switches lite.ko's qos on mid-run, at a
  // time it knows (a command from outside the guest can be late by
  // seconds while the guest's one CPU is busy with this load).
  double qos_on_at =
      o.qos_on_after < 0 ? end + 1 : warm_end + o.qos_on_after * 1e6;
  double qos_on_ms = -1;
  for (double t = NowUs(); t < end && failed == 0; t = NowUs()) {
    if (t >= qos_on_at) {
      std::ofstream param(kQosParam);
      param << "1\n";
      param.flush();
      if (!param) {
        high_status = absl::PermissionDeniedError(
            absl::StrCat("cannot switch qos on (", kQosParam, ")"));
        break;
      }
      qos_on_ms = (t - start) / 1e3;
      qos_on_at = end + 1;
    }
    absl::Status s = lmrs[0].Read(0, absl::MakeSpan(buf));
    const double done = NowUs();
    if (!s.ok()) {
      high_status = Fail("high client: read", s);
      break;
    }
    samples.push_back(
        {static_cast<float>((t - start) / 1e3), static_cast<float>(done - t)});
    if (t >= warm_end) lat.push_back(static_cast<float>(done - t));
  }
  const double stopped = NowUs();
  stop = true;
  for (std::thread& t : lows) t.join();
  if (sampler.joinable()) sampler.join();
  if (!high_status.ok()) return high_status;
  if (failed) return absl::InternalError("a low-priority client failed");

  Result r;
  r.seconds = (stopped - warm_end) / 1e6;
  r.high_ops = lat.size();
  r.high_p50_us = Percentile(lat, 0.50);
  r.high_p99_us = Percentile(lat, 0.99);
  r.high_max_us = lat.empty() ? 0 : *std::max_element(lat.begin(), lat.end());
  for (uint64_t b : low_bytes) r.low_bytes += b;
  r.low_mib_s = r.low_bytes / r.seconds / (1 << 20);

  if (!o.timeline.empty()) {
    std::ofstream csv(o.timeline);
    csv << "series,t_ms,value,rule\n";
    for (const Sample& s : samples) {
      csv << "latency_us," << s.t_ms << "," << s.lat_us << ",\n";
    }
    for (const RateSample& s : rates) {
      csv << "throttle_mib_s," << s.t_ms << "," << s.mib_s << "," << s.rule
          << "\n";
    }
    if (qos_on_ms >= 0) csv << "qos_on," << qos_on_ms << ",1,\n";
    if (!csv) return absl::UnavailableError("cannot write " + o.timeline);
  }
  return r;
}

absl::Status Run(const cli::Args& a) {
  Options o;
  o.lmr = a.Get("lmr");
  if (o.lmr.empty()) return cli::UsageError("give --lmr NAME");
  o.device = a.Get("device", LITE_DEVICE_PATH);
  LITE_ASSIGN_OR_RETURN(uint64_t secs,
                        cli::Number("--seconds", a.Get("seconds", "5"), 3600));
  if (secs == 0) return cli::UsageError("--seconds: 1..3600, not 0");
  o.seconds = secs;
  LITE_ASSIGN_OR_RETURN(uint64_t low,
                        cli::Number("--low", a.Get("low", "2"), 16));
  o.low = static_cast<uint32_t>(low);
  LITE_ASSIGN_OR_RETURN(o.high_size,
                        cli::Size("--high_size", a.Get("high_size", "64")));
  LITE_ASSIGN_OR_RETURN(o.low_size,
                        cli::Size("--low_size", a.Get("low_size", "64K")));
  if (o.high_size == 0 || o.high_size > (1 << 20) || o.low_size == 0 ||
      o.low_size > (16 << 20)) {
    return cli::UsageError("--high_size: 1 B..1M, --low_size: 1 B..16M");
  }
  o.timeline = a.Get("timeline");
  if (a.Has("qos_on_after")) {
    LITE_ASSIGN_OR_RETURN(
        uint64_t after,
        cli::Number("--qos_on_after", a.Get("qos_on_after"), 3600));
    if (after >= o.seconds) {
      return cli::UsageError("--qos_on_after: less than --seconds");
    }
    o.qos_on_after = after;
  }

  LITE_ASSIGN_OR_RETURN(Result r, RunRound(o, a.err()));
  if (a.output() == cli::Output::kJson) {
    a.out() << cli::JsonLine(cli::Json{
                   {"low_clients", o.low},
                   {"seconds", r.seconds},
                   {"high_ops", r.high_ops},
                   {"high_p50_us", r.high_p50_us},
                   {"high_p99_us", r.high_p99_us},
                   {"high_max_us", r.high_max_us},
                   {"low_mib_s", r.low_mib_s},
               })
            << "\n";
  } else {
    a.out() << absl::StrFormat(
        "high: %u B READs, %u in %.1f s, p50 %.1f us, p99 %.1f us, max %.1f "
        "us; low: %u clients of %u B WRITEs, %.1f MiB/s\n",
        o.high_size, r.high_ops, r.seconds, r.high_p50_us, r.high_p99_us,
        r.high_max_us, o.low, o.low_size, r.low_mib_s);
  }
  return absl::OkStatus();
}

}  // namespace

int RunQosBench(const std::vector<std::string>& args, std::ostream& out,
                std::ostream& err) {
  cli::Tool tool;
  tool.footer =
      "Needs LITE_PRIO_HIGH for its high-priority client: CAP_SYS_NICE or "
      "lite.ko's qos_high_gid.\nExit status: 0 success; 1 an operation "
      "failed; 2 bad usage.\n";
  tool.root = {
      .name = "lite-qos-bench",
      .usage = "lite-qos-bench --lmr NAME [flags]",
      .summary = "high-priority READ latency beside low-priority WRITE load",
      .details =
          "One round: a high-priority client READs --high_size bytes at "
          "offset 0 in a loop while --low low-priority clients WRITE "
          "--low_size blocks (each at its own offset) into the same LMR, "
          "for --seconds after a 0.5 s warm-up. The LMR needs (low + 1) * "
          "low_size bytes.",
      .flags =
          {
              {.name = "lmr",
               .value = "NAME",
               .help = "the LMR (mapped "
                       "read-write)"},
              {.name = "device",
               .value = "PATH",
               .help = "the LITE device (default " LITE_DEVICE_PATH ")"},
              {.name = "seconds",
               .value = "N",
               .help = "measured seconds (default 5)"},
              {.name = "low",
               .value = "N",
               .help = "low-priority clients, 0..16 (default 2)"},
              {.name = "high_size",
               .value = "SIZE",
               .help = "bytes per high-priority READ (default 64)"},
              {.name = "low_size",
               .value = "SIZE",
               .help = "bytes per low-priority WRITE (default 64K)"},
              {.name = "qos_on_after",
               .value = "SECONDS",
               .help = "switch lite.ko's qos parameter on this many "
                       "seconds into the measured run (needs root; for a "
                       "timeline of the throttle engaging)"},
              {.name = "timeline",
               .value = "FILE",
               .help = "write a CSV to FILE: every high-priority READ's "
                       "latency (warm-up included) and lite.ko's throttle "
                       "on the home node every 10 ms (debugfs qos/peers)"},
          },
      .run = Run,
  };
  return cli::Run(tool, args, out, err);
}

}  // namespace lite::bench

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return lite::bench::RunQosBench(args, std::cout, std::cerr);
}
