// Scale benchmark for litemgr (not a test): N simulated agents in this
// process against one litemgr started as a child process on loopback.
//
// Phases, in order:
//   join       all N agents Join and open their session at once; time until
//              every one has its first heartbeat ack, and each one's latency.
//   settle     wait until the membership events stop arriving, then read the
//              manager's resident memory (per node = growth / N).
//   heartbeat  every agent keeps --flood_window heartbeats unacknowledged for
//              --phase_seconds; acks per second = heartbeats handled.
//   map        --map_concurrency MapLmr calls in flight for --phase_seconds
//              against --lmrs registered LMRs; grants per second, latency.
//   failure    --failures agents stop heartbeating (streams stay open), one
//              every --failure_gap_ms; a Watch stream times each MemberFailed.
//              Delay from the hang, and from the agent's last heartbeat.
// Then litemgr is stopped with SIGTERM by its PID.
//
//   bazel run -c opt //controlplane/bench:scale_bench -- --nodes=1000
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "controlplane/bench/manager_process.h"
#include "controlplane/bench/sim_agent.h"
#include "lite/v1/manager.grpc.pb.h"
#include "lite/v1/operator.grpc.pb.h"

ABSL_FLAG(int, nodes, 100, "Simulated agents.");
ABSL_FLAG(std::string, litemgr, "",
          "Path to litemgr; default: the one in this binary's runfiles.");
ABSL_FLAG(int, channels, 0,
          "gRPC connections the agents are spread over; 0 = one per agent, "
          "as real agents have.");
ABSL_FLAG(int64_t, lease_ms, 1000, "The manager's --lease_ms.");
ABSL_FLAG(int64_t, recovery_window_ms, 5000,
          "The manager's --recovery_window_ms (its default: a fresh manager "
          "is recovering, and holds leases, while the agents join). The "
          "failure phase starts after it.");
ABSL_FLAG(double, phase_seconds, 5, "Length of the heartbeat and map phases.");
ABSL_FLAG(int, flood_window, 4,
          "Heartbeats each flooding agent keeps unacknowledged in the "
          "heartbeat phase.");
ABSL_FLAG(int, flood_agents, 500,
          "Agents that flood in the heartbeat phase (spread over all of them; "
          "the rest keep heartbeating on schedule). Bounds the heartbeats in "
          "flight, so that the phase measures capacity instead of queueing "
          "the manager past everyone's lease.");
ABSL_FLAG(int, map_concurrency, 64, "MapLmr calls in flight in the map phase.");
ABSL_FLAG(int, lmrs, 100, "LMRs registered for the map phase.");
ABSL_FLAG(int, failures, 0,
          "Agents made to hang in the failure phase; 0 = min(100, max(10, "
          "N/10)).");
ABSL_FLAG(int, failure_gap_ms, 0,
          "Time between two hangs; 0 = max(20, N/25) ms, so that every "
          "failure's fan-out to N sessions is measured, not a mass failure.");
ABSL_FLAG(int64_t, join_timeout_s, 300, "Give up if joining takes longer.");
ABSL_FLAG(
    bool, event_batches, true,
    "Agents accept EventBatch messages (Heartbeat.accept_event_batches).");
ABSL_FLAG(int, join_concurrency, 0,
          "Agents joining at the same time (Join sent, first ack not yet "
          "received); 0 = all N at once.");
ABSL_FLAG(std::string, manager_log, "/tmp/scale_bench_litemgr.log",
          "Where litemgr's stderr goes.");
ABSL_FLAG(std::string, manager_log_level, "info", "litemgr's --log_level.");

