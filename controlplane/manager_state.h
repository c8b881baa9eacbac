// The cluster manager's state machine: membership, leases, the event order,
// the LMR registry, access checks and grants. It knows nothing of gRPC: every
// RPC of lite.v1.ClusterManager is one method here taking the request and
// returning the response or an absl::Status with the exact code, and time
// comes from an injectable Clock, so tests drive it directly with a fake
// clock. The gRPC layer (service.h) only moves messages.
//
// Every public method validates everything before changing anything: a call
// that returns an error has changed nothing.
//
// Thread-safe: one mutex serializes all calls. Work that must not run under
// it (waking session writers, finishing AllocLmr calls) is queued and run
// right after the mutex is released.
#ifndef LITE_CONTROLPLANE_MANAGER_STATE_H_
#define LITE_CONTROLPLANE_MANAGER_STATE_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "controlplane/clock.h"
#include "controlplane/event_bus.h"
#include "controlplane/fenced_free.h"
#include "controlplane/lmr_registry.h"
#include "controlplane/node_requests.h"
#include "controlplane/options.h"
#include "controlplane/outbox.h"
#include "controlplane/pair_secrets.h"
#include "controlplane/service_registry.h"
#include "controlplane/store.h"
#include "lite/v1/manager.pb.h"

namespace lite::controlplane {

// The node and incarnation a session was opened for.
struct SessionBinding {
  uint32_t node_id = 0;
  uint64_t incarnation = 0;
};

// What a successful OpenSession hands the gRPC layer.
struct OpenedSession {
  SessionBinding binding;
  std::shared_ptr<Outbox> outbox;
};

// Totals since the manager started, for tests, logs and the benchmark.
struct ManagerCounters {
  uint64_t joins = 0;
  uint64_t heartbeats = 0;
  uint64_t events = 0;
  uint64_t failures = 0;
  // The failures by cause (lease expiries are FAILURE_CAUSE_LEASE_EXPIRED),
  // and the Leaves.
  std::map<lite::v1::FailureCause, uint64_t> failures_by_cause;
  uint64_t leaves = 0;
  uint64_t grants_issued = 0;
  uint64_t grants_revoked = 0;
  uint64_t session_overflows = 0;
  // PeerFailureReports received; of them, ignored (the node was not alive
  // in that incarnation) and those that failed the node (at once or later).
  uint64_t peer_reports = 0;
  uint64_t peer_reports_ignored = 0;
  uint64_t peer_report_failures = 0;
  // SUSPECT: leases that ran out into it; of them, nodes that heartbeated
  // again (recovered) and that failed while suspect (by their peers' word,
  // unanswered probes, or --suspect_max_ms); ProbePeer requests sent.
  uint64_t suspicions = 0;
  uint64_t suspicions_recovered = 0;
  uint64_t suspect_failures = 0;
  uint64_t probes_sent = 0;
  size_t nodes_suspect = 0;
  // The fenced free (fenced_free.h): acknowledgements received, those
  // implied by a holder's end, those no release waited for; LMRs whose
  // memory the home released, of them quarantined (missing acks at the
  // fence timeout); release requests sent again; LmrLost reports acted on.
  uint64_t revoke_acks = 0;
  uint64_t revoke_acks_implied = 0;
  uint64_t revoke_acks_late = 0;
  uint64_t lmrs_released = 0;
  uint64_t lmrs_quarantined = 0;
  uint64_t release_retries = 0;
  uint64_t lmrs_lost = 0;
  size_t nodes_alive = 0;
  size_t sessions_open = 0;
  // LIVE LMRs; RELEASING ones apart.
  size_t lmrs = 0;
  size_t lmrs_releasing = 0;
  size_t grants = 0;
  size_t watchers = 0;
  // Entries in the index of departed node records (bounded by the records
  // departed now, review cp L9).
  size_t departed_index = 0;
};

// What litemgr's metrics endpoint reports (manager_metrics.h), read in one
// go under the state's lock so that the numbers agree with each other.
struct ManagerMetricsSnapshot {
  ManagerCounters counters;
  // Node records by state (counters.nodes_alive are ALIVE); of the alive
  // ones, those draining.
  size_t nodes_failed = 0;
  size_t nodes_left = 0;
  size_t nodes_draining = 0;
  // The sizes of the LIVE and the RELEASING LMRs.
  uint64_t lmr_bytes = 0;
  uint64_t lmr_bytes_releasing = 0;
  // RPC services registered.
  size_t services = 0;
  bool recovering = false;
  uint64_t last_event_sequence = 0;
  NodeRequests::Summary node_requests;
};

class ManagerState {
 public:
  using AllocDone =
      std::function<void(absl::StatusOr<lite::v1::AllocLmrResponse>)>;
  using BindDone =
      std::function<void(absl::StatusOr<lite::v1::BindServiceResponse>)>;

