// One simulated liteagent for the scale benchmark: Join, then a Session on
// the callback API (no thread of its own) that heartbeats on a schedule or,
// in flood mode, as fast as acks return. Messages from the manager are only
// classified by their first byte (the ManagerMessage field tag), and of the
// JoinResponse only the scalar fields are read (not the member list), so
// that thousands of agents fit in one process next to the manager.
#ifndef LITE_CONTROLPLANE_BENCH_SIM_AGENT_H_
#define LITE_CONTROLPLANE_BENCH_SIM_AGENT_H_

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "lite/v1/manager.grpc.pb.h"

namespace lite::controlplane::bench {

// Totals over all agents, updated lock-free from gRPC's threads.
struct AgentTotals {
  std::atomic<int64_t> joined{0};  // First ack received.
  std::atomic<int64_t> join_failures{0};
  std::atomic<int64_t> acks{0};
  std::atomic<int64_t> events{0};
  std::atomic<int64_t> batches{
      0};  // EventBatch messages (events counted above).
  std::atomic<int64_t> requests{0};
  std::atomic<int64_t> sessions_done{0};
  std::atomic<int64_t> sessions_failed_early{0};  // Ended before shutdown.
};

class SimAgent final
    : public grpc::ClientBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  // batches: ask for EventBatch messages (Heartbeat.accept_event_batches).
  SimAgent(int index, lite::v1::ClusterManager::Stub* stub,
           grpc::GenericStub* generic, AgentTotals* totals, bool batches);

  // Calls Join and, when it answers, opens the session.
  void Start(absl::Time now);
  // Sends a heartbeat if one is due (scheduled mode). Called by the ticker.
  void Tick(absl::Time now);
  // Flood: keep `window` heartbeats unacknowledged at all times.
  void SetFlood(int window);
  // Stop heartbeating, keeping the stream open: the node "hangs".
  void Hang(absl::Time now);
  void Cancel();

  uint32_t node_id() const { return node_id_.load(); }
  uint64_t incarnation() const { return incarnation_.load(); }
  bool joined() const { return joined_.load(); }
  absl::Duration join_latency() const;
  absl::Time hung_at() const;
  absl::Time last_heartbeat_sent() const;
  const std::string& name() const { return name_; }

  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  void OnDone(const grpc::Status& status) override;

 private:
  void OnJoined(const grpc::Status& status);
  void SendLocked(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool WantSendLocked(absl::Time now) const ABSL_SHARED_LOCKS_REQUIRED(mu_);

  const int index_;
  const std::string name_;
  lite::v1::ClusterManager::Stub* const stub_;
  grpc::GenericStub* const generic_;
  AgentTotals* const totals_;
  const bool batches_;

  grpc::ClientContext join_context_;
  grpc::ByteBuffer join_request_;
  grpc::ByteBuffer join_response_;
  grpc::ClientContext session_context_;
  grpc::ByteBuffer in_;

  std::atomic<uint32_t> node_id_{0};
  std::atomic<uint64_t> incarnation_{0};
  std::atomic<bool> joined_{false};

  mutable absl::Mutex mu_;
  bool open_ ABSL_GUARDED_BY(mu_) = false;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool hung_ ABSL_GUARDED_BY(mu_) = false;
  bool done_ ABSL_GUARDED_BY(mu_) = false;
  int flood_window_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t sent_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t acked_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Duration interval_ ABSL_GUARDED_BY(mu_) = absl::Milliseconds(250);
  absl::Time next_heartbeat_ ABSL_GUARDED_BY(mu_);
  absl::Time started_ ABSL_GUARDED_BY(mu_);
  absl::Time joined_at_ ABSL_GUARDED_BY(mu_);
  absl::Time hung_at_ ABSL_GUARDED_BY(mu_);
  absl::Time last_sent_ ABSL_GUARDED_BY(mu_);
  grpc::ByteBuffer out_ ABSL_GUARDED_BY(mu_);
};

}  // namespace lite::controlplane::bench

#endif  // LITE_CONTROLPLANE_BENCH_SIM_AGENT_H_
