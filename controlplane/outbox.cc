#include "controlplane/outbox.h"

#include <algorithm>
#include <utility>

#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/wire_format_lite.h"

namespace lite::controlplane {

const std::string& OutMessage::SessionWire() const {
  std::call_once(session_once_,
                 [this] { message_.SerializeToString(&session_wire_); });
  return session_wire_;
}

const std::string& OutMessage::WatchWire() const {
  std::call_once(watch_once_, [this] {
    if (message_.has_event()) message_.event().SerializeToString(&watch_wire_);
  });
  return watch_wire_;
}

Outbox::PushResult Outbox::Push(OutMessagePtr message) {
  absl::MutexLock lock(&mu_);
  if (closed_) return PushResult::kQueued;
  if (static_cast<int64_t>(queue_.size()) >= limit_) return PushResult::kFull;
  // Only an empty queue can have an idle reader; a busy one pops the rest
  // when its current write completes.
  const bool notify = queue_.empty() && listener_ != nullptr;
  queue_.push_back(std::move(message));
  high_water_ = std::max(high_water_, queue_.size());
  return notify ? PushResult::kQueuedNotify : PushResult::kQueued;
}

void Outbox::NotifyReader() {
  std::shared_ptr<OutboxListener> listener;
  {
    absl::MutexLock lock(&mu_);
    listener = listener_;
  }
  if (listener != nullptr) listener->OnOutboxReady();
}

void Outbox::Close(absl::Status status, bool drain) {
  std::shared_ptr<OutboxListener> listener;
  {
    absl::MutexLock lock(&mu_);
    if (closed_) return;
    closed_ = true;
    close_status_ = std::move(status);
    if (!drain) queue_.clear();
    listener = listener_;
  }
  if (listener != nullptr) listener->OnOutboxReady();
}

Outbox::Next Outbox::Pop() {
  absl::MutexLock lock(&mu_);
  Next next;
  if (!queue_.empty()) {
    next.message = std::move(queue_.front());
    queue_.pop_front();
  } else if (closed_) {
    next.closed = close_status_;
  }
  return next;
}

void Outbox::SetListener(std::shared_ptr<OutboxListener> listener) {
  absl::MutexLock lock(&mu_);
  listener_ = std::move(listener);
}

const std::string& OutMessage::BatchEntryWire() const {
  std::call_once(batch_once_, [this] {
    if (!message_.has_event()) return;
    google::protobuf::io::StringOutputStream stream(&batch_wire_);
    google::protobuf::io::CodedOutputStream out(&stream);
    const std::string& event = WatchWire();
    out.WriteTag(lite::v1::EventBatch::kEventsFieldNumber << 3 | 2);
    out.WriteVarint32(static_cast<uint32_t>(event.size()));
    out.WriteRaw(event.data(), static_cast<int>(event.size()));
  });
  return batch_wire_;
}

std::string EventBatchWire(const std::vector<OutMessagePtr>& events) {
  size_t payload = 0;
  for (const OutMessagePtr& event : events) {
    payload += event->BatchEntryWire().size();
  }
  std::string wire;
  wire.reserve(payload + 16);
  {
    google::protobuf::io::StringOutputStream stream(&wire);
    google::protobuf::io::CodedOutputStream out(&stream);
    out.WriteTag(lite::v1::ManagerMessage::kEventBatchFieldNumber << 3 | 2);
    out.WriteVarint32(static_cast<uint32_t>(payload));
  }
  for (const OutMessagePtr& event : events) {
    wire.append(event->BatchEntryWire());
  }
  return wire;
}

void AppendPeerSecretField(std::string* out, int field_number, PairEnd peer,
                           const std::string& secret) {
  using google::protobuf::io::CodedOutputStream;
  using WireFormatLite = google::protobuf::internal::WireFormatLite;
  const uint32_t secret_size = static_cast<uint32_t>(secret.size());
  const uint32_t body = static_cast<uint32_t>(
      1 + CodedOutputStream::VarintSize32(peer.node_id) + 1 +
      CodedOutputStream::VarintSize64(peer.incarnation) + 1 +
      CodedOutputStream::VarintSize32(secret_size) + secret_size);
  // Everything but the secret's bytes, on the stack: a StringOutputStream
  // over `out` would zero its whole spare capacity on every call.
  uint8_t head[40];
  uint8_t* p = head;
  p = CodedOutputStream::WriteTagToArray(
      WireFormatLite::MakeTag(field_number,
                              WireFormatLite::WIRETYPE_LENGTH_DELIMITED),
      p);
  p = CodedOutputStream::WriteVarint32ToArray(body, p);
  p = CodedOutputStream::WriteTagToArray(
      WireFormatLite::MakeTag(lite::v1::PeerSecret::kNodeIdFieldNumber,
                              WireFormatLite::WIRETYPE_VARINT),
      p);
  p = CodedOutputStream::WriteVarint32ToArray(peer.node_id, p);
  p = CodedOutputStream::WriteTagToArray(
      WireFormatLite::MakeTag(lite::v1::PeerSecret::kIncarnationFieldNumber,
                              WireFormatLite::WIRETYPE_VARINT),
      p);
  p = CodedOutputStream::WriteVarint64ToArray(peer.incarnation, p);
  p = CodedOutputStream::WriteTagToArray(
      WireFormatLite::MakeTag(lite::v1::PeerSecret::kSecretFieldNumber,
                              WireFormatLite::WIRETYPE_LENGTH_DELIMITED),
      p);
  p = CodedOutputStream::WriteVarint32ToArray(secret_size, p);
  out->append(reinterpret_cast<const char*>(head), p - head);
  out->append(secret);
}

std::string PeerSecretsWire(const std::vector<OutMessagePtr>& messages,
                            const SessionRecipient& recipient) {
  std::string wire;
  for (const OutMessagePtr& message : messages) {
    if (!message->message().has_event() ||
        !message->message().event().has_member_joined()) {
      continue;
    }
    const lite::v1::Member& member =
        message->message().event().member_joined().member();
    // A node is not sent its own MemberJoined; should one come, it is no
    // pair.
    if (member.node_id() == recipient.self.node_id) continue;
    const PairEnd peer{member.node_id(), member.incarnation()};
    AppendPeerSecretField(
        &wire, lite::v1::ManagerMessage::kPeerSecretsFieldNumber, peer,
        recipient.secrets->Derive(recipient.self, peer));
  }
  return wire;
}

Outbox::Batch Outbox::PopEvents(size_t max_count, size_t max_bytes) {
  absl::MutexLock lock(&mu_);
  Batch batch;
  if (queue_.empty()) {
    if (closed_) batch.closed = close_status_;
    return batch;
  }
  batch.messages.push_back(std::move(queue_.front()));
  queue_.pop_front();
  if (!batch.messages.front()->message().has_event()) return batch;
  size_t bytes = batch.messages.front()->BatchEntryWire().size();
  while (!queue_.empty() && batch.messages.size() < max_count &&
         queue_.front()->message().has_event()) {
    // A large event (RecoveryComplete lists every member) is better sent
    // alone, without being copied into a batch.
    const size_t next = queue_.front()->BatchEntryWire().size();
    if (bytes + next > max_bytes) break;
    bytes += next;
    batch.messages.push_back(std::move(queue_.front()));
    queue_.pop_front();
  }
  return batch;
}

bool Outbox::closed() const {
  absl::MutexLock lock(&mu_);
  return closed_;
}

size_t Outbox::size() const {
  absl::MutexLock lock(&mu_);
  return queue_.size();
}

size_t Outbox::high_water() const {
  absl::MutexLock lock(&mu_);
  return high_water_;
}

}  // namespace lite::controlplane
