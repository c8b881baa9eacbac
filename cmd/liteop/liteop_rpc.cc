// liteop's RPC commands: a server that echoes each call or answers it with
// a shell command's output (rpc-serve), a client that calls it and checks
// every reply, synchronously or with asynchronous calls in flight, or sends
// one request and prints the reply (rpc-call), and one-way messages
// (rpc-send). For scripts, the VM tests and the demo: the server prints
// one "serving ..." line once it is registered, then serves until it has
// answered --count requests or is killed.
#include <signal.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_format.h"
#include "api/lite.hpp"
#include "cmd/liteop/liteop_filter.h"
#include "cmd/liteop/liteop_internal.h"
#include "common/cli/cli.h"
#include "common/pattern/pattern.h"
#include "common/status/macros.h"

namespace lite::liteop {
namespace {

// The RPC errors, with what libLITE or the manager said.
absl::Status RpcError(int err, absl::string_view call) {
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

// How a service answers: echo (each call's own bytes, in place) or with
// what a shell command prints for the request (--exec).
struct Answering {
  std::string exec;  // empty: echo
  uint32_t max_reply = 0;
  uint32_t hold_ms = 0;
};

// The reply to call `r`: its bytes in the mapping, or `out` filled with the
// command's output. A failing command answers with nothing (the wire has
// no status of the application's) and says why on stderr.
absl::Span<const uint8_t> AnswerFor(const Answering& how,
                                    const lite_service_info& info,
                                    const lite_rpc_request& r,
                                    std::string& out) {
  const auto* data = static_cast<const uint8_t*>(lite_rpc_data(&info, &r));
  if (how.exec.empty()) return {data, r.length};
  bool truncated = false;
  absl::StatusOr<std::string> got =
      RunFilter(how.exec, {data, r.length}, how.max_reply, &truncated);
  out = got.ok() ? *std::move(got) : std::string();
  if (!got.ok())
    std::fprintf(stderr, "liteop: %s\n", got.status().ToString().c_str());
  if (truncated) {
    std::fprintf(stderr, "liteop: the reply was cut to max_reply (%u bytes)\n",
                 how.max_reply);
  }
  return {reinterpret_cast<const uint8_t*>(out.data()), out.size()};
}

// Serves on one thread: every call is answered (echo: in place, no copy),
// every message released; reply and next receive are one system call.
// Stops when `left` runs out.
absl::Status ServeLoop(lite_ctx* ctx, lite_service_t svc,
                       const lite_service_info& info, const Answering& how,
                       std::atomic<int64_t>& left,
                       std::atomic<uint64_t>& served,
                       std::atomic<uint64_t>& messages) {
  const uint32_t hold_ms = how.hold_ms;
  lite_rpc_request reqs[16];
  std::string outputs[16];  // --exec: replies, alive until sent
  uint64_t pending = 0;     // the call answered with the next receive
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
        continue;
      }
      absl::Span<const uint8_t> answer = AnswerFor(how, info, r, outputs[i]);
      if (i + 1 == count) {
        pending = r.id;
        pending_data = answer.data();
        pending_len = answer.size();
      } else {
        err =
            how.exec.empty()
                ? lite_rpc_reply_in_place(ctx, svc, &info, r.id, answer.data(),
                                          answer.size())
                : lite_rpc_reply(ctx, svc, r.id, answer.data(), answer.size());
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
  Answering how;
  how.exec = a.Get("exec", "");
  how.max_reply = opts.max_reply;
  how.hold_ms = hold_ms;
  if (a.Has("exec") && how.exec.empty())
    return cli::UsageError("--exec: a shell command");
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
                  {"threads", threads},
                  {"answers", how.exec.empty() ? "echo" : "exec"}});
  a.out().flush();
  std::atomic<int64_t> left(count == 0 ? INT64_MAX
                                       : static_cast<int64_t>(count));
  std::atomic<uint64_t> served(0), messages(0);
  std::vector<absl::Status> results(threads);
  std::vector<std::thread> pool;
  for (uint32_t t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      results[t] = ServeLoop(l.ctx(), svc, info, how, left, served, messages);
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
    if (err) {
      // How long the failing call took says whether failure came at once.
      return RpcError(
          err,
          absl::StrFormat(
              "rpc_call (call %u, after %d ms)", i,
              std::chrono::duration_cast<std::chrono::milliseconds>(end - start)
                  .count()));
    }
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

// One calling thread with up to `window` asynchronous calls in flight:
// submits until the window (or the node's credits) is full, then collects
// what ended in one wait. A call's time is from its submit to its
// collection.
absl::Status AsyncCallLoop(lite_ctx* ctx, lite_service_t svc, uint32_t size,
                           uint64_t count, uint64_t seed, uint32_t timeout,
                           uint32_t window, std::vector<uint64_t>& us) {
  using Clock = std::chrono::steady_clock;
  struct Slot {
    std::vector<uint8_t> req, reply;
    uint64_t call_no = 0;
    Clock::time_point start;
  };
  std::vector<Slot> slots(window);
  for (Slot& s : slots) {
    s.req.resize(size);
    s.reply.resize(size + 64);
  }
  std::vector<lite_rpc_result> pending;
  std::vector<uint32_t> pending_slot, free_slots;
  for (uint32_t i = window; i > 0; --i) free_slots.push_back(i - 1);
  us.reserve(count);
  uint64_t next = 0;
  while (next < count || !pending.empty()) {
    while (next < count && !free_slots.empty()) {
      Slot& s = slots[free_slots.back()];
      pattern::FillPattern(seed + next, 0, absl::MakeSpan(s.req));
      uint64_t call = 0;
      s.start = Clock::now();
      // Out of credits with calls of ours in flight: collect them first.
      int err = lite_rpc_call_async(
          ctx, svc, s.req.data(), size, s.reply.data(), s.reply.size(), timeout,
          pending.empty() ? 0 : LITE_RPC_NONBLOCK, &call);
      if (err == -EAGAIN && !pending.empty()) break;
      if (err) return RpcError(err, "rpc_call_async");
      s.call_no = next++;
      pending.push_back({call, 0, 0});
      pending_slot.push_back(free_slots.back());
      free_slots.pop_back();
    }
    uint32_t done = 0;
    int err = lite_rpc_wait(ctx, pending.data(),
                            static_cast<uint32_t>(pending.size()), UINT32_MAX,
                            0, &done);
    if (err) return RpcError(err, "rpc_wait");
    const auto now = Clock::now();
    size_t kept = 0;
    for (size_t i = 0; i < pending.size(); ++i) {
      if (pending[i].error == -EINPROGRESS) {
        pending[kept] = pending[i];
        pending_slot[kept++] = pending_slot[i];
        continue;
      }
      Slot& s = slots[pending_slot[i]];
      if (pending[i].error) return RpcError(pending[i].error, "rpc_wait");
      if (pending[i].reply_len != size ||
          !std::equal(s.req.begin(), s.req.end(), s.reply.begin())) {
        return absl::DataLossError(absl::StrFormat(
            "call %u: the reply (%u bytes) is not the request echoed (%u)",
            s.call_no, pending[i].reply_len, size));
      }
      us.push_back(
          std::chrono::duration_cast<std::chrono::microseconds>(now - s.start)
              .count());
      free_slots.push_back(pending_slot[i]);
    }
    pending.resize(kept);
    pending_slot.resize(kept);
  }
  return absl::OkStatus();
}

// rpc-call --data: one call with TEXT, its reply printed (C-escaped, so
// any bytes make one readable line).
absl::Status CallWithData(const cli::Args& a, const Opener& open,
                          const std::string& name, uint32_t timeout) {
  const std::string data = a.Get("data");
  if (data.size() > LITE_RPC_MSG_MAX)
    return cli::UsageError("--data: at most 1M");
  LITE_ASSIGN_OR_RETURN(lite::Lite l, open(a.Get("device", LITE_DEVICE_PATH)));
  lite_service_t svc = 0;
  lite_service_peer peer = {};
  int err = lite_rpc_open(l.ctx(), name.c_str(), &svc, &peer);
  if (err) return RpcError(err, "rpc_open");
  std::string reply(peer.max_reply, '\0');
  size_t got = 0;
  const auto start = std::chrono::steady_clock::now();
  err = lite_rpc_call(l.ctx(), svc, data.data(), data.size(), reply.data(),
                      reply.size(), &got, timeout);
  const auto end = std::chrono::steady_clock::now();
  lite_rpc_close(l.ctx(), svc);
  if (err) return RpcError(err, "rpc_call");
  reply.resize(got);
  PrintRecord(
      a,
      {{"server_node", peer.node_id},
       {"reply_bytes", got},
       {"us", std::chrono::duration_cast<std::chrono::microseconds>(end - start)
                  .count()},
       {"reply", absl::CHexEscape(reply)}});
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
  LITE_ASSIGN_OR_RETURN(uint32_t window,
                        U32Flag(a, "async", 0, LITE_RPC_WAIT_MAX));
  if (count == 0) return cli::UsageError("--count: at least 1");
  if (threads == 0) return cli::UsageError("--threads: at least 1");
  if (a.Has("async") && window == 0)
    return cli::UsageError("--async: 1..64 calls in flight");
  if (window != 0 && a.Has("nonblock"))
    return cli::UsageError(
        "--async collects its own calls to free credits; "
        "--nonblock is for synchronous calls");
  if (a.Has("data")) return CallWithData(a, open, name, timeout);
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
      const uint64_t thread_seed = seed + uint64_t{t} * (uint64_t{1} << 32);
      results[t] = window != 0
                       ? AsyncCallLoop(l.ctx(), svc, size, count, thread_seed,
                                       timeout, window, us[t])
                       : CallLoop(l.ctx(), svc, size, count, thread_seed,
                                  timeout, flags, us[t]);
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
               {"in_flight", std::max(window, 1u)},
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
                "[--max-clients C] [--hold-ms MS] [--exec COMMAND]",
       .summary = "Serve an RPC service: echo each call, or answer it with "
                  "a command's output",
       .details = "Prints 'serving=NAME service_id=.. port=..' once "
                  "registered, then answers calls (echo: with their own "
                  "bytes, in place, zero copy; --exec: with what "
                  "'/bin/sh -c COMMAND' prints given the request on its "
                  "stdin, at most max-reply bytes) and releases messages on "
                  "T threads until N requests were served (default 0: until "
                  "killed), then 'served=.. messages=..'.",
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
                 {.name = "exec",
                  .value = "COMMAND",
                  .help = "answer each call with this shell command's "
                          "output for the request (default: echo)"},
                 {.name = "hold-ms",
                  .value = "MS",
                  .help = "wait this long before answering what one "
                          "receive took (a slow server; default 0)"}},
       .min_args = 1,
       .max_args = 1},
      Serve);
  add({.name = "rpc-call",
       .usage = "rpc-call NAME [--count N] [--threads T] [--size B] "
                "[--timeout-ms MS] [--nonblock | --async W] | "
                "rpc-call NAME --data TEXT",
       .summary = "Call a service: check an echo service's replies, or "
                  "send one request and print its reply",
       .details = "Each request is a test pattern (--pattern SEED + call "
                  "number); the reply must be the same bytes. Prints calls, "
                  "the server's node, and the p50 and p99 round trip in us. "
                  "With --data, one call with TEXT as its request; its reply "
                  "is printed as text (reply=...).",
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
                          "is full): fail with EAGAIN instead of waiting"},
                 {.name = "async",
                  .value = "W",
                  .help = "asynchronous calls, up to W (1..64) in flight "
                          "per thread, collected in batches"},
                 {.name = "data",
                  .value = "TEXT",
                  .help = "one call with these bytes; print the reply"}},
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
