// liteop's RPC commands: an echo server (rpc-serve), and a client that
// calls it and checks every reply (rpc-call) or sends it messages
// (rpc-send). For scripts, the VM tests and the demo: the server prints
// one "serving ..." line once it is registered, then serves until it has
// answered --count requests or is killed.
#include <signal.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "api/lite.hpp"
#include "common/cli/cli.h"
#include "common/pattern/pattern.h"
#include "common/status/macros.h"
#include "tools/liteop/liteop_internal.h"

namespace lite::liteop {
namespace {

// The RPC errors, with what libLITE or the manager said.
absl::Status RpcError(int err, const char* call) {
  return lite::ErrnoToStatus(err, call, lite_message());
}

absl::StatusOr<uint32_t> U32Flag(const cli::Args& a, const char* name,
                                 uint32_t fallback, uint32_t max) {
  if (!a.Has(name)) return fallback;
  LITE_ASSIGN_OR_RETURN(
      uint64_t v, cli::Number(absl::StrCat("--", name), a.Get(name), max));
  return static_cast<uint32_t>(v);
}

absl::StatusOr<uint32_t> SizeFlag(const cli::Args& a, const char* name,
                                  uint32_t fallback) {
  if (!a.Has(name)) return fallback;
  LITE_ASSIGN_OR_RETURN(uint64_t v,
                        cli::Size(absl::StrCat("--", name), a.Get(name)));
  if (v > LITE_RPC_MSG_MAX) {
    return cli::UsageError(
        absl::StrFormat("--%s: at most 1M, not %u", name, v));
  }
  return static_cast<uint32_t>(v);
}

// Serves on one thread: every call is answered with its own bytes, in
// place (no copy), every message released; reply and next receive are one
// system call. Stops when `left` runs out.
absl::Status ServeLoop(lite_ctx* ctx, lite_service_t svc,
                       const lite_service_info& info, uint32_t hold_ms,
                       std::atomic<int64_t>& left,
                       std::atomic<uint64_t>& served,
                       std::atomic<uint64_t>& messages) {
  lite_rpc_request reqs[16];
  uint64_t pending = 0;  // the call answered with the next receive
  const void* pending_data = nullptr;
  size_t pending_len = 0;
  for (;;) {
    uint32_t count = 0;
    int err = pending != 0
                  ? lite_rpc_reply_recv(ctx, svc, pending, pending_data,
                                        pending_len, reqs, 16, 500, &count)
                  : lite_rpc_recv(ctx, svc, reqs, 16, 500, &count);
    if (err == -EHOSTDOWN && pending != 0) {
      // Its caller's node failed: nothing was taken; serve on.
      pending = 0;
      continue;
    }
    if (err) return RpcError(err, pending ? "rpc_reply_recv" : "rpc_recv");
    if (pending != 0) served.fetch_add(1);
    pending = 0;
    // --hold-ms: a slow server, for callers' timeouts and late replies.
    if (count != 0 && hold_ms != 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(hold_ms));
    }
    for (uint32_t i = 0; i < count; ++i) {
      const lite_rpc_request& r = reqs[i];
      left.fetch_sub(1);
      if (r.flags & LITE_RPC_REQ_ONEWAY) {
        err = lite_rpc_release(ctx, svc, r.id);
        if (err && err != -EHOSTDOWN) return RpcError(err, "rpc_release");
        messages.fetch_add(1);
      } else if (i + 1 == count) {
        pending = r.id;
        pending_data = lite_rpc_data(&info, &r);
        pending_len = r.length;
      } else {
        err = lite_rpc_reply_in_place(ctx, svc, &info, r.id,
                                      lite_rpc_data(&info, &r), r.length);
        if (err && err != -EHOSTDOWN) return RpcError(err, "rpc_reply");
        served.fetch_add(1);
      }
    }
    if (left.load() > 0) continue;
    if (pending != 0) {
      err = lite_rpc_reply(ctx, svc, pending, pending_data, pending_len);
      if (err && err != -EHOSTDOWN) return RpcError(err, "rpc_reply");
      served.fetch_add(1);
    }
    return absl::OkStatus();
  }
}

absl::Status Serve(const cli::Args& a, const Opener& open) {
  const std::string& name = a.positional()[0];
  lite_service_opts opts = {};
  LITE_ASSIGN_OR_RETURN(opts.mode, cli::Mode("--mode", a.Get("mode", "0711")));
  LITE_ASSIGN_OR_RETURN(opts.max_request, SizeFlag(a, "max-request", 4096));
  LITE_ASSIGN_OR_RETURN(opts.max_reply, SizeFlag(a, "max-reply", 4096));
  LITE_ASSIGN_OR_RETURN(opts.depth, U32Flag(a, "depth", 16, 1024));
  LITE_ASSIGN_OR_RETURN(opts.max_clients, U32Flag(a, "max-clients", 16, 1025));
  LITE_ASSIGN_OR_RETURN(uint32_t threads, U32Flag(a, "threads", 1, 64));
  LITE_ASSIGN_OR_RETURN(uint32_t hold_ms, U32Flag(a, "hold-ms", 0, 600000));
  LITE_ASSIGN_OR_RETURN(uint64_t count,
                        cli::Number("--count", a.Get("count", "0")));
  if (threads == 0) return cli::UsageError("--threads: at least 1");
  LITE_ASSIGN_OR_RETURN(lite::Lite l, open(a.Get("device", LITE_DEVICE_PATH)));
  lite_service_t svc = 0;
  lite_service_info info = {};
  int err = lite_rpc_register(l.ctx(), name.c_str(), &opts, &svc, &info);
  if (err) return RpcError(err, "rpc_register");
  PrintRecord(a, {{"serving", name},
                  {"service_id", absl::StrFormat("%#x", info.service_id)},
                  {"port", info.port},
                  {"depth", info.depth},
                  {"slot_bytes", info.slot_bytes},
                  {"threads", threads}});
  a.out().flush();
  std::atomic<int64_t> left(count == 0 ? INT64_MAX
                                       : static_cast<int64_t>(count));
  std::atomic<uint64_t> served(0), messages(0);
  std::vector<absl::Status> results(threads);
  std::vector<std::thread> pool;
  for (uint32_t t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      results[t] =
          ServeLoop(l.ctx(), svc, info, hold_ms, left, served, messages);
    });
  }
  for (std::thread& t : pool) t.join();
  lite_rpc_unregister(l.ctx(), svc, &info);
  for (const absl::Status& s : results) LITE_RETURN_IF_ERROR(s);
  PrintRecord(a, {{"served", served.load()}, {"messages", messages.load()}});
  return absl::OkStatus();
}

