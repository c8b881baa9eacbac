// lite-bench: LITE's one-sided operations measured through libLITE — latency
// (p50, p99, average, minimum) of READ, WRITE, FAA and CAS per size, and
// WRITE bandwidth from several threads — against one LMR, usually homed on
// another node. It measures and prints; it never judges the figures.
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "api/lite.h"
#include "api/lite.hpp"
#include "tools/liteop/cli_util.h"

ABSL_FLAG(std::string, lmr, "",
          "an existing LMR to measure (mapped read-write); or use --create");
ABSL_FLAG(std::string, create, "",
          "create this LMR (--size, --home), measure it, free it (unless "
          "--keep)");
ABSL_FLAG(std::string, size, "16M", "with --create: the LMR's size");
ABSL_FLAG(uint32_t, home, 0, "with --create: its home node (0: this node)");
ABSL_FLAG(bool, keep, false, "with --create: do not free the LMR at the end");
ABSL_FLAG(std::string, device, LITE_DEVICE_PATH, "the LITE device");
ABSL_FLAG(std::string, ops, "read,write,faa,cas,write_bw",
          "what to measure: read, write, faa, cas (latency), write_bw");
ABSL_FLAG(std::string, sizes, "8,64,512,4K,64K",
          "sizes for read/write latency (atomics are always 8 B)");
ABSL_FLAG(uint64_t, iters, 1000, "timed operations per latency row");
ABSL_FLAG(uint64_t, warmup, 100, "untimed operations before each row");
ABSL_FLAG(std::string, offset, "0",
          "where in the LMR to work (a multiple of 8)");
ABSL_FLAG(uint32_t, bw_threads, 4, "write_bw: threads writing at once");
ABSL_FLAG(std::string, bw_size, "64K", "write_bw: bytes per write");
ABSL_FLAG(double, bw_seconds, 3, "write_bw: how long to write");
ABSL_FLAG(std::string, o, "table", "output: table or json");

namespace {

struct Row {
  std::string op;
  uint64_t size = 0;
  uint64_t iters = 0;
  double p50_us = 0, p99_us = 0, avg_us = 0, min_us = 0, max_us = 0;
};

struct BwRow {
  uint64_t size = 0;
  uint32_t threads = 0;
  double seconds = 0;
  uint64_t bytes = 0;
  double mib_per_s = 0, ops_per_s = 0;
};

uint64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + ts.tv_nsec;
}

absl::Status OpError(int err, absl::string_view op, uint64_t size) {
  return lite::ErrnoToStatus(err, absl::StrFormat("%s %u B", op, size),
                             lite_message());
}

class Bench {
 public:
  Bench(lite_ctx* ctx, lite_handle_t h, uint64_t offset)
      : ctx_(ctx), h_(h), offset_(offset) {}

  // One timed row: warmup, then iters single operations.
  absl::StatusOr<Row> Latency(const std::string& op, uint64_t size,
                              uint64_t iters, uint64_t warmup) {
    buf_.resize(std::max<uint64_t>(buf_.size(), size));
    samples_.assign(iters, 0);
    uint64_t value = 0;
    for (uint64_t i = 0; i < warmup + iters; ++i) {
      uint64_t t0 = NowNs();
      int err = 0;
      if (op == "read") {
        err = lite_read(ctx_, h_, offset_, buf_.data(), size);
      } else if (op == "write") {
        err = lite_write(ctx_, h_, offset_, buf_.data(), size);
      } else if (op == "faa") {
        err = lite_faa(ctx_, h_, offset_, 1, &value);
      } else {  // cas: alternate so that half the swaps succeed
        err = lite_cas(ctx_, h_, offset_, value, value + 1, &value);
      }
      uint64_t t1 = NowNs();
      if (err) return OpError(err, op, size);
      if (i >= warmup) samples_[i - warmup] = t1 - t0;
    }
    std::sort(samples_.begin(), samples_.end());
    Row r;
    r.op = op;
    r.size = size;
    r.iters = iters;
    double sum = 0;
    for (uint64_t s : samples_) sum += s;
    r.avg_us = sum / iters / 1e3;
    r.p50_us = samples_[(iters - 1) / 2] / 1e3;
    r.p99_us = samples_[std::min<uint64_t>(iters - 1, iters * 99 / 100)] / 1e3;
    r.min_us = samples_.front() / 1e3;
    r.max_us = samples_.back() / 1e3;
    return r;
  }