  // `clock` must outlive this object. A store that is Empty() starts the
  // recovery window (options.recovery_window), during which agents rebuild
  // the state of a restarted manager.
  ManagerState(ManagerOptions options, const Clock* clock,
               std::unique_ptr<Store> store);
  ~ManagerState();

  ManagerState(const ManagerState&) = delete;
  ManagerState& operator=(const ManagerState&) = delete;

  // ---- membership
  absl::StatusOr<lite::v1::JoinResponse> Join(
      const lite::v1::JoinRequest& request);
  // The same, answered as a serialized JoinResponse. Its member list is kept
  // pre-encoded, so a join costs a copy of it rather than re-encoding every
  // member: during a join storm of N nodes that is the difference between
  // O(N) and O(N^2) protobuf work in total.
  absl::StatusOr<std::string> JoinWire(const lite::v1::JoinRequest& request);
  absl::Status Leave(const lite::v1::LeaveRequest& request);

  // ---- sessions
  // The first message of a Session stream.
  absl::StatusOr<OpenedSession> OpenSession(const lite::v1::Heartbeat& first);
  // Every later message.
  absl::Status Heartbeat(const SessionBinding& binding,
                         const lite::v1::Heartbeat& heartbeat);
  absl::Status HandleResult(const SessionBinding& binding,
                            const lite::v1::NodeRequestResult& result);
  // The node's lite.ko found another node unreachable (manager_reports.cc).
  // Fails that node (FAILURE_CAUSE_PEER_REPORTED) if it has not heartbeated
  // for more than two heartbeat intervals, now or when that silence is
  // reached unless a heartbeat comes first; otherwise only records it. A
  // healthy node, which heartbeats, is never failed by reports. Errors:
  // INVALID_ARGUMENT malformed report; the session's own stale errors.
  absl::Status PeerFailure(const SessionBinding& binding,
                           const lite::v1::PeerFailureReport& report);
  // The fenced free (fenced_free.h). A holder drained a revoked grant
  // of a RELEASING LMR. Errors: INVALID_ARGUMENT the grant is not the
  // session's (node, incarnation), or is live; an ack nothing waits for is
  // ignored (OK).
  absl::Status GrantRevokeAck(const SessionBinding& binding,
                              const lite::v1::GrantRevokeAck& ack);
  // The home's lite.ko lost an LMR's device: removed as for a free, cause
  // DEVICE_REMOVED. Errors: INVALID_ARGUMENT malformed; PERMISSION_DENIED
  // the LMR is another node's. An LMR not live here is ignored (OK).
  absl::Status LmrLost(const SessionBinding& binding,
                       const lite::v1::LmrLost& report);
  // The stream ended (agent gone, broken connection, or the stream was
  // finished with an error). Fails the node if this incarnation is alive.
  void SessionEnded(const SessionBinding& binding, const absl::Status& why);

  // ---- LMRs and grants
  absl::StatusOr<lite::v1::RegisterLmrResponse> RegisterLmr(
      const lite::v1::RegisterLmrRequest& request);
  // Validation errors are returned at once (and `done` is not called).
  // Otherwise returns OK and calls `done` exactly once, later, with the
  // outcome: when the home answers, fails, or does not answer in time.
  absl::Status AllocLmr(const lite::v1::AllocLmrRequest& request,
                        AllocDone done);
  absl::StatusOr<lite::v1::MapLmrResponse> MapLmr(
      const lite::v1::MapLmrRequest& request);
  absl::StatusOr<lite::v1::UnmapLmrResponse> UnmapLmr(
      const lite::v1::UnmapLmrRequest& request);
  absl::StatusOr<lite::v1::FreeLmrResponse> FreeLmr(
      const lite::v1::FreeLmrRequest& request);
  absl::StatusOr<lite::v1::RestoreGrantResponse> RestoreGrant(
      const lite::v1::RestoreGrantRequest& request);