uint64_t Percentile(std::vector<uint64_t>& v, double p) {
  if (v.empty()) return 0;
  const size_t k = std::min(v.size() - 1, static_cast<size_t>(p * v.size()));
  std::nth_element(v.begin(), v.begin() + k, v.end());
  return v[k];
}

// One calling thread: `count` calls, request i a pattern unique to this
// thread and call, every reply compared with its request.
absl::Status CallLoop(lite_ctx* ctx, lite_service_t svc, uint32_t size,
                      uint64_t count, uint64_t seed, uint32_t timeout,
                      uint32_t flags, std::vector<uint64_t>& us) {
  std::vector<uint8_t> req(size), reply(size + 64);
  us.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    pattern::FillPattern(seed + i, 0, absl::MakeSpan(req));
    size_t got = 0;
    const auto start = std::chrono::steady_clock::now();
    int err =
        lite_rpc_call_flags(ctx, svc, req.data(), req.size(), reply.data(),
                            reply.size(), &got, timeout, flags);
    const auto end = std::chrono::steady_clock::now();
    if (err) return RpcError(err, "rpc_call");
    if (got != size || !std::equal(req.begin(), req.end(), reply.begin())) {
      return absl::DataLossError(absl::StrFormat(
          "call %u: the reply (%u bytes) is not the request echoed (%u)", i,
          got, size));
    }
    us.push_back(
        std::chrono::duration_cast<std::chrono::microseconds>(end - start)
            .count());
  }
  return absl::OkStatus();
}

