// The bounded queue between the state machine and one session or watcher.
//
// The state machine pushes every event into every outbox under its lock, so
// all sessions see one order; the gRPC layer drains each outbox at the speed
// of its connection. A session that falls `limit` messages behind does not
// slow anyone else down: Push reports the overflow and the state machine
// closes that session.
#ifndef LITE_CONTROLPLANE_OUTBOX_H_
#define LITE_CONTROLPLANE_OUTBOX_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "controlplane/pair_secrets.h"
#include "lite/v1/manager.pb.h"

namespace lite::controlplane {

// One message bound for sessions. An event goes to every session, so it is
// serialized at most once, however many sessions send it.
class OutMessage {
 public:
  explicit OutMessage(lite::v1::ManagerMessage message)
      : message_(std::move(message)) {}
  const lite::v1::ManagerMessage& message() const { return message_; }
  // The ManagerMessage on the wire (for Session streams).
  const std::string& SessionWire() const;
  // The bare Event on the wire (for Watch streams); empty unless an event.
  const std::string& WatchWire() const;
  // The event as one element of EventBatch.events on the wire (field tag,
  // length, Event); empty unless an event.
  const std::string& BatchEntryWire() const;

 private:
  const lite::v1::ManagerMessage message_;
  mutable std::once_flag session_once_;
  mutable std::string session_wire_;
  mutable std::once_flag watch_once_;
  mutable std::string watch_wire_;
  mutable std::once_flag batch_once_;
  mutable std::string batch_wire_;
};

using OutMessagePtr = std::shared_ptr<const OutMessage>;

// The wire form of a ManagerMessage carrying an EventBatch of `events` (each
// one an event), built from their cached encodings without re-serializing.
std::string EventBatchWire(const std::vector<OutMessagePtr>& events);

// Who a session belongs to. What its node is sent is completed, as it is
// written, with the pair secret of the node and each other member that a
// MemberJoined in it announces (ManagerMessage.peer_secrets). Secrets are
// made per session when written, never queued, never shared: an event is
// encoded once for every session, a secret only for the one that may see
// it, and the state machine's lock is not held while it is derived.
struct SessionRecipient {
  PairEnd self;
  const PairSecrets* secrets = nullptr;  // Not owned; outlives the session.
};

// Appends one PeerSecret {peer, secret} as field `field_number` of the
// message being encoded in `out` (ManagerMessage.peer_secrets,
// JoinResponse.peer_secrets): what the protobuf encoder would write, without
// building a message for it.
void AppendPeerSecretField(std::string* out, int field_number, PairEnd peer,
                           const std::string& secret);

// The ManagerMessage.peer_secrets entries that `messages` (as one write to
// `recipient`'s session) call for, encoded: appended to the write's
// ManagerMessage, they are parsed as part of it. Empty when no message
// announces another member.
std::string PeerSecretsWire(const std::vector<OutMessagePtr>& messages,
                            const SessionRecipient& recipient);

// Told when an idle outbox gets something to hand out.
class OutboxListener {
 public:
  virtual ~OutboxListener() = default;
  virtual void OnOutboxReady() = 0;
};

class Outbox {
 public:
  explicit Outbox(int64_t limit) : limit_(limit) {}

  enum class PushResult {
    // Queued (or ignored because the outbox is closed).
    kQueued,
    // Queued into an empty outbox whose reader may be idle: call
    // NotifyReader(), typically after releasing the caller's own locks.
    kQueuedNotify,
    // Dropped: the outbox already holds `limit` messages.
    kFull,
  };
  // Appends a message. Never blocks on the reader and never calls it.
  PushResult Push(OutMessagePtr message);

  // Tells the reader there is something to pop.
  void NotifyReader();

  // No more messages. With drain, the reader gets what is queued and then
  // `status`; without, queued messages are dropped. The first Close wins.
  void Close(absl::Status status, bool drain);

  // Reader side. Exactly one of the fields is set: the next message, or the
  // close status once closed (and drained), or neither when empty and open.
  struct Next {
    OutMessagePtr message;
    std::optional<absl::Status> closed;
  };
  Next Pop();

  // Like Pop, but if the first message is an event, also takes the events
  // right behind it (not past any other kind of message), up to max_count
  // events and as long as their batch encodings stay within max_bytes (the
  // first one is taken whatever its size). Sets `closed` as Pop does when
  // there is nothing to take.
  struct Batch {
    std::vector<OutMessagePtr> messages;
    std::optional<absl::Status> closed;
  };
  Batch PopEvents(size_t max_count, size_t max_bytes);

  // Registers the reader to notify. OnOutboxReady is called (without the
  // outbox's lock) from NotifyReader and Close.
  void SetListener(std::shared_ptr<OutboxListener> listener);

  bool closed() const;
  size_t size() const;
  // Highest number of queued messages seen.
  size_t high_water() const;

 private:
  const int64_t limit_;
  mutable absl::Mutex mu_;
  std::deque<OutMessagePtr> queue_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status close_status_ ABSL_GUARDED_BY(mu_);
  size_t high_water_ ABSL_GUARDED_BY(mu_) = 0;
  std::shared_ptr<OutboxListener> listener_ ABSL_GUARDED_BY(mu_);
};

}  // namespace lite::controlplane

#endif  // LITE_CONTROLPLANE_OUTBOX_H_
