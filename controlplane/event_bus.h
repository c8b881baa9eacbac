// The manager's part for events and sessions: where its messages go. Each
// live incarnation has one outbox, made when it joins (events queue there
// until its agent opens the session stream) and closed when it ends; each
// watcher (WatchEvents) has one too. An event gets the cluster's next
// sequence number and goes to every session and watcher, and into a
// bounded history from which a watcher may resume (OpenWatch).
//
// An outbox that falls session_queue_limit messages behind is not waited
// for: a watcher's is closed here; a session's is handed back to the
// caller (TakeOverflowedSessions), which fails that node. Readers are woken
// only after the caller's lock is released (TakeToNotify).
//
// Not thread-safe: ManagerState calls it under its one lock.
#ifndef LITE_CONTROLPLANE_EVENT_BUS_H_
#define LITE_CONTROLPLANE_EVENT_BUS_H_

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "controlplane/clock.h"
#include "controlplane/options.h"
#include "controlplane/outbox.h"
#include "controlplane/store.h"
#include "lite/v1/manager.pb.h"

namespace lite::controlplane {

class EventBus {
 public:
  // `store` keeps the event sequence (it survives a manager restart on a
  // persistent store); `clock` stamps events. Both outlive this.
  EventBus(const ManagerOptions& options, const Clock* clock, Store* store);

  // ---- sessions
  // A new live incarnation of `node_id`: its outbox, which the session
  // stream will read. Replaces none: the previous incarnation's was closed.
  std::shared_ptr<Outbox> AddSession(uint32_t node_id);
  // The session asked for RecoveryComplete events without their member
  // list (Heartbeat.accept_compact_recovery_complete).
  void SetCompact(uint32_t node_id, bool compact);
  // Queues `message` for one node (a request, an ack). Ignored if it has no
  // outbox.
  void SendTo(uint32_t node_id, lite::v1::ManagerMessage message);
  // The incarnation ended: its outbox is closed with `why` (with `drain`, its
  // reader gets what is queued first) and forgotten.
  void EndSession(uint32_t node_id, absl::Status why, bool drain);
  std::shared_ptr<Outbox> OutboxOf(uint32_t node_id) const;

  // ---- events
  // Stamps `event` (sequence, time) and queues it on every session and
  // watcher and on `extra` if given. Sessions that chose compact get
  // `compact` instead when given (same sequence and time).
  void Emit(lite::v1::Event event,
            const std::shared_ptr<Outbox>& extra = nullptr,
            const lite::v1::Event* compact = nullptr);
  uint64_t events_emitted() const { return events_emitted_; }

  // ---- watches (manager.proto WatchEvents; errors as documented on
  // ManagerState::OpenWatch)
  absl::StatusOr<std::shared_ptr<Outbox>> OpenWatch(uint64_t since_revision);
  void CloseWatch(const std::shared_ptr<Outbox>& watch);
  size_t watchers() const { return watchers_.size(); }

  // Closes every outbox with `why` (dropping what is queued): the manager
  // is going away.
  void CloseAll(const absl::Status& why);

  // ---- after a change
  // Nodes whose session outbox overflowed since the last call, each once;
  // the caller ends their sessions (EndSession). Watchers that overflowed
  // are closed RESOURCE_EXHAUSTED and dropped here.
  std::vector<uint32_t> TakeOverflowedSessions();
  // Outboxes whose readers need waking; call NotifyReader on each without
  // holding the caller's lock.
  std::vector<std::shared_ptr<Outbox>> TakeToNotify();

 private:
  struct Session {
    std::shared_ptr<Outbox> outbox;
    bool compact = false;
  };
  void Push(const std::shared_ptr<Outbox>& outbox, const OutMessagePtr& message,
            uint32_t node_id);

  const ManagerOptions& options_;
  const Clock* const clock_;
  Store* const store_;
  // By node id: events go out in member order.
  std::map<uint32_t, Session> sessions_;
  absl::flat_hash_set<std::shared_ptr<Outbox>> watchers_;
  // The last options_.watch_history events as watchers got them, oldest
  // first.
  std::deque<OutMessagePtr> history_;
  uint64_t events_emitted_ = 0;
  // (outbox, node id; 0 for a watcher) that overflowed; outboxes to wake.
  std::vector<std::pair<std::shared_ptr<Outbox>, uint32_t>> overflowed_;
  std::vector<std::shared_ptr<Outbox>> to_notify_;
};

}  // namespace lite::controlplane

#endif  // LITE_CONTROLPLANE_EVENT_BUS_H_