  // ---- RPC services (manager_services.cc; proto comments are the spec)
  absl::StatusOr<lite::v1::RegisterServiceResponse> RegisterService(
      const lite::v1::RegisterServiceRequest& request);
  absl::StatusOr<lite::v1::UnregisterServiceResponse> UnregisterService(
      const lite::v1::UnregisterServiceRequest& request);
  absl::StatusOr<lite::v1::OpenServiceResponse> OpenService(
      const lite::v1::OpenServiceRequest& request);
  absl::StatusOr<lite::v1::ListServicesResponse> ListServices(
      const lite::v1::ListServicesRequest& request) const;
  // Like AllocLmr (service_binds.cc): validation errors at once, else OK and
  // `done` exactly once with the server node's ring or why there is none.
  absl::Status BindService(const lite::v1::BindServiceRequest& request,
                           BindDone done);

  // ---- listings and operators
  absl::StatusOr<lite::v1::ListNodesResponse> ListNodes(
      const lite::v1::ListNodesRequest& request) const;
  absl::StatusOr<lite::v1::ListLmrsResponse> ListLmrs(
      const lite::v1::ListLmrsRequest& request) const;
  absl::StatusOr<lite::v1::ListGrantsResponse> ListGrants(
      const lite::v1::ListGrantsRequest& request) const;
  absl::StatusOr<lite::v1::DrainNodeResponse> DrainNode(
      const lite::v1::DrainNodeRequest& request);
  absl::StatusOr<lite::v1::EvictNodeResponse> EvictNode(
      const lite::v1::EvictNodeRequest& request);
  // The node's certificate lost its role (manager_revocation.cc): fails
  // the live incarnation of `node_name`, if any, as an eviction (cause
  // EVICTED, `reason`), which closes its session with that status. False
  // when no incarnation of the name is alive.
  bool RevokeNode(const std::string& node_name, const std::string& reason);
  // A watcher gets every event with a sequence greater than since_revision
  // (from the history of the last options.watch_history events), then every
  // new one, with no gap and no duplicate; 0 means from now on. CloseWatch
  // when it goes away. Errors: OUT_OF_RANGE since_revision is older than the
  // history (list again); INVALID_ARGUMENT it is past the last event;
  // RESOURCE_EXHAUSTED options.max_watchers are open. After Shutdown, an
  // outbox closed with UNAVAILABLE.
  absl::StatusOr<std::shared_ptr<Outbox>> OpenWatch(uint64_t since_revision);
  // From now on; an error comes as an outbox closed with it. For callers
  // not yet passing WatchRequest.since_revision.
  std::shared_ptr<Outbox> OpenWatch();
  void CloseWatch(const std::shared_ptr<Outbox>& watch);

  // ---- time
  // Does everything that is due at the clock's now (expire leases, abandon
  // unanswered requests, end recovery) and returns when it next has
  // something to do (absl::InfiniteFuture() when nothing is pending).
  absl::Time Tick();
  // Called (outside the lock) when a deadline earlier than the last one Tick
  // returned appears, so a timer sleeping until then can re-arm.
  void SetDeadlineListener(std::function<void()> listener);

  // Closes every session and watcher with UNAVAILABLE and finishes pending
  // AllocLmr calls with UNAVAILABLE. Announces nothing: the nodes did not
  // fail, the manager went away. Later calls fail with UNAVAILABLE.
  void Shutdown();

  ManagerCounters counters() const;
  // For the metrics endpoint. Walks no store records (the store keeps the
  // counts), only the live nodes and the LMRs being released, so a scrape
  // holds the lock briefly whatever the number of LMRs and grants.
  ManagerMetricsSnapshot MetricsSnapshot() const;
  bool recovering() const;
  // options.lease: a Session's first heartbeat must come within it.
  absl::Duration lease() const { return options_.lease; }
  uint64_t last_event_sequence() const;
  // The node id the manager gave `node_name` (in any state), or nullopt if
  // it has no record. Read-only, for the gRPC layer's check that a node
  // certificate acts only for its own node.
  std::optional<uint32_t> NodeIdOf(const std::string& node_name) const;