namespace lite::controlplane::bench {
namespace {

struct Percentiles {
  double p50_ms = 0;
  double p99_ms = 0;
  double max_ms = 0;
};

Percentiles Summarize(std::vector<absl::Duration> samples) {
  Percentiles out;
  if (samples.empty()) return out;
  std::sort(samples.begin(), samples.end());
  auto at = [&](double q) {
    const size_t i =
        std::min(samples.size() - 1,
                 static_cast<size_t>(q * (samples.size() - 1) + 0.5));
    return absl::ToDoubleMilliseconds(samples[i]);
  };
  out.p50_ms = at(0.50);
  out.p99_ms = at(0.99);
  out.max_ms = absl::ToDoubleMilliseconds(samples.back());
  return out;
}

// Sends due heartbeats for every agent, every 10 ms.
class Ticker {
 public:
  explicit Ticker(std::vector<std::unique_ptr<SimAgent>>* agents)
      : agents_(agents), thread_([this] { Run(); }) {}
  ~Ticker() {
    stop_.store(true);
    thread_.join();
  }

 private:
  void Run() {
    while (!stop_.load()) {
      const absl::Time now = absl::Now();
      for (auto& agent : *agents_) agent->Tick(now);
      absl::SleepFor(absl::Milliseconds(10));
    }
  }
  std::vector<std::unique_ptr<SimAgent>>* agents_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// Records when each node's MemberFailed arrives on a Watch stream.
class FailureWatch {
 public:
  explicit FailureWatch(lite::v1::ClusterOperator::Stub* stub) {
    reader_ = stub->Watch(&context_, lite::v1::WatchRequest());
    reader_->WaitForInitialMetadata();
    thread_ = std::thread([this] { Run(); });
  }
  ~FailureWatch() {
    context_.TryCancel();
    thread_.join();
  }
  std::optional<absl::Time> FailedAt(uint32_t node_id) {
    absl::MutexLock lock(&mu_);
    auto it = failed_at_.find(node_id);
    if (it == failed_at_.end()) return std::nullopt;
    return it->second;
  }
  // For each failure seen: from the event's time stamp (when the manager
  // announced it) to its arrival here.
  std::vector<absl::Duration> delivery() {
    absl::MutexLock lock(&mu_);
    return delivery_;
  }

 private:
  void Run() {
    lite::v1::Event event;
    while (reader_->Read(&event)) {
      if (!event.has_member_failed()) continue;
      const absl::Time now = absl::Now();
      absl::MutexLock lock(&mu_);
      failed_at_.emplace(event.member_failed().node_id(), now);
      delivery_.push_back(now - absl::FromUnixMillis(event.time_unix_ms()));
    }
    reader_->Finish();
  }
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReader<lite::v1::Event>> reader_;
  absl::Mutex mu_;
  absl::flat_hash_map<uint32_t, absl::Time> failed_at_ ABSL_GUARDED_BY(mu_);
  std::vector<absl::Duration> delivery_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

// MapLmr calls, `concurrency` chains each issuing its next call when the
// previous one completes, until the deadline.
class MapLoad {
 public:
  MapLoad(std::vector<std::unique_ptr<lite::v1::ClusterManager::Stub>>* stubs,
          std::vector<std::unique_ptr<SimAgent>>* agents, int lmrs,
          absl::Time deadline)
      : stubs_(stubs), agents_(agents), lmrs_(lmrs), deadline_(deadline) {}

  void Run(int concurrency) {
    for (int i = 0; i < concurrency; ++i) Issue(i);
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(
        +[](int* running) { return *running == 0; }, &running_));
  }
  int64_t ok() const { return ok_.load(); }
  int64_t errors() const { return errors_.load(); }
  std::string first_error() {
    absl::MutexLock lock(&mu_);
    return first_error_;
  }
  std::vector<absl::Duration> latencies() {
    absl::MutexLock lock(&mu_);
    return latencies_;
  }

 private:
  struct Call {
    grpc::ClientContext context;
    lite::v1::MapLmrRequest request;
    lite::v1::MapLmrResponse response;
    absl::Time started;
  };

