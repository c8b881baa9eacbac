// Revokes grants in lite.ko off the session thread, and acknowledges the
// revocations the manager waits for (the fenced free, GrantRevokeAck).
//
// LITE_CMD_GRANT_REVOKE answers only once no operation of the grant is in
// flight, up to lite.ko's bound (seconds), and ETIMEDOUT if it is still
// draining then. The session thread must go on applying events meanwhile,
// so GrantRevoked only marks the grant in the GrantGate (no install of it
// from then on) and queues it here; one thread makes the module calls, asks
// again after a timeout, and calls the ack sink once lite.ko answered 0 or
// ENOENT, or gave the grant back with an UNMAP upcall (Unmapped).
#ifndef LITE_AGENT_REVOKER_H_
#define LITE_AGENT_REVOKER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/counters.h"
#include "agent/grant_gate.h"
#include "agent/module.h"

namespace lite::agent {

struct RevokerOptions {
  // The wait before asking again after ETIMEDOUT (lite.ko itself already
  // waited its bound), and the first and largest waits after other errors.
  absl::Duration retry_after_timeout = absl::Milliseconds(100);
  absl::Duration retry_initial = absl::Milliseconds(100);
  absl::Duration retry_max = absl::Seconds(5);
};

class Revoker {
 public:
  // Called once per acknowledged revocation, from the revoker's thread or
  // the caller of Unmapped(), with no lock of the revoker held.
  using AckSink =
      std::function<void(uint64_t grant_id, uint64_t holder_incarnation)>;

  Revoker(RevokerOptions options, Module* module, GrantGate* gate,
          Counters* counters, AckSink ack);
  ~Revoker();
  Revoker(const Revoker&) = delete;
  Revoker& operator=(const Revoker&) = delete;

  void Start();
  // Joins the thread; waits for a module call in progress (bounded by
  // lite.ko's drain bound). Revocations still queued are dropped.
  void Stop();

  // Revokes the grant: marked in the gate at once, revoked in the module
  // by the revoker's thread. With `ack`, the sink is called once it has
  // drained. A grant already queued keeps one entry (ack if either asked).
  void Revoke(uint64_t grant_id, uint64_t holder_incarnation, bool ack);
  // LmrRemoved with revokes_grants: every grant of this node into the LMR
  // is revoked (and, with `ack`, acknowledged once drained), including a
  // MapLmr answer not installed yet (the gate refuses it and hands it here).
  void RevokeLmr(uint64_t lmr_id, bool ack);
  // lite.ko gave the grant back (its UNMAP upcall: drained and unmapped).
  // Completes a queued revocation; returns whether there was one.
  bool Unmapped(uint64_t grant_id);
  // Queued revocations, for tests and status.
  size_t Pending() const;

 private:
  struct Job {
    uint64_t holder_incarnation = 0;
    bool ack = false;
    int failures = 0;
    absl::Time next = absl::InfinitePast();
  };
  void Loop();
  // Removes the job and acks it if asked. Called without mu_.
  void Finish(uint64_t grant_id, const Job& job, const char* how);

  const RevokerOptions options_;
  Module* const module_;
  GrantGate* const gate_;
  Counters* const counters_;
  const AckSink ack_;

  mutable absl::Mutex mu_;
  std::map<uint64_t, Job> jobs_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace lite::agent

#endif  // LITE_AGENT_REVOKER_H_