absl::Status Call(const cli::Args& a, const Opener& open) {
  const std::string& name = a.positional()[0];
  LITE_ASSIGN_OR_RETURN(uint32_t size, SizeFlag(a, "size", 64));
  LITE_ASSIGN_OR_RETURN(uint64_t count,
                        cli::Number("--count", a.Get("count", "1"), 1u << 24));
  LITE_ASSIGN_OR_RETURN(uint32_t timeout,
                        U32Flag(a, "timeout-ms", 0, LITE_RPC_TIMEOUT_MAX_MS));
  LITE_ASSIGN_OR_RETURN(uint64_t seed,
                        cli::Number("--pattern", a.Get("pattern", "1")));
  LITE_ASSIGN_OR_RETURN(uint32_t threads, U32Flag(a, "threads", 1, 256));
  if (count == 0) return cli::UsageError("--count: at least 1");
  if (threads == 0) return cli::UsageError("--threads: at least 1");
  LITE_ASSIGN_OR_RETURN(lite::Lite l, open(a.Get("device", LITE_DEVICE_PATH)));
  lite_service_t svc = 0;
  lite_service_peer peer = {};
  int err = lite_rpc_open(l.ctx(), name.c_str(), &svc, &peer);
  if (err) return RpcError(err, "rpc_open");
  const uint32_t flags = a.Has("nonblock") ? LITE_RPC_NONBLOCK : 0;
  std::vector<std::vector<uint64_t>> us(threads);
  std::vector<absl::Status> results(threads);
  std::vector<std::thread> pool;
  // What a call costs the caller beyond its latency: CPU and switches.
  rusage before = {}, after = {};
  getrusage(RUSAGE_SELF, &before);
  const auto start = std::chrono::steady_clock::now();
  for (uint32_t t = 0; t < threads; ++t) {
    // Thread t's payloads never repeat another thread's (the seeds differ).
    pool.emplace_back([&, t] {
      results[t] = CallLoop(l.ctx(), svc, size, count,
                            seed + uint64_t{t} * (uint64_t{1} << 32), timeout,
                            flags, us[t]);
    });
  }
  for (std::thread& t : pool) t.join();
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  getrusage(RUSAGE_SELF, &after);
  lite_rpc_close(l.ctx(), svc);
  for (const absl::Status& r : results) LITE_RETURN_IF_ERROR(r);
  std::vector<uint64_t> all;
  for (const auto& v : us) all.insert(all.end(), v.begin(), v.end());
  const uint64_t total = all.size();
  auto usec = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_usec);
  };
  const double cpu = usec(after.ru_utime) + usec(after.ru_stime) -
                     usec(before.ru_utime) - usec(before.ru_stime);
  const double switches = static_cast<double>(
      after.ru_nvcsw + after.ru_nivcsw - before.ru_nvcsw - before.ru_nivcsw);
  PrintRecord(a,
              {{"calls", total},
               {"size", size},
               {"threads", threads},
               {"server_node", peer.node_id},
               {"p50_us", Percentile(all, 0.5)},
               {"p99_us", Percentile(all, 0.99)},
               {"calls_per_s", absl::StrFormat("%.0f", total / secs)},
               {"cpu_us_per_call", absl::StrFormat("%.1f", cpu / total)},
               {"switches_per_call", absl::StrFormat("%.2f", switches / total)},
               {"replies_checked", total}});
  return absl::OkStatus();
}