  void Issue(int chain) {
    const int64_t n = issued_.fetch_add(1);
    const SimAgent& holder = *(*agents_)[n % agents_->size()];
    auto* call = new Call;
    call->request.mutable_caller()->set_node_id(holder.node_id());
    call->request.mutable_caller()->set_incarnation(holder.incarnation());
    call->request.mutable_requester()->set_uid(2000);
    call->request.mutable_requester()->set_gid(2000);
    call->request.mutable_requester()->set_pid(
        static_cast<uint32_t>(n % 30000) + 1);
    call->request.set_name(absl::StrCat("bench-lmr-", n % lmrs_));
    call->request.mutable_access()->set_read(true);
    call->started = absl::Now();
    {
      absl::MutexLock lock(&mu_);
      ++running_;
    }
    auto& stub = (*stubs_)[chain % stubs_->size()];
    stub->async()->MapLmr(&call->context, &call->request, &call->response,
                          [this, call, chain](grpc::Status status) {
                            Done(call, chain, status);
                          });
  }

  void Done(Call* call, int chain, const grpc::Status& status) {
    const absl::Time now = absl::Now();
    const absl::Duration latency = now - call->started;
    delete call;
    bool again = now < deadline_;
    {
      absl::MutexLock lock(&mu_);
      --running_;
      if (status.ok()) {
        latencies_.push_back(latency);
      } else if (first_error_.empty()) {
        first_error_ =
            absl::StrCat(status.error_code(), ": ", status.error_message());
      }
    }
    (status.ok() ? ok_ : errors_).fetch_add(1);
    if (!status.ok()) again = false;
    if (again) Issue(chain);
  }