  // Threads write `size` bytes back to back, each into its own slot.
  absl::StatusOr<BwRow> WriteBandwidth(uint32_t threads, uint64_t size,
                                       double seconds) {
    std::atomic<bool> stop{false};
    std::atomic<int> first_err{0};
    std::vector<uint64_t> ops(threads, 0);
    std::vector<std::thread> workers;
    std::vector<std::vector<uint8_t>> bufs(threads,
                                           std::vector<uint8_t>(size, 0x5a));
    uint64_t t0 = NowNs();
    for (uint32_t t = 0; t < threads; ++t) {
      workers.emplace_back([&, t] {
        uint64_t at = offset_ + t * size;
        while (!stop.load(std::memory_order_relaxed)) {
          int err = lite_write(ctx_, h_, at, bufs[t].data(), size);
          if (err) {
            int zero = 0;
            first_err.compare_exchange_strong(zero, err);
            stop = true;
            return;
          }
          ++ops[t];
        }
      });
    }
    while (!stop && NowNs() - t0 < uint64_t(seconds * 1e9)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    stop = true;
    for (auto& w : workers) w.join();
    uint64_t t1 = NowNs();
    if (first_err) return OpError(first_err, "write (bandwidth)", size);
    BwRow r;
    r.size = size;
    r.threads = threads;
    r.seconds = (t1 - t0) / 1e9;
    uint64_t total_ops = 0;
    for (uint64_t n : ops) total_ops += n;
    r.bytes = total_ops * size;
    r.mib_per_s = r.bytes / 1048576.0 / r.seconds;
    r.ops_per_s = total_ops / r.seconds;
    return r;
  }

 private:
  lite_ctx* ctx_;
  lite_handle_t h_;
  uint64_t offset_;
  std::vector<uint8_t> buf_;
  std::vector<uint64_t> samples_;
};

int Fail(const absl::Status& s) {
  absl::FPrintF(stderr, "lite-bench: %s\n", s.message());
  return 1;
}

int Usage(absl::string_view why) {
  absl::FPrintF(stderr, "lite-bench: %s (see --help)\n", why);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "LITE one-sided operation latency and write bandwidth.\n"
      "usage: lite-bench (--lmr NAME | --create NAME [--home N] [--size 16M])"
      " [options]\n"
      "Latency rows: op, size, p50/p99/avg/min in microseconds, per single\n"
      "operation (one ioctl, timed with CLOCK_MONOTONIC). write_bw: MiB/s of\n"
      "--bw_threads threads writing --bw_size back to back for --bw_seconds.\n"
      "The LMR must hold offset + max(size) and offset + threads x bw_size.\n"
      "-o json for scripts (tools/bench/compare). Exit 1 if an operation\n"
      "fails, 2 on bad usage.");
  absl::FlagsUsageConfig usage_config;
  usage_config.contains_help_flags = [](absl::string_view file) {
    return absl::StrContains(file, "lite_bench");
  };
  absl::SetFlagsUsageConfig(usage_config);
  std::vector<char*> rest = absl::ParseCommandLine(argc, argv);
  if (rest.size() > 1) return Usage(absl::StrCat("unexpected '", rest[1], "'"));

  const std::string lmr_name = absl::GetFlag(FLAGS_lmr);
  const std::string create = absl::GetFlag(FLAGS_create);
  if (lmr_name.empty() == create.empty()) {
    return Usage("give --lmr NAME or --create NAME");
  }
  const std::string format = absl::GetFlag(FLAGS_o);
  if (format != "table" && format != "json") return Usage("-o: table or json");
  std::vector<std::string> ops =
      absl::StrSplit(absl::GetFlag(FLAGS_ops), ',', absl::SkipEmpty());
  for (const std::string& op : ops) {
    if (op != "read" && op != "write" && op != "faa" && op != "cas" &&
        op != "write_bw") {
      return Usage(absl::StrCat("--ops: unknown '", op, "'"));
    }
  }
  std::vector<uint64_t> sizes;
  for (absl::string_view s :
       absl::StrSplit(absl::GetFlag(FLAGS_sizes), ',', absl::SkipEmpty())) {
    absl::StatusOr<uint64_t> v = lite::cli::ParseSize(s);
    if (!v.ok() || *v == 0)
      return Usage(absl::StrCat("--sizes: bad '", s, "'"));
    sizes.push_back(*v);
  }
  absl::StatusOr<uint64_t> offset =
      lite::cli::ParseSize(absl::GetFlag(FLAGS_offset));
  absl::StatusOr<uint64_t> bw_size =
      lite::cli::ParseSize(absl::GetFlag(FLAGS_bw_size));
  absl::StatusOr<uint64_t> lmr_size =
      lite::cli::ParseSize(absl::GetFlag(FLAGS_size));
  if (!offset.ok() || *offset % 8) return Usage("--offset: a multiple of 8");
  if (!bw_size.ok() || *bw_size == 0) return Usage("--bw_size: a size > 0");
  if (!lmr_size.ok() || *lmr_size == 0) return Usage("--size: a size > 0");
  const uint64_t iters = absl::GetFlag(FLAGS_iters);
  const uint32_t bw_threads = absl::GetFlag(FLAGS_bw_threads);
  const double bw_seconds = absl::GetFlag(FLAGS_bw_seconds);
  if (iters == 0 || iters > 10000000) return Usage("--iters: 1..10000000");
  if (bw_threads == 0 || bw_threads > 256) return Usage("--bw_threads: 1..256");
  if (!(bw_seconds > 0 && bw_seconds <= 600))
    return Usage("--bw_seconds: (0, 600]");