  // The node certificate a gRPC handler acts for, set around its calls into
  // the state machine (service.cc): every check of a NodeCaller, and
  // OpenSession, then also requires, under the same lock as the change it
  // guards, that the node id is that name's; PERMISSION_DENIED otherwise
  // (review cp L4: a check under a lock of its own would pass for an id
  // that changes hands before the change). The state machine's calls run on
  // the handler's thread, so the name is kept per thread. Not set (tests,
  // --insecure): nothing more is checked.
  class ActingAs {
   public:
    explicit ActingAs(const std::string& certificate_name);
    ~ActingAs();
    ActingAs(const ActingAs&) = delete;
    ActingAs& operator=(const ActingAs&) = delete;

   private:
    const std::string* const previous_;
  };
  // Derives the pair secrets handed to the nodes (JoinWire, and the
  // sessions through SessionRecipient). Thread-safe; lives as long as this.
  const PairSecrets& pair_secrets() const { return *pair_secrets_; }

 private:
  // A live incarnation of a node.
  struct Live {
    lite::v1::Member member;  // As stored, state ALIVE.
    absl::Time lease_expiry;
    absl::Time last_renewal;
    // Its outbox is events_'s.
    bool session_opened = false;  // One session per incarnation, ever.
    bool session_open = false;
    // A standing PeerFailureReport on it: when its silence will exceed two
    // heartbeat intervals (InfiniteFuture: none), and who said what.
    absl::Time report_deadline = absl::InfiniteFuture();
    std::string report;
    // SUSPECT (manager_suspect.cc): since when (InfiniteFuture: not
    // suspect), and the probe round in flight, whose end is lease_expiry:
    // its requests, and its answers so far by kind.
    absl::Time suspect_since = absl::InfiniteFuture();
    std::vector<uint64_t> round_probes;
    int round_alive = 0;  // OK: the node's lite.ko acknowledged.
    int round_down = 0;   // UNAVAILABLE: it did not.
    int round_other = 0;  // Could not tell (no such peer, an error).
    // The last peer that found it alive, for the log and the bound's reason.
    std::string alive_by;
    absl::Time alive_at = absl::InfinitePast();
  };
  // A ProbePeer in flight: about which incarnation, asked of whom.
  // (The prober and its incarnation are the request's, in node_requests_.)
  struct Probe {
    uint32_t target = 0;
    uint64_t target_incarnation = 0;
  };
  // Holds mu_; on release, handles overflowed sessions, then (unlocked)
  // wakes session writers and runs deferred callbacks.
  class Locked {
   public:
    explicit Locked(ManagerState* state);
    ~Locked();
    Locked(const Locked&) = delete;
    Locked& operator=(const Locked&) = delete;

   private:
    ManagerState* const state_;
  };

  // JoinWire's part under the lock: admits the node and returns the
  // response without its pair secrets, and in `peers` the other members it
  // lists, whose secrets JoinWire derives after the lock is released.
  // `token_verified`: request.restore carries the identity token of its
  // name, id and incarnation (checked by JoinWire with the cluster key).
  absl::StatusOr<std::string> AdmitLocked(const lite::v1::JoinRequest& request,
                                          const std::string& address,
                                          bool token_verified,
                                          std::vector<PairEnd>* peers,
                                          PairEnd* self)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Why request.restore may not be adopted for a name this manager does not
  // know (empty: it may): review cp H1.
  std::string RestoreRefusalLocked(const lite::v1::JoinRequest& request,
                                   bool token_verified) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // PERMISSION_DENIED when the calling thread acts for a certificate
  // (ActingAs) that is not `node`'s name.
  static absl::Status CheckActingForLocked(const lite::v1::Member& node);
  // ALREADY_EXISTS when another name's record (live or departed) holds
  // `address` (review cp L8).
  absl::Status CheckAddressLocked(const std::string& address,
                                  std::optional<uint32_t> known_id) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);