  std::vector<std::unique_ptr<lite::v1::ClusterManager::Stub>>* stubs_;
  std::vector<std::unique_ptr<SimAgent>>* agents_;
  const int lmrs_;
  const absl::Time deadline_;
  std::atomic<int64_t> issued_{0};
  std::atomic<int64_t> ok_{0};
  std::atomic<int64_t> errors_{0};
  absl::Mutex mu_;
  int running_ ABSL_GUARDED_BY(mu_) = 0;
  std::string first_error_ ABSL_GUARDED_BY(mu_);
  std::vector<absl::Duration> latencies_ ABSL_GUARDED_BY(mu_);
};

double Mib(int64_t bytes) { return bytes / (1024.0 * 1024.0); }

int Main(const char* argv0) {
  const int nodes = absl::GetFlag(FLAGS_nodes);
  if (nodes < 2) {
    std::fprintf(stderr, "scale_bench: --nodes must be at least 2\n");
    return 2;
  }
  std::string binary = absl::GetFlag(FLAGS_litemgr);
  if (binary.empty()) binary = FindLitemgr(argv0);
  if (binary.empty()) {
    std::fprintf(stderr,
                 "scale_bench: cannot find litemgr; pass --litemgr=PATH\n");
    return 2;
  }
  const int64_t lease_ms = absl::GetFlag(FLAGS_lease_ms);
  absl::StatusOr<ManagerProcess> manager = ManagerProcess::Start(
      binary,
      {absl::StrCat("--lease_ms=", lease_ms),
       absl::StrCat("--recovery_window_ms=",
                    absl::GetFlag(FLAGS_recovery_window_ms)),
       absl::StrCat("--log_level=", absl::GetFlag(FLAGS_manager_log_level)),
       absl::StrCat("--session_queue_limit=", std::max(16384, 4 * nodes))},
      absl::GetFlag(FLAGS_manager_log));
  if (!manager.ok()) {
    std::fprintf(stderr, "scale_bench: %s\n",
                 manager.status().ToString().c_str());
    return 1;
  }
  const absl::Time manager_started = absl::Now();
  absl::SleepFor(absl::Milliseconds(200));
  const int64_t rss_baseline = manager->ResidentBytes().value_or(0);

  // Connections: distinct channel arguments give distinct connections.
  const int channel_count = absl::GetFlag(FLAGS_channels) > 0
                                ? std::min(absl::GetFlag(FLAGS_channels), nodes)
                                : nodes;
  std::vector<std::shared_ptr<grpc::Channel>> channels;
  std::vector<std::unique_ptr<lite::v1::ClusterManager::Stub>> stubs;
  std::vector<std::unique_ptr<grpc::GenericStub>> generics;
  for (int i = 0; i < channel_count; ++i) {
    grpc::ChannelArguments args;
    args.SetInt("lite.bench.connection", i);
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    args.SetMaxReceiveMessageSize(64 << 20);
    channels.push_back(grpc::CreateCustomChannel(
        manager->address(), grpc::InsecureChannelCredentials(), args));
    stubs.push_back(lite::v1::ClusterManager::NewStub(channels.back()));
    generics.push_back(std::make_unique<grpc::GenericStub>(channels.back()));
  }

  // Connect first: joining is measured from connected agents (real agents
  // connect in parallel from their own machines). One health check per
  // connection, waiting for it to be ready.
  const absl::Time connect_start = absl::Now();
  {
    struct Probe {
      grpc::ClientContext context;
      grpc::ByteBuffer request;
      grpc::ByteBuffer response;
    };
    std::vector<std::unique_ptr<Probe>> probes;
    std::atomic<int> done{0};
    std::atomic<int> failed{0};
    for (auto& generic : generics) {
      auto probe = std::make_unique<Probe>();
      probe->context.set_wait_for_ready(true);
      probe->context.set_deadline(
          absl::ToChronoTime(absl::Now() + absl::Seconds(120)));
      grpc::Slice empty("");
      probe->request = grpc::ByteBuffer(&empty, 1);
      generic->UnaryCall(&probe->context, "/grpc.health.v1.Health/Check",
                         grpc::StubOptions(), &probe->request, &probe->response,
                         [&done, &failed](grpc::Status status) {
                           if (!status.ok()) failed.fetch_add(1);
                           done.fetch_add(1);
                         });
      probes.push_back(std::move(probe));
    }
    while (done.load() < static_cast<int>(probes.size())) {
      absl::SleepFor(absl::Milliseconds(5));
    }
    if (failed.load() > 0) {
      std::fprintf(stderr, "scale_bench: %d of %zu connections failed\n",
                   failed.load(), probes.size());
      manager->Stop();
      return 1;
    }
  }
  const absl::Duration connect_all = absl::Now() - connect_start;

  AgentTotals totals;
  std::vector<std::unique_ptr<SimAgent>> agents;
  agents.reserve(nodes);
  for (int i = 0; i < nodes; ++i) {
    agents.push_back(std::make_unique<SimAgent>(
        i, stubs[i % channel_count].get(), generics[i % channel_count].get(),
        &totals, absl::GetFlag(FLAGS_event_batches)));
  }
  std::printf(
      "scale_bench: N=%d agents, %d connections, lease %lld ms, "
      "litemgr pid %d on %s\n",
      nodes, channel_count, static_cast<long long>(lease_ms), manager->pid(),
      manager->address().c_str());
  std::fflush(stdout);

  // ---- join
  Ticker ticker(&agents);
  const absl::Time join_start = absl::Now();
  const int join_concurrency = absl::GetFlag(FLAGS_join_concurrency) > 0
                                   ? absl::GetFlag(FLAGS_join_concurrency)
                                   : nodes;
  const absl::Time join_deadline =
      join_start + absl::Seconds(absl::GetFlag(FLAGS_join_timeout_s));
  int started = 0;
  while (totals.joined.load() + totals.join_failures.load() < nodes &&
         totals.sessions_failed_early.load() == 0 &&
         absl::Now() < join_deadline) {
    while (started < nodes &&
           started - totals.joined.load() - totals.join_failures.load() <
               join_concurrency) {
      agents[started++]->Start(absl::Now());
    }
    absl::SleepFor(absl::Milliseconds(1));
  }
  const absl::Duration join_all = absl::Now() - join_start;
  if (totals.joined.load() < nodes) {
    std::fprintf(stderr,
                 "scale_bench: only %lld of %d agents joined in %.1f s (%lld "
                 "Join failures, %lld sessions ended by the manager); see "
                 "%s\n",
                 static_cast<long long>(totals.joined.load()), nodes,
                 absl::ToDoubleSeconds(join_all),
                 static_cast<long long>(totals.join_failures.load()),
                 static_cast<long long>(totals.sessions_failed_early.load()),
                 absl::GetFlag(FLAGS_manager_log).c_str());
    // RPCs are still in flight on gRPC's threads; do not run destructors.
    manager->Stop();
    std::fflush(nullptr);
    std::_Exit(1);
  }
  std::vector<absl::Duration> join_latencies;
  for (auto& agent : agents) join_latencies.push_back(agent->join_latency());
  const Percentiles join = Summarize(join_latencies);

  // ---- settle: every agent hears about every later join and, with a
  // recovery window, the RecoveryComplete that ends it (which lists every
  // member to every agent: N^2 members in one burst).
  const bool recovery = absl::GetFlag(FLAGS_recovery_window_ms) > 0;
  const int64_t events_expected =
      static_cast<int64_t>(nodes) * (nodes - 1) / 2 + (recovery ? nodes : 0);
  const absl::Time settle_start = absl::Now();
  while (totals.events.load() < events_expected &&
         absl::Now() <
             settle_start + absl::Seconds(120) +
                 absl::Milliseconds(absl::GetFlag(FLAGS_recovery_window_ms))) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  const absl::Duration settle = absl::Now() - settle_start;
  const int64_t membership_events = totals.events.load();
  const int64_t membership_batches = totals.batches.load();
  absl::SleepFor(absl::Milliseconds(500));
  const int64_t rss_joined = manager->ResidentBytes().value_or(0);

  // ---- heartbeat flood
  const absl::Duration phase =
      absl::Seconds(absl::GetFlag(FLAGS_phase_seconds));
  const int window = std::max(1, absl::GetFlag(FLAGS_flood_window));
  const int flooders = std::clamp(absl::GetFlag(FLAGS_flood_agents), 1, nodes);
  for (int i = 0; i < flooders; ++i) {
    agents[static_cast<int64_t>(i) * nodes / flooders]->SetFlood(window);
  }
  absl::SleepFor(absl::Milliseconds(300));  // Ramp up.
  const int64_t acks_before = totals.acks.load();
  const absl::Time hb_start = absl::Now();
  absl::SleepFor(phase);
  const double hb_per_s = (totals.acks.load() - acks_before) /
                          absl::ToDoubleSeconds(absl::Now() - hb_start);
  for (auto& agent : agents) agent->SetFlood(0);
  absl::SleepFor(absl::Milliseconds(500));  // Drain in-flight acks.

  // ---- map grants
  const int lmrs = std::max(1, absl::GetFlag(FLAGS_lmrs));
  for (int i = 0; i < lmrs; ++i) {
    grpc::ClientContext context;
    lite::v1::RegisterLmrRequest request;
    // All on agent 0, which never fails: the failure phase then measures
    // detection, not the revocation of every grant into the LMRs.
    request.mutable_caller()->set_node_id(agents[0]->node_id());
    request.mutable_caller()->set_incarnation(agents[0]->incarnation());
    request.mutable_owner()->set_uid(1000);
    request.mutable_owner()->set_gid(1000);
    request.mutable_owner()->set_pid(1);
    request.set_name(absl::StrCat("bench-lmr-", i));
    request.set_size_bytes(1 << 20);
    request.set_mode(0644);
    auto* chunk = request.add_chunks();
    chunk->set_address(uint64_t{1} << 30);
    chunk->set_length_bytes(1 << 20);
    lite::v1::RegisterLmrResponse response;
    grpc::Status status = stubs[0]->RegisterLmr(&context, request, &response);
    if (!status.ok()) {
      std::fprintf(stderr, "scale_bench: RegisterLmr: %s\n",
                   status.error_message().c_str());
      manager->Stop();
      std::fflush(nullptr);
      std::_Exit(1);  // RPCs are in flight; do not run destructors.
    }
  }
  absl::SleepFor(absl::Milliseconds(500));  // LmrAdded events fan out.
  MapLoad maps(&stubs, &agents, lmrs, absl::Now() + phase);
  const absl::Time map_start = absl::Now();
  maps.Run(std::max(1, absl::GetFlag(FLAGS_map_concurrency)));
  const double maps_per_s =
      maps.ok() / absl::ToDoubleSeconds(absl::Now() - map_start);
  const Percentiles map_latency = Summarize(maps.latencies());
  if (maps.errors() > 0) {
    std::fprintf(stderr, "scale_bench: %lld MapLmr errors, first: %s\n",
                 static_cast<long long>(maps.errors()),
                 maps.first_error().c_str());
  }
  const int64_t rss_after_maps = manager->ResidentBytes().value_or(0);

  // ---- failure detection, once recovery (and its lease hold) is over.
  const absl::Time recovery_over =
      manager_started +
      absl::Milliseconds(absl::GetFlag(FLAGS_recovery_window_ms) +
                         2 * lease_ms);
  if (absl::Now() < recovery_over) absl::SleepFor(recovery_over - absl::Now());
  int failures = absl::GetFlag(FLAGS_failures);
  if (failures <= 0) failures = std::min(100, std::max(10, nodes / 10));
  failures = std::min(failures, nodes - 1);
  std::unique_ptr<lite::v1::ClusterOperator::Stub> operator_stub =
      lite::v1::ClusterOperator::NewStub(channels[0]);
  FailureWatch watch(operator_stub.get());
  std::vector<SimAgent*> victims;
  for (int i = 0; i < failures; ++i) {
    // Spread over the population, never agent 0 (it holds LMR 0).
    victims.push_back(
        agents[1 + (static_cast<int64_t>(i) * (nodes - 1)) / failures].get());
  }
  const absl::Duration gap =
      absl::Milliseconds(absl::GetFlag(FLAGS_failure_gap_ms) > 0
                             ? absl::GetFlag(FLAGS_failure_gap_ms)
                             : std::max(20, nodes / 25));
  for (SimAgent* victim : victims) {
    victim->Hang(absl::Now());
    absl::SleepFor(gap);
  }
  const absl::Time failure_deadline =
      absl::Now() + absl::Milliseconds(5 * lease_ms) + absl::Seconds(5);
  std::vector<absl::Duration> from_hang;
  std::vector<absl::Duration> from_last_heartbeat;
  for (SimAgent* victim : victims) {
    std::optional<absl::Time> failed_at;
    while (!(failed_at = watch.FailedAt(victim->node_id())).has_value() &&
           absl::Now() < failure_deadline) {
      absl::SleepFor(absl::Milliseconds(5));
    }
    if (!failed_at.has_value()) continue;
    from_hang.push_back(*failed_at - victim->hung_at());
    from_last_heartbeat.push_back(*failed_at - victim->last_heartbeat_sent());
  }
  const Percentiles detect_hang = Summarize(from_hang);
  const Percentiles detect_last = Summarize(from_last_heartbeat);
  const Percentiles delivery = Summarize(watch.delivery());
  const int64_t early_ends = totals.sessions_failed_early.load();

  // ---- stop: the manager first, so that tearing down the agents does not
  // make it announce N failures to N sessions.
  const int exit_status = manager->Stop();
  for (auto& agent : agents) agent->Cancel();
  const absl::Time done_deadline = absl::Now() + absl::Seconds(30);
  while (totals.sessions_done.load() < nodes && absl::Now() < done_deadline) {
    absl::SleepFor(absl::Milliseconds(10));
  }

  std::printf("\n");
  std::printf("%-34s %s\n", "metric", "value");
  std::printf("%-34s %.3f s\n", "connect: all connections ready",
              absl::ToDoubleSeconds(connect_all));
  std::printf("%-34s %.3f s (%d joining at a time)\n",
              "join: all agents joined", absl::ToDoubleSeconds(join_all),
              join_concurrency);
  std::printf("%-34s p50 %.1f ms, p99 %.1f ms, max %.1f ms\n",
              "join: per-agent latency", join.p50_ms, join.p99_ms, join.max_ms);
  std::printf(
      "%-34s %lld of %lld, all in %.3f s after the last join "
      "(%lld batches)\n",
      recovery ? "join: events (+RecoveryComplete)" : "join: membership events",
      static_cast<long long>(membership_events),
      static_cast<long long>(events_expected), absl::ToDoubleSeconds(settle),
      static_cast<long long>(membership_batches));
  std::printf(
      "%-34s %.0f /s (%d agents x %d in flight, the rest on "
      "schedule, %.0f s)\n",
      "heartbeats handled", hb_per_s, flooders, window,
      absl::ToDoubleSeconds(phase));
  std::printf("%-34s %.0f /s (%d in flight, %d LMRs, %lld errors)\n",
              "map grants", maps_per_s, absl::GetFlag(FLAGS_map_concurrency),
              lmrs, static_cast<long long>(maps.errors()));
  std::printf("%-34s p50 %.2f ms, p99 %.2f ms\n", "map latency",
              map_latency.p50_ms, map_latency.p99_ms);
  std::printf(
      "%-34s %zu of %d (one every %lld ms); p50 %.0f ms, p99 %.0f ms, max "
      "%.0f ms\n",
      "failure detection (from hang)", from_hang.size(), failures,
      static_cast<long long>(absl::ToInt64Milliseconds(gap)),
      detect_hang.p50_ms, detect_hang.p99_ms, detect_hang.max_ms);
  std::printf("%-34s p50 %.0f ms, p99 %.0f ms (lease %lld ms)\n",
              "  (from last heartbeat sent)", detect_last.p50_ms,
              detect_last.p99_ms, static_cast<long long>(lease_ms));
  std::printf("%-34s p50 %.0f ms, p99 %.0f ms (ms clock resolution)\n",
              "  (announcement to watcher)", delivery.p50_ms, delivery.p99_ms);
  std::printf(
      "%-34s %.1f MiB idle, %.1f MiB with %d nodes, %.1f MiB after "
      "%lld grants\n",
      "manager RSS", Mib(rss_baseline), Mib(rss_joined), nodes,
      Mib(rss_after_maps), static_cast<long long>(maps.ok()));
  std::printf("%-34s %.1f KiB\n", "manager RSS per node",
              (rss_joined - rss_baseline) / 1024.0 / nodes);
  std::printf("%-34s %lld (should be 0)\n", "sessions ended early",
              static_cast<long long>(early_ends));
  std::printf("%-34s %s\n", "litemgr exit",
              WIFEXITED(exit_status)
                  ? absl::StrCat("status ", WEXITSTATUS(exit_status)).c_str()
                  : "killed");
  std::printf(
      "RESULT nodes=%d connect_s=%.3f join_s=%.3f join_p50_ms=%.1f "
      "join_p99_ms=%.1f "
      "hb_per_s=%.0f maps_per_s=%.0f map_p50_ms=%.2f map_p99_ms=%.2f "
      "detect_p50_ms=%.0f detect_p99_ms=%.0f rss_per_node_kib=%.1f\n",
      nodes, absl::ToDoubleSeconds(connect_all),
      absl::ToDoubleSeconds(join_all), join.p50_ms, join.p99_ms, hb_per_s,
      maps_per_s, map_latency.p50_ms, map_latency.p99_ms, detect_hang.p50_ms,
      detect_hang.p99_ms, (rss_joined - rss_baseline) / 1024.0 / nodes);
  return (from_hang.size() == victims.size() && maps.errors() == 0 &&
          early_ends == 0)
             ? 0
             : 1;
}

}  // namespace
}  // namespace lite::controlplane::bench

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Scale benchmark for litemgr: N simulated agents in one process "
      "against a litemgr child process on loopback.\n"
      "Usage: scale_bench --nodes=1000 [--channels=16] [--phase_seconds=5]");
  absl::ParseCommandLine(argc, argv);
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  signal(SIGPIPE, SIG_IGN);
  return lite::controlplane::bench::Main(argv[0]);
}