  absl::StatusOr<lite::Lite> session =
      lite::Lite::Open(absl::GetFlag(FLAGS_device));
  if (!session.ok()) return Fail(session.status());
  uint32_t self = 0;
  lite_node_id(session->ctx(), &self, nullptr);

  const std::string name = create.empty() ? lmr_name : create;
  if (!create.empty()) {
    absl::StatusOr<uint64_t> id = session->Alloc(
        create, *lmr_size,
        {.mode = 0600, .home_node_id = absl::GetFlag(FLAGS_home)});
    if (!id.ok()) return Fail(id.status());
  }
  int rc = 0;
  {
    absl::StatusOr<lite::Lmr> lmr = session->Map(name, lite::kReadWrite);
    if (!lmr.ok()) {
      rc = Fail(lmr.status());
    } else {
      // Everything must fit before anything runs.
      uint64_t need = *offset + 8;
      for (const std::string& op : ops) {
        if (op == "write_bw")
          need = std::max(need, *offset + bw_threads * *bw_size);
        if (op == "read" || op == "write") {
          for (uint64_t s : sizes) need = std::max(need, *offset + s);
        }
      }
      if (need > lmr->size()) {
        rc = Usage(absl::StrFormat("LMR %s has %u bytes; these options need %u",
                                   name, lmr->size(), need));
      }
      Bench bench(session->ctx(), lmr->handle(), *offset);
      std::vector<Row> rows;
      std::vector<BwRow> bw;
      for (const std::string& op : ops) {
        if (rc) break;
        if (op == "write_bw") {
          absl::StatusOr<BwRow> r =
              bench.WriteBandwidth(bw_threads, *bw_size, bw_seconds);
          if (!r.ok()) {
            rc = Fail(r.status());
            break;
          }
          bw.push_back(*r);
          continue;
        }
        std::vector<uint64_t> op_sizes = sizes;
        if (op == "faa" || op == "cas") op_sizes = {8};
        for (uint64_t s : op_sizes) {
          absl::StatusOr<Row> r =
              bench.Latency(op, s, iters, absl::GetFlag(FLAGS_warmup));
          if (!r.ok()) {
            rc = Fail(r.status());
            break;
          }
          rows.push_back(*r);
        }
      }
      if (rc == 0 && format == "json") {
        absl::PrintF(
            "{\"lmr\": \"%s\", \"node\": %u, \"home_node\": %u, \"iters\": %u, "
            "\"latency\": [",
            name, self, lmr->home_node_id(), iters);
        for (size_t i = 0; i < rows.size(); ++i) {
          const Row& r = rows[i];
          absl::PrintF(
              "%s{\"op\": \"%s\", \"size\": %u, \"iters\": %u, \"p50_us\": "
              "%.3f, \"p99_us\": %.3f, \"avg_us\": %.3f, \"min_us\": %.3f, "
              "\"max_us\": %.3f}",
              i ? ", " : "", r.op, r.size, r.iters, r.p50_us, r.p99_us,
              r.avg_us, r.min_us, r.max_us);
        }
        absl::PrintF("], \"bandwidth\": [");
        for (size_t i = 0; i < bw.size(); ++i) {
          const BwRow& b = bw[i];
          absl::PrintF(
              "%s{\"op\": \"write\", \"size\": %u, \"threads\": %u, "
              "\"seconds\": %.3f, \"bytes\": %u, \"mib_per_s\": %.2f, "
              "\"ops_per_s\": %.0f}",
              i ? ", " : "", b.size, b.threads, b.seconds, b.bytes, b.mib_per_s,
              b.ops_per_s);
        }
        absl::PrintF("]}\n");
      } else if (rc == 0) {
        absl::PrintF(
            "LMR %s (home node %u) from node %u, %u timed ops per row\n", name,
            lmr->home_node_id(), self, iters);
        absl::PrintF("%-6s %8s %10s %10s %10s %10s\n", "OP", "SIZE", "P50_US",
                     "P99_US", "AVG_US", "MIN_US");
        for (const Row& r : rows) {
          absl::PrintF("%-6s %8u %10.2f %10.2f %10.2f %10.2f\n", r.op, r.size,
                       r.p50_us, r.p99_us, r.avg_us, r.min_us);
        }
        for (const BwRow& b : bw) {
          absl::PrintF(
              "write bandwidth: %u threads x %u B for %.1f s: %.2f MiB/s "
              "(%.0f ops/s)\n",
              b.threads, b.size, b.seconds, b.mib_per_s, b.ops_per_s);
        }
      }
    }
  }
  if (!create.empty() && !absl::GetFlag(FLAGS_keep)) {
    if (absl::Status s = session->Free(create); !s.ok()) {
      Fail(s);
      rc = rc ? rc : 1;
    }
  }
  return rc;
}