  // Validation of the calling node; INVALID_ARGUMENT checks are separate so
  // that every field error is reported before any state error.
  static absl::Status ValidateCallerFields(const lite::v1::NodeCaller& caller);
  absl::StatusOr<Live*> CheckCallerLocked(const lite::v1::NodeCaller& caller)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status CheckRunningLocked() const ABSL_SHARED_LOCKS_REQUIRED(mu_);
  absl::StatusOr<lite::v1::Member> FindNodeLocked(
      uint32_t node_id, const std::string& node_name) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // UNAVAILABLE "manager recovering, retry" while recovering_: new LMRs
  // (not re-registrations) wait for the recovery window's end.
  absl::Status CheckNotRecoveringLocked() const ABSL_SHARED_LOCKS_REQUIRED(mu_);

  // Fails the nodes whose sessions overflowed (events_), until none is
  // left: failing one emits events that may overflow another.
  void HandleOverflowsLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Ends a live incarnation: announce, close its session, revoke its LMRs
  // and every grant into them, drop its own grants, fail its pending
  // allocations. `left` distinguishes Leave from failure.
  void EndIncarnationLocked(uint32_t node_id, bool left,
                            lite::v1::FailureCause cause,
                            const std::string& reason)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // The incarnation of `node_id` whose session is open, if any (where the
  // fenced free can send a release).
  std::optional<uint64_t> OpenSessionOfLocked(uint32_t node_id) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // OK if `binding` is its node's live incarnation, else the stale error.
  absl::Status CheckBindingLocked(const SessionBinding& binding)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void EndRecoveryLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  ManagerCounters CountersLocked() const ABSL_SHARED_LOCKS_REQUIRED(mu_);

