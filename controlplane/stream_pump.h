// Moves messages from an Outbox onto a server stream, one write at a time:
// the reader side of the outbox for the gRPC layer. Shared by the Session
// (bidi) and Watch (server-streaming) reactors.
//
// Lifetime: the reactor owns the pump through a shared_ptr, and so does the
// outbox (as its listener). The reactor calls Detach() from OnDone, after
// which the pump touches nothing; Detach also unregisters it from the outbox.
// Locking follows gRPC's callback examples: StartWrite and Finish are called
// with the pump's mutex held, which gRPC allows because it never runs a
// reaction inline from them.
#ifndef LITE_CONTROLPLANE_STREAM_PUMP_H_
#define LITE_CONTROLPLANE_STREAM_PUMP_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/grpc/status.h"
#include "controlplane/outbox.h"

namespace lite::controlplane {

template <typename Reactor>
class StreamPump final : public OutboxListener {
 public:
  enum class Mode {
    kSession,         // One ManagerMessage per message.
    kBatchedSession,  // Backlogged events go out as one EventBatch.
    kWatch,           // Bare Events.
  };
  // Most events in one EventBatch, and the size after which no more are
  // added (well under gRPC's default 4 MiB message limit).
  static constexpr size_t kMaxBatchEvents = 1024;
  static constexpr size_t kMaxBatchBytes = 256 * 1024;

  // Sessions pass their recipient: what they write is completed with the
  // node's pair secrets (see SessionRecipient).
  StreamPump(Reactor* reactor, std::shared_ptr<Outbox> outbox, Mode mode,
             std::optional<SessionRecipient> recipient = std::nullopt)
      : reactor_(reactor),
        outbox_(std::move(outbox)),
        mode_(mode),
        recipient_(std::move(recipient)) {}

  void OnOutboxReady() override {
    absl::MutexLock lock(&mu_);
    WriteNextLocked();
  }

  // From the reactor's OnWriteDone.
  void OnWriteDone(bool ok) {
    absl::MutexLock lock(&mu_);
    writing_ = false;
    if (!ok) {
      // The stream is broken; nothing more can be written.
      FinishLocked(grpc::Status(grpc::StatusCode::CANCELLED,
                                "the stream broke while writing"));
      return;
    }
    if (pending_finish_.has_value()) {
      FinishLocked(*pending_finish_);
      return;
    }
    WriteNextLocked();
  }

  // Ends the stream with `status` now (after the write in flight, if any),
  // dropping what the outbox still holds. Later calls do nothing.
  void Finish(const grpc::Status& status) {
    absl::MutexLock lock(&mu_);
    FinishLocked(status);
  }

  // From the reactor's OnDone.
  void Detach() {
    absl::MutexLock lock(&mu_);
    reactor_ = nullptr;
    if (outbox_ != nullptr) outbox_->SetListener(nullptr);
    outbox_ = nullptr;
  }

 private:
  void WriteNextLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (reactor_ == nullptr || writing_ || finished_ ||
        pending_finish_.has_value()) {
      return;
    }
    Outbox::Batch next = outbox_->PopEvents(
        mode_ == Mode::kBatchedSession ? kMaxBatchEvents : 1, kMaxBatchBytes);
    const std::string secrets =
        recipient_.has_value() && !next.messages.empty()
            ? PeerSecretsWire(next.messages, *recipient_)
            : std::string();
    if (next.messages.size() > 1) {
      grpc::Slice slice(EventBatchWire(next.messages) + secrets);
      buffer_ = grpc::ByteBuffer(&slice, 1);
      writing_ = true;
      reactor_->StartWrite(&buffer_);
    } else if (next.messages.size() == 1 && !secrets.empty()) {
      // This session's own copy: the shared encoding plus its secret.
      grpc::Slice slice(next.messages.front()->SessionWire() + secrets);
      buffer_ = grpc::ByteBuffer(&slice, 1);
      writing_ = true;
      reactor_->StartWrite(&buffer_);
    } else if (next.messages.size() == 1) {
      // No copy: the slice points into the message's cached encoding and
      // keeps the message alive until gRPC is done with it. (A large event,
      // such as RecoveryComplete, goes to every session.)
      auto* keep = new OutMessagePtr(std::move(next.messages.front()));
      const std::string& wire =
          mode_ == Mode::kWatch ? (*keep)->WatchWire() : (*keep)->SessionWire();
      grpc::Slice slice(const_cast<char*>(wire.data()), wire.size(),
                        &ReleaseMessage, keep);
      buffer_ = grpc::ByteBuffer(&slice, 1);
      writing_ = true;
      reactor_->StartWrite(&buffer_);
    } else if (next.closed.has_value()) {
      FinishLocked(ToGrpcStatus(*next.closed));
    }
  }

  static void ReleaseMessage(void* message) {
    delete static_cast<OutMessagePtr*>(message);
  }

  void FinishLocked(const grpc::Status& status)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (reactor_ == nullptr || finished_) return;
    if (writing_) {
      if (!pending_finish_.has_value()) pending_finish_ = status;
      return;
    }
    finished_ = true;
    reactor_->Finish(status);
  }

  absl::Mutex mu_;
  Reactor* reactor_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<Outbox> outbox_ ABSL_GUARDED_BY(mu_);
  const Mode mode_;
  const std::optional<SessionRecipient> recipient_;
  grpc::ByteBuffer buffer_ ABSL_GUARDED_BY(mu_);
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  std::optional<grpc::Status> pending_finish_ ABSL_GUARDED_BY(mu_);
};

}  // namespace lite::controlplane

#endif  // LITE_CONTROLPLANE_STREAM_PUMP_H_
