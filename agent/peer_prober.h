// PeerProber: the manager's probe_peer requests (issue #36's SUSPECT state),
// run on lite.ko off the thread that reads the session.
//
// A probe of a node that is gone takes lite.ko's whole bound (2 *
// peer_timeout_ms + 1 s, 3 s by default), longer than the session may go
// without reading (a manager that waits too long for a heartbeat ack, or an
// agent whose ack timeout passes while its reader is stuck, ends it; issue
// #32). So the session thread hands each probe to one of a few worker
// threads and goes on reading; the answer comes back through a callback.
// At most max_in_flight probes run at once: the manager asks a node about
// at most a few suspects at a time, and each probe holds a netlink request
// and a send credit of one of lite.ko's connections; beyond that a probe is
// refused at once (RESOURCE_EXHAUSTED) rather than queued behind probes that
// may each take seconds.
#ifndef LITE_AGENT_PEER_PROBER_H_
#define LITE_AGENT_PEER_PROBER_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "agent/module.h"
#include "lite/v1/manager.pb.h"

namespace lite::agent {

struct PeerProberOptions {
  // Probes running at once (also the number of worker threads).
  int max_in_flight = 4;
};

class PeerProber {
 public:
  // Called once per accepted probe with the module's answer, on a worker
  // thread, with no lock of the prober held.
  using Done =
      std::function<void(const absl::StatusOr<lite::v1::ProbedPeer>& answer)>;

  PeerProber(PeerProberOptions options, Module* module);
  ~PeerProber();
  PeerProber(const PeerProber&) = delete;
  PeerProber& operator=(const PeerProber&) = delete;

  // Starts the worker threads.
  void Start();
  // Refuses new probes and joins the workers once every accepted probe was
  // answered (each bounded by the module's bound; the fake's held probes
  // wait for Close()). Idempotent.
  void Stop();

  // Runs module->ProbePeer(node_id, incarnation) on a worker and calls
  // `done` with its answer. OK: accepted. RESOURCE_EXHAUSTED at once (done
  // is never called) when max_in_flight probes are accepted and not
  // answered yet; UNAVAILABLE when not started or stopping.
  absl::Status Submit(uint32_t node_id, uint64_t incarnation, Done done);
  // Accepted probes not answered yet, for tests and status.
  int InFlight() const;

 private:
  struct Job {
    uint32_t node_id = 0;
    uint64_t incarnation = 0;
    Done done;
  };
  void Loop();

  const PeerProberOptions options_;
  Module* const module_;

  mutable absl::Mutex mu_;
  bool running_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  // Accepted, not yet taken by a worker.
  std::deque<Job> queue_ ABSL_GUARDED_BY(mu_);
  // Accepted, not yet answered (queued or running).
  int in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::thread> workers_;
};

}  // namespace lite::agent

#endif  // LITE_AGENT_PEER_PROBER_H_
