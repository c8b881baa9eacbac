#include "tools/bench/lite_bench.h"

#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "api/lite.h"
#include "common/cli/cli.h"
#include "common/cli/json.h"
#include "common/status/macros.h"
#include "common/units/units.h"

namespace lite::bench {
namespace {

using cli::Json;

struct Row {
  std::string op;
  uint64_t size = 0;
  uint64_t iters = 0;
  double p50_us = 0, p99_us = 0, avg_us = 0, min_us = 0, max_us = 0;
  // The calling thread's CPU time (user + system) and context switches
  // (voluntary + involuntary) per timed operation, from getrusage.
  double cpu_us_per_op = 0, switches_per_op = 0;
};

// Small operations from one thread, batched (LITE_IOC_BATCH) or on an
// io_uring (lite_ring).
struct BatchRow {
  std::string op;  // read, write, faa, cas
  bool ring = false;
  uint64_t size = 0;
  uint32_t batch = 0;  // entries per system call, or in flight on the ring
  double seconds = 0;
  uint64_t ops = 0;
  double ops_per_s = 0, cpu_us_per_op = 0, switches_per_op = 0;
};

struct BwRow {
  uint64_t size = 0;
  uint32_t threads = 0;
  double seconds = 0;
  uint64_t bytes = 0;
  double mib_per_s = 0, ops_per_s = 0;
};

// What the flags ask for, checked before the device is opened.
struct Options {
  std::string lmr;  // --lmr, or the --create name
  bool create = false;
  uint64_t size = 0;  // --size, with --create
  cli::NodeRef home;  // --home, with --create: by id, or a name to look up
  std::vector<std::string> ops;
  std::vector<uint64_t> sizes;
  uint64_t iters = 0;
  uint64_t warmup = 0;
  uint64_t offset = 0;
  uint32_t bw_threads = 0;
  uint64_t bw_size = 0;
  double bw_seconds = 0;
  uint32_t batch = 0;     // --batch: entries per LITE_IOC_BATCH
  uint32_t depth = 0;     // --depth: ring_* operations in flight
  uint32_t reap = 0;      // --reap: ring_* completions waited for per poll
  uint32_t priority = 0;  // --priority: 0 = the context's default
};

// This thread's CPU time in microseconds and context switches so far.
struct ThreadUsage {
  double cpu_us = 0;
  double switches = 0;
};

ThreadUsage UsageNow() {
  rusage ru;
  getrusage(RUSAGE_THREAD, &ru);
  auto us = [](const timeval& tv) { return tv.tv_sec * 1e6 + tv.tv_usec; };
  return {us(ru.ru_utime) + us(ru.ru_stime),
          double(ru.ru_nvcsw) + double(ru.ru_nivcsw)};
}

uint64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + ts.tv_nsec;
}

absl::Status OpError(int err, absl::string_view op, uint64_t size) {
  return lite::ErrnoToStatus(err, absl::StrFormat("%s %u B", op, size),
                             lite_message());
}

// The name of node `id`, or "" if it has none or lite.ko cannot say.
std::string NameOf(const lite::Lite& l, uint32_t id) {
  absl::StatusOr<std::string> name = l.NodeName(id);
  return name.ok() ? *name : "";
}

// `x` rounded to `digits` decimals, for JSON that reads like the table.
double Round(double x, int digits) {
  const double scale = std::pow(10.0, digits);
  return std::round(x * scale) / scale;
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
    ThreadUsage before;
    for (uint64_t i = 0; i < warmup + iters; ++i) {
      if (i == warmup) before = UsageNow();
      const uint64_t t0 = NowNs();
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
      const uint64_t t1 = NowNs();
      if (err) return OpError(err, op, size);
      if (i >= warmup) samples_[i - warmup] = t1 - t0;
    }
    const ThreadUsage after = UsageNow();
    std::sort(samples_.begin(), samples_.end());
    Row r;
    r.cpu_us_per_op = (after.cpu_us - before.cpu_us) / iters;
    r.switches_per_op = (after.switches - before.switches) / iters;
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
    const uint64_t t0 = NowNs();
    for (uint32_t t = 0; t < threads; ++t) {
      workers.emplace_back([&, t] {
        const uint64_t at = offset_ + t * size;
        while (!stop.load(std::memory_order_relaxed)) {
          const int err = lite_write(ctx_, h_, at, bufs[t].data(), size);
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
    const uint64_t t1 = NowNs();
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

  // One thread runs `batch` operations per system call for `seconds`.
  absl::StatusOr<BatchRow> Batched(const std::string& op, uint64_t size,
                                   uint32_t batch, double seconds) {
    std::vector<uint8_t> bufs(size * batch, 0x5a);
    std::vector<lite_batch_op> ops(batch);
    auto fill = [&] {
      for (uint32_t i = 0; i < batch; ++i) {
        // Each entry its own bytes (or word) of the LMR and of the buffer.
        const uint64_t at = offset_ + i * size;
        if (op == "read") {
          lite_batch_read(&ops[i], h_, at, &bufs[i * size], size);
        } else if (op == "write") {
          lite_batch_write(&ops[i], h_, at, &bufs[i * size], size);
        } else if (op == "faa") {
          lite_batch_faa(&ops[i], h_, at, 1);
        } else {  // cas: swaps when the word is still what it last was
          lite_batch_cas(&ops[i], h_, at, ops[i].result, ops[i].result + 1);
        }
      }
    };
    BatchRow r;
    r.op = op;
    r.size = size;
    r.batch = batch;
    const ThreadUsage before = UsageNow();
    const uint64_t t0 = NowNs();
    uint64_t t1 = t0;
    do {
      fill();
      const int err = lite_batch_run(ctx_, ops.data(), batch, nullptr);
      if (err) return OpError(err, "batch " + op, size);
      for (const lite_batch_op& e : ops) {
        if (e.error) return OpError(e.error, "batched " + op, size);
      }
      r.ops += batch;
      t1 = NowNs();
    } while (t1 - t0 < uint64_t(seconds * 1e9));
    const ThreadUsage after = UsageNow();
    r.seconds = (t1 - t0) / 1e9;
    r.ops_per_s = r.ops / r.seconds;
    r.cpu_us_per_op = (after.cpu_us - before.cpu_us) / r.ops;
    r.switches_per_op = (after.switches - before.switches) / r.ops;
    return r;
  }

  // One thread keeps `depth` operations in flight on an io_uring for
  // `seconds`: each completion is checked and its slot submitted again.
  absl::StatusOr<BatchRow> Ring(const std::string& op, uint64_t size,
                                uint32_t depth, uint32_t reap, double seconds) {
    lite_ring* ring = nullptr;
    int err = lite_ring_create(ctx_, depth, &ring);
    if (err) return OpError(err, "ring " + op, size);
    std::vector<uint8_t> bufs(size * depth, 0x5a);
    std::vector<uint64_t> last(depth, 0);  // cas: the word's last value
    std::vector<lite_completion> done(depth);
    auto submit = [&](uint32_t i) {
      lite_batch_op e;
      const uint64_t at = offset_ + i * size;
      if (op == "read") {
        lite_batch_read(&e, h_, at, &bufs[i * size], size);
      } else if (op == "write") {
        lite_batch_write(&e, h_, at, &bufs[i * size], size);
      } else if (op == "faa") {
        lite_batch_faa(&e, h_, at, 1);
      } else {
        lite_batch_cas(&e, h_, at, last[i], last[i] + 1);
      }
      return lite_ring_submit(ring, &e, i);
    };
    BatchRow r;
    r.op = op;
    r.ring = true;
    r.size = size;
    r.batch = depth;
    const ThreadUsage before = UsageNow();
    const uint64_t t0 = NowNs();
    uint64_t t1 = t0;
    for (uint32_t i = 0; i < depth && !err; ++i) err = submit(i);
    while (!err && t1 - t0 < uint64_t(seconds * 1e9)) {
      const int n = lite_ring_poll(ring, done.data(), depth, reap);
      if (n < 0) {
        err = n;
        break;
      }
      for (int k = 0; k < n && !err; ++k) {
        const lite_completion& c = done[k];
        if (c.error) {
          err = c.error;
          break;
        }
        last[c.tag] = c.result;
        ++r.ops;
        err = submit(c.tag);
      }
      t1 = NowNs();
    }
    const ThreadUsage after = UsageNow();
    lite_ring_destroy(ring);  // waits for the last ones, untimed
    if (err) return OpError(err, "ring " + op, size);
    r.seconds = (t1 - t0) / 1e9;
    r.ops_per_s = r.ops / r.seconds;
    r.cpu_us_per_op = (after.cpu_us - before.cpu_us) / r.ops;
    r.switches_per_op = (after.switches - before.switches) / r.ops;
    return r;
  }

 private:
  lite_ctx* ctx_;
  lite_handle_t h_;
  uint64_t offset_;
  std::vector<uint8_t> buf_;
  std::vector<uint64_t> samples_;
};

absl::StatusOr<Options> ReadOptions(const cli::Args& a) {
  Options o;
  if (a.Has("lmr") == a.Has("create")) {
    return cli::UsageError("give --lmr NAME or --create NAME");
  }
  o.create = a.Has("create");
  o.lmr = o.create ? a.Get("create") : a.Get("lmr");
  if (o.lmr.empty()) {
    return cli::UsageError(absl::StrFormat("--%s: the LMR's name is empty",
                                           o.create ? "create" : "lmr"));
  }
  for (absl::string_view op :
       absl::StrSplit(a.Get("ops", "read,write,faa,cas,write_bw"), ',',
                      absl::SkipEmpty())) {
    if (op != "read" && op != "write" && op != "faa" && op != "cas" &&
        op != "write_bw" && op != "batch_read" && op != "batch_write" &&
        op != "batch_faa" && op != "batch_cas" && op != "ring_read" &&
        op != "ring_write" && op != "ring_faa" && op != "ring_cas") {
      return cli::UsageError(absl::StrFormat(
          "--ops: unknown '%s' (read, write, faa, cas, write_bw, batch_read, "
          "batch_write, batch_faa, batch_cas, ring_read, ring_write, "
          "ring_faa, ring_cas)",
          op));
    }
    o.ops.emplace_back(op);
  }
  for (absl::string_view s : absl::StrSplit(a.Get("sizes", "8,64,512,4K,64K"),
                                            ',', absl::SkipEmpty())) {
    absl::StatusOr<uint64_t> v = units::ParseSize(s);
    if (!v.ok() || *v == 0) {
      return cli::UsageError(absl::StrFormat(
          "--sizes: bad '%s' (sizes > 0 with K, M, G, e.g. 8,64,4K)", s));
    }
    o.sizes.push_back(*v);
  }
  LITE_ASSIGN_OR_RETURN(o.offset, cli::Size("--offset", a.Get("offset", "0")));
  if (o.offset % 8 != 0) {
    return cli::UsageError(
        absl::StrFormat("--offset: a multiple of 8, not %u", o.offset));
  }
  LITE_ASSIGN_OR_RETURN(o.bw_size,
                        cli::Size("--bw_size", a.Get("bw_size", "64K")));
  if (o.bw_size == 0) return cli::UsageError("--bw_size: a size > 0, not 0");
  LITE_ASSIGN_OR_RETURN(o.size, cli::Size("--size", a.Get("size", "16M")));
  if (o.size == 0) return cli::UsageError("--size: a size > 0, not 0");
  LITE_ASSIGN_OR_RETURN(o.iters,
                        cli::Number("--iters", a.Get("iters", "1000")));
  if (o.iters == 0 || o.iters > 10000000) {
    return cli::UsageError(
        absl::StrFormat("--iters: 1..10000000, not %u", o.iters));
  }
  LITE_ASSIGN_OR_RETURN(o.warmup,
                        cli::Number("--warmup", a.Get("warmup", "100")));
  LITE_ASSIGN_OR_RETURN(
      uint64_t threads,
      cli::Number("--bw_threads", a.Get("bw_threads", "4"), UINT32_MAX));
  if (threads == 0 || threads > 256) {
    return cli::UsageError(
        absl::StrFormat("--bw_threads: 1..256, not %u", threads));
  }
  o.bw_threads = static_cast<uint32_t>(threads);
  LITE_ASSIGN_OR_RETURN(uint64_t batch,
                        cli::Number("--batch", a.Get("batch", "16"), 1u << 20));
  if (batch == 0 || batch > LITE_BATCH_MAX) {
    return cli::UsageError(
        absl::StrFormat("--batch: 1..%u, not %u", LITE_BATCH_MAX, batch));
  }
  o.batch = static_cast<uint32_t>(batch);
  LITE_ASSIGN_OR_RETURN(uint64_t depth,
                        cli::Number("--depth", a.Get("depth", "16"), 1u << 20));
  if (depth == 0 || depth > LITE_RING_DEPTH_MAX) {
    return cli::UsageError(
        absl::StrFormat("--depth: 1..%u, not %u", LITE_RING_DEPTH_MAX, depth));
  }
  o.depth = static_cast<uint32_t>(depth);
  // A quarter of the ring by default: the best of 1, 4 and 8 at depth 16
  // over three interleaved rounds (docs/datapath.md).
  const std::string reap_default =
      absl::StrCat(std::max<uint64_t>(1, depth / 4));
  LITE_ASSIGN_OR_RETURN(
      uint64_t reap,
      cli::Number("--reap", a.Get("reap", reap_default), 1u << 20));
  if (reap == 0 || reap > depth) {
    return cli::UsageError(
        absl::StrFormat("--reap: 1..--depth (%u), not %u", depth, reap));
  }
  o.reap = static_cast<uint32_t>(reap);
  const std::string prio = a.Get("priority");
  if (prio == "high") {
    o.priority = LITE_PRIO_HIGH;
  } else if (prio == "low") {
    o.priority = LITE_PRIO_LOW;
  } else if (!prio.empty()) {
    return cli::UsageError(
        absl::StrFormat("--priority: high or low, not '%s'", prio));
  }
  const std::string secs = a.Get("bw_seconds", "3");
  if (!absl::SimpleAtod(secs, &o.bw_seconds) || !(o.bw_seconds > 0) ||
      o.bw_seconds > 600) {
    return cli::UsageError(absl::StrFormat(
        "--bw_seconds: a number of seconds in (0, 600], not '%s'", secs));
  }
  LITE_ASSIGN_OR_RETURN(o.home, cli::ParseNode("--home", a.Get("home", "0")));
  if (!o.create) {
    for (const char* f : {"size", "home", "keep"}) {
      if (a.Has(f)) {
        return cli::UsageError(absl::StrFormat("--%s goes with --create", f));
      }
    }
  }
  return o;
}

// The node ids and names a run reports.
struct Nodes {
  uint32_t self = 0;
  std::string self_name;
  uint32_t home = 0;
  std::string home_name;
};

void PrintJson(const cli::Args& a, const Options& o, const Nodes& n,
               const std::vector<Row>& rows, const std::vector<BwRow>& bw,
               const std::vector<BatchRow>& batched) {
  Json latency = Json::array();
  for (const Row& r : rows) {
    latency.push_back({{"op", r.op},
                       {"size", r.size},
                       {"iters", r.iters},
                       {"p50_us", Round(r.p50_us, 3)},
                       {"p99_us", Round(r.p99_us, 3)},
                       {"avg_us", Round(r.avg_us, 3)},
                       {"min_us", Round(r.min_us, 3)},
                       {"max_us", Round(r.max_us, 3)},
                       {"cpu_us_per_op", Round(r.cpu_us_per_op, 2)},
                       {"switches_per_op", Round(r.switches_per_op, 3)}});
  }
  Json bandwidth = Json::array();
  for (const BwRow& b : bw) {
    bandwidth.push_back({{"op", "write"},
                         {"size", b.size},
                         {"threads", b.threads},
                         {"seconds", Round(b.seconds, 3)},
                         {"bytes", b.bytes},
                         {"mib_per_s", Round(b.mib_per_s, 2)},
                         {"ops_per_s", std::llround(b.ops_per_s)}});
  }
  Json batch = Json::array();
  Json ring = Json::array();
  for (const BatchRow& b : batched) {
    (b.ring ? ring : batch)
        .push_back({{"op", b.op},
                    {"size", b.size},
                    {b.ring ? "depth" : "batch", b.batch},
                    {"seconds", Round(b.seconds, 3)},
                    {"ops", b.ops},
                    {"ops_per_s", std::llround(b.ops_per_s)},
                    {"cpu_us_per_op", Round(b.cpu_us_per_op, 2)},
                    {"switches_per_op", Round(b.switches_per_op, 3)}});
  }
  a.out() << cli::JsonLine({{"lmr", o.lmr},
                            {"node_name", n.self_name},
                            {"node", n.self},
                            {"home_node_name", n.home_name},
                            {"home_node", n.home},
                            {"iters", o.iters},
                            {"latency", std::move(latency)},
                            {"bandwidth", std::move(bandwidth)},
                            {"batched", std::move(batch)},
                            {"ring", std::move(ring)}})
          << "\n";
}

void PrintTable(const cli::Args& a, const Options& o, const Nodes& n,
                const std::vector<Row>& rows, const std::vector<BwRow>& bw,
                const std::vector<BatchRow>& batched) {
  std::ostream& out = a.out();
  out << absl::StrFormat(
      "LMR %s (home node %s) from node %s, %u timed ops per row\n", o.lmr,
      cli::NodeLabel(n.home_name, n.home), cli::NodeLabel(n.self_name, n.self),
      o.iters);
  out << absl::StrFormat("%-6s %8s %10s %10s %10s %10s %10s %9s\n", "OP",
                         "SIZE", "P50_US", "P99_US", "AVG_US", "MIN_US",
                         "CPU_US/OP", "CSW/OP");
  for (const Row& r : rows) {
    out << absl::StrFormat(
        "%-6s %8u %10.2f %10.2f %10.2f %10.2f %10.2f %9.3f\n", r.op, r.size,
        r.p50_us, r.p99_us, r.avg_us, r.min_us, r.cpu_us_per_op,
        r.switches_per_op);
  }
  for (const BwRow& b : bw) {
    out << absl::StrFormat(
        "write bandwidth: %u threads x %u B for %.1f s: %.2f MiB/s "
        "(%.0f ops/s)\n",
        b.threads, b.size, b.seconds, b.mib_per_s, b.ops_per_s);
  }
  for (const BatchRow& b : batched) {
    out << absl::StrFormat(
        "%s %s %u B, %u %s, 1 thread for %.1f s: %.0f ops/s, "
        "%.2f CPU us/op, %.3f switches/op\n",
        b.ring ? "io_uring" : "batched", b.op, b.size, b.batch,
        b.ring ? "in flight" : "per call", b.seconds, b.ops_per_s,
        b.cpu_us_per_op, b.switches_per_op);
  }
}

// Maps the LMR, checks that everything fits, measures, prints.
absl::Status Measure(const cli::Args& a, const Options& o, lite::Lite& session,
                     Nodes nodes) {
  LITE_ASSIGN_OR_RETURN(lite::Lmr lmr, session.Map(o.lmr, lite::kReadWrite));
  // Everything must fit before anything runs.
  uint64_t need = o.offset + 8;
  for (const std::string& op : o.ops) {
    if (op == "write_bw") {
      need = std::max(need, o.offset + o.bw_threads * o.bw_size);
    }
    if (op == "read" || op == "write") {
      for (uint64_t s : o.sizes) need = std::max(need, o.offset + s);
    }
    const bool ring = absl::StartsWith(op, "ring_");
    if (ring || absl::StartsWith(op, "batch_")) {
      uint64_t biggest = 8;
      if (absl::EndsWith(op, "_read") || absl::EndsWith(op, "_write")) {
        for (uint64_t s : o.sizes) {
          if (s <= LITE_BATCH_RW_MAX) biggest = std::max(biggest, s);
        }
      }
      need = std::max(need, o.offset + (ring ? o.depth : o.batch) * biggest);
    }
  }
  if (need > lmr.size()) {
    return cli::UsageError(absl::StrFormat(
        "LMR %s has %u bytes; these options need %u", o.lmr, lmr.size(), need));
  }
  Bench bench(session.ctx(), lmr.handle(), o.offset);
  std::vector<Row> rows;
  std::vector<BwRow> bw;
  std::vector<BatchRow> batched;
  for (const std::string& op : o.ops) {
    const bool ring = absl::StartsWith(op, "ring_");
    if (ring || absl::StartsWith(op, "batch_")) {
      const std::string kind = op.substr(5 + !ring);
      std::vector<uint64_t> op_sizes;
      if (kind == "faa" || kind == "cas") {
        op_sizes = {8};
      } else {
        for (uint64_t s : o.sizes) {
          if (s <= LITE_BATCH_RW_MAX) op_sizes.push_back(s);
        }
      }
      for (uint64_t s : op_sizes) {
        LITE_ASSIGN_OR_RETURN(
            BatchRow r, ring
                            ? bench.Ring(kind, s, o.depth, o.reap, o.bw_seconds)
                            : bench.Batched(kind, s, o.batch, o.bw_seconds));
        batched.push_back(r);
      }
      continue;
    }
    if (op == "write_bw") {
      LITE_ASSIGN_OR_RETURN(
          BwRow r, bench.WriteBandwidth(o.bw_threads, o.bw_size, o.bw_seconds));
      bw.push_back(r);
      continue;
    }
    std::vector<uint64_t> op_sizes = o.sizes;
    if (op == "faa" || op == "cas") op_sizes = {8};
    for (uint64_t s : op_sizes) {
      LITE_ASSIGN_OR_RETURN(Row r, bench.Latency(op, s, o.iters, o.warmup));
      rows.push_back(r);
    }
  }
  nodes.home = lmr.home_node_id();
  nodes.home_name = NameOf(session, nodes.home);
  if (a.output() == cli::Output::kJson) {
    PrintJson(a, o, nodes, rows, bw, batched);
  } else {
    PrintTable(a, o, nodes, rows, bw, batched);
  }
  return absl::OkStatus();
}

absl::Status Run(const cli::Args& a, const Opener& open) {
  LITE_ASSIGN_OR_RETURN(Options o, ReadOptions(a));
  LITE_ASSIGN_OR_RETURN(lite::Lite session,
                        open(a.Get("device", LITE_DEVICE_PATH)));
  if (o.priority != 0) LITE_RETURN_IF_ERROR(session.SetPriority(o.priority));
  Nodes nodes;
  lite_node_id(session.ctx(), &nodes.self, nullptr);
  if (nodes.self != 0) nodes.self_name = NameOf(session, nodes.self);
  if (o.create) {
    uint32_t home = o.home.id;
    if (!o.home.name.empty()) {
      LITE_ASSIGN_OR_RETURN(home, session.NodeId(o.home.name));
    }
    LITE_RETURN_IF_ERROR(
        session.Alloc(o.lmr, o.size, {.mode = 0600, .home_node_id = home})
            .status());
  }
  absl::Status s = Measure(a, o, session, nodes);
  if (o.create && !a.Has("keep")) {
    absl::Status freed = session.Free(o.lmr);
    if (!freed.ok()) {
      // The first error is the one that counts; this one is still shown.
      if (!s.ok()) {
        a.err() << "lite-bench: " << cli::OneLine(freed.message()) << "\n";
      }
      if (s.ok()) s = freed;
    }
  }
  return s;
}

constexpr char kDetails[] =
    "Latency rows: op, size, p50/p99/avg/min in microseconds, per single\n"
    "operation (one ioctl, timed with CLOCK_MONOTONIC), and the thread's CPU\n"
    "time and context switches per operation (getrusage). write_bw: MiB/s of\n"
    "--bw_threads threads writing --bw_size back to back for --bw_seconds.\n"
    "batch_*: operations per second from one thread, --batch of them per\n"
    "LITE_IOC_BATCH, for --bw_seconds, with CPU time and switches per op.\n"
    "ring_*: the same with --depth operations kept in flight on an io_uring\n"
    "(lite_ring: one io_uring command per operation).\n"
    "The LMR must hold offset + max(size) and offset + threads x bw_size\n"
    "(checked before anything runs, exit 2 if not).";

constexpr char kFooter[] =
    "-o json for scripts (tools/bench/compare): one line, {\"lmr\",\n"
    "\"node_name\", \"node\", \"home_node_name\", \"home_node\", \"iters\",\n"
    "\"latency\": [...], \"bandwidth\": [...], \"batched\": [...], \"ring\":\n"
    "[...]}; numbers\n"
    "as JSON numbers, a\n"
    "node without a name as \"\".\n\n"
    "Exit status: 0 success; 1 an operation failed (\"lite-bench: <op> "
    "<size> B:\n<strerror> (<ERRNO>)\" on stderr); 2 bad usage.\n";

}  // namespace

int RunLiteBench(const std::vector<std::string>& args, std::ostream& out,
                 std::ostream& err, const Opener& open) {
  cli::Tool tool;
  tool.footer = kFooter;
  tool.root = {
      .name = "lite-bench",
      .usage =
          "lite-bench (--lmr NAME | --create NAME [--home NODE] "
          "[--size 16M]) [flags]",
      .summary = "LITE one-sided operation latency and write bandwidth",
      .details = kDetails,
      .flags =
          {
              {.name = "lmr",
               .value = "NAME",
               .help = "an existing LMR to measure (mapped read-write); or "
                       "use --create"},
              {.name = "create",
               .value = "NAME",
               .help = "create this LMR (--size, --home), measure it, free "
                       "it (unless --keep)"},
              {.name = "size",
               .value = "SIZE",
               .help = "with --create: the LMR's size (default 16M)"},
              {.name = "home",
               .value = "NODE",
               .help = "with --create: its home node, by name (node2) or id "
                       "(all digits; default 0: this node)"},
              {.name = "keep",
               .help = "with --create: do not free the LMR at the end"},
              {.name = "device",
               .value = "PATH",
               .help = "the LITE device (default " LITE_DEVICE_PATH ")"},
              {.name = "ops",
               .value = "LIST",
               .help = "what to measure: read, write, faa, cas (latency), "
                       "write_bw, batch_read, batch_write, batch_faa, "
                       "batch_cas (ops/s of batches from one thread), "
                       "ring_read, ring_write, ring_faa, ring_cas (ops/s "
                       "on an io_uring from one thread) "
                       "(default: read,write,faa,cas,write_bw)"},
              {.name = "sizes",
               .value = "LIST",
               .help = "sizes for read/write latency (default "
                       "8,64,512,4K,64K; atomics are always 8 B)"},
              {.name = "iters",
               .value = "N",
               .help = "timed operations per latency row (default 1000)"},
              {.name = "warmup",
               .value = "N",
               .help = "untimed operations before each row (default 100)"},
              {.name = "offset",
               .value = "SIZE",
               .help = "where in the LMR to work, a multiple of 8 (default "
                       "0)"},
              {.name = "bw_threads",
               .value = "N",
               .help = "write_bw: threads writing at once (default 4)"},
              {.name = "bw_size",
               .value = "SIZE",
               .help = "write_bw: bytes per write (default 64K)"},
              {.name = "bw_seconds",
               .value = "SECONDS",
               .help = "write_bw, batch_* and ring_*: how long each row runs "
                       "(default 3)"},
              {.name = "batch",
               .value = "N",
               .help = "batch_*: operations per system call, 1..256 "
                       "(default 16); read/write rows for the --sizes up "
                       "to 16K"},
              {.name = "depth",
               .value = "N",
               .help = "ring_*: operations in flight, 1..256 (default 16)"},
              {.name = "priority",
               .value = "high|low",
               .help = "run every operation at this QoS priority "
                       "(docs/qos.md; high needs CAP_SYS_NICE or "
                       "qos_high_gid; default: low)"},
              {.name = "reap",
               .value = "N",
               .help = "ring_*: completions each poll waits for before the "
                       "ring is refilled, 1..depth (default depth/4)"},
          },
      .run = [&open](const cli::Args& a) { return Run(a, open); },
  };
  return cli::Run(tool, args, out, err);
}

}  // namespace lite::bench