absl::Status Send(const cli::Args& a, const Opener& open) {
  const std::string& name = a.positional()[0];
  LITE_ASSIGN_OR_RETURN(uint32_t size, SizeFlag(a, "size", 64));
  LITE_ASSIGN_OR_RETURN(uint64_t count,
                        cli::Number("--count", a.Get("count", "1"), 1u << 24));
  if (count == 0) return cli::UsageError("--count: at least 1");
  LITE_ASSIGN_OR_RETURN(lite::Lite l, open(a.Get("device", LITE_DEVICE_PATH)));
  lite_service_t svc = 0;
  int err = lite_rpc_open(l.ctx(), name.c_str(), &svc, nullptr);
  if (err) return RpcError(err, "rpc_open");
  std::vector<uint8_t> msg(size);
  const auto start = std::chrono::steady_clock::now();
  for (uint64_t i = 0; i < count; ++i) {
    pattern::FillPattern(i, 0, absl::MakeSpan(msg));
    err = lite_send(l.ctx(), svc, msg.data(), msg.size(), 0);
    if (err) return RpcError(err, "send");
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  lite_rpc_close(l.ctx(), svc);
  PrintRecord(a, {{"messages", count},
                  {"size", size},
                  {"messages_per_s", absl::StrFormat("%.0f", count / secs)}});
  return absl::OkStatus();
}

const cli::Flag kSize{.name = "size",
                      .value = "BYTES",
                      .help = "request bytes (default 64, at most 1M)"};
const cli::Flag kCount{
    .name = "count", .value = "N", .help = "how many (default 1)"};

}  // namespace

void AddRpcCommands(std::vector<cli::Command>& c, const Opener& open) {
  auto add = [&](cli::Command cmd,
                 absl::Status (*fn)(const cli::Args&, const Opener&)) {
    cmd.run = [fn, &open](const cli::Args& a) { return fn(a, open); };
    c.push_back(std::move(cmd));
  };
  add({.name = "rpc-serve",
       .usage = "rpc-serve NAME [--threads T] [--count N] [--mode 0711] "
                "[--max-request B] [--max-reply B] [--depth D] "
                "[--max-clients C] [--hold-ms MS]",
       .summary = "Serve an echo RPC service (each call's reply is its "
                  "request)",
       .details = "Prints 'serving=NAME service_id=.. port=..' once "
                  "registered, then answers calls in place (zero copy) and "
                  "releases messages on T threads until N requests were "
                  "served (default 0: until killed), then 'served=.. "
                  "messages=..'.",
       .flags = {{.name = "threads",
                  .value = "T",
                  .help = "serving threads, 1..64 (default 1)"},
                 {.name = "count",
                  .value = "N",
                  .help = "requests to serve before exiting (0: forever)"},
                 {.name = "mode",
                  .value = "OCTAL",
                  .help = "who may call it: x bits (default 0711)"},
                 {.name = "max-request",
                  .value = "BYTES",
                  .help = "largest request (default 4K)"},
                 {.name = "max-reply",
                  .value = "BYTES",
                  .help = "largest reply (default 4K)"},
                 {.name = "depth",
                  .value = "D",
                  .help = "requests one client node may queue (default 16)"},
                 {.name = "max-clients",
                  .value = "C",
                  .help = "client nodes (default 16)"},
                 {.name = "hold-ms",
                  .value = "MS",
                  .help = "wait this long before answering what one "
                          "receive took (a slow server; default 0)"}},
       .min_args = 1,
       .max_args = 1},
      Serve);
  add({.name = "rpc-call",
       .usage = "rpc-call NAME [--count N] [--threads T] [--size B] "
                "[--timeout-ms MS] [--nonblock]",
       .summary = "Call an echo service and check every reply",
       .details = "Each request is a test pattern (--pattern SEED + call "
                  "number); the reply must be the same bytes. Prints calls, "
                  "the server's node, and the p50 and p99 round trip in us.",
       .flags = {kCount,
                 kSize,
                 {.name = "timeout-ms",
                  .value = "MS",
                  .help = "per call (default 0: lite.ko's rpc_timeout_ms)"},
                 {.name = "pattern",
                  .value = "SEED",
                  .help = "first pattern seed (default 1)"},
                 {.name = "threads",
                  .value = "T",
                  .help = "calling threads, 1..256, each --count calls with "
                          "payloads of its own (default 1)"},
                 {.name = "nonblock",
                  .help = "no free credit (the node's ring at the server "
                          "is full): fail with EAGAIN instead of waiting"}},
       .min_args = 1,
       .max_args = 1},
      Call);
  add({.name = "rpc-send",
       .usage = "rpc-send NAME [--count N] [--size B]",
       .summary = "Send one-way messages to a service",
       .flags = {kCount, kSize},
       .min_args = 1,
       .max_args = 1},
      Send);
}

}  // namespace lite::liteop