  // ---- limits (manager_limits.cc)
  // A node record became FAILED/LEFT (`departed`) or ALIVE again; past
  // max_departed_records the oldest departed records are forgotten.
  void NoteNodeRecordLocked(uint32_t node_id, bool departed, absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Forgets the oldest departed record that nothing refers to; false if none.
  bool ForgetOldestDepartedLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A Join for `name` now: RESOURCE_EXHAUSTED past max_joins_per_minute,
  // else counted.
  absl::Status CountJoinLocked(const std::string& name, absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Room for a new node record (forgetting a departed one if needed).
  absl::Status CheckNodeRoomLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  void RenewLeaseLocked(Live& live, absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // ---- SUSPECT (manager_suspect.cc)
  // `node_id`'s lease (or its probe round) ran out at `now`: suspect it and
  // ask its peers, keep it suspect for another round, or fail it.
  void LeaseExpiredLocked(uint32_t node_id, absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Sends a round of ProbePeer about `live` and sets the round's end; false
  // if no peer can be asked.
  bool StartProbeRoundLocked(Live& live, absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The failure reason of a SUSPECT node no asked peer reached: its
  // silence and the round's answers by kind.
  std::string NoPeerReachedItLocked(const Live& live, absl::Time now) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // A heartbeat from a SUSPECT node: MemberRecovered.
  void RecoverLocked(Live& live, absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Forgets the probe round about `live` (it recovered, failed or left).
  void DropProbesLocked(Live& live) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The answer to a ProbePeer (HandleResult).
  absl::Status ProbeResultLocked(const SessionBinding& binding,
                                 const lite::v1::NodeRequestResult& result)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // UNAVAILABLE if `node` is SUSPECT: `what` needs its agent.
  absl::Status CheckNotSuspectLocked(const Live& node,
                                     const std::string& what) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // How long a probe round lasts: a lease, and at least the request
  // timeout (a probe of a node that is gone takes lite.ko up to
  // 2 * peer_timeout_ms + 1 s).
  absl::Duration ProbeRound() const;
  // Two heartbeat intervals: the silence that makes a report believed.
  absl::Duration ReportSilence() const;
  // Drops a standing report on `live` (it heartbeated).
  void DropReportLocked(Live& live) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Fails the nodes whose reports' deadlines are due (from Tick).
  void FailReportedLocked(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void AddDeadlineLocked(absl::Time deadline)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  lite::v1::Member DecoratedLocked(const lite::v1::Member& member,
                                   absl::Time now) const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  std::vector<lite::v1::Member> AliveMembersLocked() const
      ABSL_SHARED_LOCKS_REQUIRED(mu_);
  // The live members, encoded as JoinResponse.members entries.
  const std::string& MembersWireLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void AppendMemberWireLocked(const lite::v1::Member& member)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const ManagerOptions options_;
  const Clock* const clock_;
  // Set in the constructor, immutable after: no lock needed.
  std::unique_ptr<PairSecrets> pair_secrets_;

  mutable absl::Mutex mu_;
  std::unique_ptr<Store> store_ ABSL_GUARDED_BY(mu_);
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;

  // Live incarnations by node id (ordered: member lists are by id).
  std::map<uint32_t, Live> live_ ABSL_GUARDED_BY(mu_);
  // Lease expiry -> node, to find the next expiry without scanning.
  std::set<std::pair<absl::Time, uint32_t>> expiries_ ABSL_GUARDED_BY(mu_);
  // Live::report_deadline -> node, for the standing reports.
  std::set<std::pair<absl::Time, uint32_t>> report_deadlines_
      ABSL_GUARDED_BY(mu_);
  // Canonical RDMA address -> live node using it.
  absl::flat_hash_map<std::string, uint32_t> address_owner_
      ABSL_GUARDED_BY(mu_);
  // Events and sessions: every live incarnation's outbox and the watchers'.
  EventBus events_ ABSL_GUARDED_BY(mu_);
  // JoinResponse.members for live_, encoded; rebuilt when a member leaves or
  // changes, appended to when one joins.
  std::string members_wire_ ABSL_GUARDED_BY(mu_);
  bool members_wire_stale_ ABSL_GUARDED_BY(mu_) = false;
  // The (id, incarnation) of each member in members_wire_, in the same
  // order and kept with it.
  std::vector<PairEnd> live_ends_ ABSL_GUARDED_BY(mu_);

  // Every request sent to a node and not yet ended, of all four kinds:
  // ids, recipients, deadlines, and the metrics of how they ended.
  NodeRequests node_requests_ ABSL_GUARDED_BY(mu_);

  // Departed (FAILED/LEFT) node records: when each departed, and in that
  // order (entries whose time no longer matches departed_at_ are stale).
  absl::flat_hash_map<uint32_t, absl::Time> departed_at_ ABSL_GUARDED_BY(mu_);
  std::set<std::pair<absl::Time, uint32_t>> departed_ ABSL_GUARDED_BY(mu_);
  // Join times in the last minute, per node name.
  absl::flat_hash_map<std::string, std::deque<absl::Time>> joins_
      ABSL_GUARDED_BY(mu_);

  // The fenced free: RELEASING LMRs until no node can reach their memory.
  FencedFree fenced_free_ ABSL_GUARDED_BY(mu_);
  // The LMR registry and grants (their records are store_'s) and the
  // allocations in flight.
  LmrRegistry lmrs_ ABSL_GUARDED_BY(mu_);
  // RPC services and the binds in flight (it shares this lock, events_,
  // node_requests_ and after_unlock_).
  ServiceRegistry services_ ABSL_GUARDED_BY(mu_);

  // ProbePeer requests in flight (SUSPECT), by request id.
  absl::flat_hash_map<uint64_t, Probe> probes_ ABSL_GUARDED_BY(mu_);

  bool recovering_ ABSL_GUARDED_BY(mu_) = false;
  absl::Time recovery_end_ ABSL_GUARDED_BY(mu_);

  // What Tick last returned; a new earlier deadline wakes the timer.
  absl::Time next_tick_ ABSL_GUARDED_BY(mu_) = absl::InfiniteFuture();
  std::function<void()> deadline_listener_ ABSL_GUARDED_BY(mu_);

  // Filled under the lock, run by Locked's destructor after unlocking.
  std::vector<std::function<void()>> after_unlock_ ABSL_GUARDED_BY(mu_);

  ManagerCounters counters_ ABSL_GUARDED_BY(mu_);
};

}  // namespace lite::controlplane

#endif  // LITE_CONTROLPLANE_MANAGER_STATE_H_
