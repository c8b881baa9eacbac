#include "controlplane/bench/sim_agent.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/wire_format_lite.h"

namespace lite::controlplane::bench {
namespace {

// ManagerMessage field tags (field number << 3 | wire type 2).
constexpr uint8_t kEventTag = (1 << 3) | 2;
constexpr uint8_t kRequestTag = (2 << 3) | 2;
constexpr uint8_t kAckTag = (3 << 3) | 2;
constexpr uint8_t kBatchTag = (4 << 3) | 2;

uint8_t FirstByte(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  if (!buffer.Dump(&slices).ok()) return 0;
  for (const grpc::Slice& slice : slices) {
    if (slice.size() > 0) return slice.begin()[0];
  }
  return 0;
}

// How many events an EventBatch message holds, by walking its wire form
// (cheaper than parsing every event).
int64_t CountBatchEvents(const grpc::ByteBuffer& buffer) {
  grpc::Slice joined;
  if (!buffer.DumpToSingleSlice(&joined).ok()) return 0;
  google::protobuf::io::CodedInputStream in(joined.begin(),
                                            static_cast<int>(joined.size()));
  uint32_t length = 0;
  if (in.ReadTag() != kBatchTag || !in.ReadVarint32(&length)) return 0;
  int64_t count = 0;
  while (true) {
    const uint32_t tag = in.ReadTag();
    if (tag == 0) break;
    uint32_t size = 0;
    if (!in.ReadVarint32(&size) || !in.Skip(static_cast<int>(size))) break;
    if (tag == ((1 << 3) | 2)) ++count;
  }
  return count;
}

}  // namespace

SimAgent::SimAgent(int index, lite::v1::ClusterManager::Stub* stub,
                   grpc::GenericStub* generic, AgentTotals* totals,
                   bool batches)
    : index_(index),
      name_(absl::StrCat("sim-", index)),
      stub_(stub),
      generic_(generic),
      totals_(totals),
      batches_(batches) {}

void SimAgent::Start(absl::Time now) {
  {
    absl::MutexLock lock(&mu_);
    started_ = now;
  }
  lite::v1::JoinRequest request;
  request.set_node_name(name_);
  // Unique per agent: 10.x.y.z:7471 from the index.
  request.set_rdma_address(absl::StrCat("10.", (index_ >> 16) & 0xff, ".",
                                        (index_ >> 8) & 0xff, ".",
                                        index_ & 0xff, ":7471"));
  grpc::Slice slice(request.SerializeAsString());
  join_request_ = grpc::ByteBuffer(&slice, 1);
  generic_->UnaryCall(&join_context_, "/lite.v1.ClusterManager/Join",
                      grpc::StubOptions(), &join_request_, &join_response_,
                      [this](grpc::Status status) { OnJoined(status); });
}

void SimAgent::OnJoined(const grpc::Status& status) {
  if (!status.ok()) {
    totals_->join_failures.fetch_add(1);
    absl::MutexLock lock(&mu_);
    done_ = true;
    totals_->sessions_done.fetch_add(1);
    return;
  }
  // Read node_id (1), incarnation (2) and heartbeat_interval_ms (7); skip
  // the rest, the member list above all.
  grpc::Slice joined;
  uint64_t interval_ms = 250;
  if (join_response_.DumpToSingleSlice(&joined).ok()) {
    google::protobuf::io::CodedInputStream in(joined.begin(),
                                              static_cast<int>(joined.size()));
    in.SetTotalBytesLimit(static_cast<int>(joined.size()) + 1);
    while (const uint32_t tag = in.ReadTag()) {
      const int field = static_cast<int>(tag >> 3);
      uint64_t value = 0;
      if ((tag & 7) == 0) {
        if (!in.ReadVarint64(&value)) break;
        if (field == 1) node_id_.store(static_cast<uint32_t>(value));
        if (field == 2) incarnation_.store(value);
        if (field == 7) interval_ms = value;
      } else if (!google::protobuf::internal::WireFormatLite::SkipField(&in,
                                                                        tag)) {
        break;
      }
    }
  }
  generic_->PrepareBidiStreamingCall(&session_context_,
                                     "/lite.v1.ClusterManager/Session",
                                     grpc::StubOptions(), this);
  {
    absl::MutexLock lock(&mu_);
    interval_ = absl::Milliseconds(interval_ms);
    open_ = true;
    SendLocked(absl::Now());
  }
  StartRead(&in_);
  StartCall();
}

bool SimAgent::WantSendLocked(absl::Time now) const {
  if (!open_ || done_ || hung_ || writing_) return false;
  // The schedule always applies, so that flooding never costs the lease
  // when acks are slow to come back.
  if (now >= next_heartbeat_) return true;
  return flood_window_ > 0 &&
         sent_ - acked_ < static_cast<uint64_t>(flood_window_);
}

void SimAgent::SendLocked(absl::Time now) {
  lite::v1::AgentMessage message;
  auto* heartbeat = message.mutable_heartbeat();
  heartbeat->set_node_id(node_id_.load());
  heartbeat->set_incarnation(incarnation_.load());
  heartbeat->set_heartbeat_seq(++sent_);
  // Read on the first heartbeat only; harmless on the others.
  heartbeat->set_accept_event_batches(batches_);
  heartbeat->set_accept_compact_recovery_complete(batches_);
  std::string wire = message.SerializeAsString();
  grpc::Slice slice(wire);
  out_ = grpc::ByteBuffer(&slice, 1);
  writing_ = true;
  last_sent_ = now;
  next_heartbeat_ = now + interval_;
  StartWrite(&out_);
}

void SimAgent::Tick(absl::Time now) {
  absl::MutexLock lock(&mu_);
  if (WantSendLocked(now)) SendLocked(now);
}

void SimAgent::SetFlood(int window) {
  absl::MutexLock lock(&mu_);
  flood_window_ = window;
  const absl::Time now = absl::Now();
  next_heartbeat_ = now;
  if (WantSendLocked(now)) SendLocked(now);
}

void SimAgent::Hang(absl::Time now) {
  absl::MutexLock lock(&mu_);
  hung_ = true;
  hung_at_ = now;
}

void SimAgent::Cancel() { session_context_.TryCancel(); }

absl::Duration SimAgent::join_latency() const {
  absl::MutexLock lock(&mu_);
  return joined_at_ - started_;
}

absl::Time SimAgent::hung_at() const {
  absl::MutexLock lock(&mu_);
  return hung_at_;
}

absl::Time SimAgent::last_heartbeat_sent() const {
  absl::MutexLock lock(&mu_);
  return last_sent_;
}

void SimAgent::OnReadDone(bool ok) {
  if (!ok) return;  // OnDone follows.
  const uint8_t tag = FirstByte(in_);
  if (tag == kAckTag) {
    totals_->acks.fetch_add(1, std::memory_order_relaxed);
    absl::MutexLock lock(&mu_);
    ++acked_;
    if (!joined_.exchange(true)) {
      joined_at_ = absl::Now();
      totals_->joined.fetch_add(1);
    }
    if (flood_window_ > 0 && WantSendLocked(absl::Now())) {
      SendLocked(absl::Now());
    }
  } else if (tag == kEventTag) {
    totals_->events.fetch_add(1, std::memory_order_relaxed);
  } else if (tag == kBatchTag) {
    totals_->events.fetch_add(CountBatchEvents(in_), std::memory_order_relaxed);
    totals_->batches.fetch_add(1, std::memory_order_relaxed);
  } else if (tag == kRequestTag) {
    totals_->requests.fetch_add(1, std::memory_order_relaxed);
  }
  StartRead(&in_);
}

void SimAgent::OnWriteDone(bool ok) {
  absl::MutexLock lock(&mu_);
  writing_ = false;
  if (!ok) {
    open_ = false;
    return;
  }
  const absl::Time now = absl::Now();
  if (flood_window_ > 0 && WantSendLocked(now)) SendLocked(now);
}

void SimAgent::OnDone(const grpc::Status& status) {
  absl::MutexLock lock(&mu_);
  open_ = false;
  done_ = true;
  totals_->sessions_done.fetch_add(1);
  if (!hung_ && status.error_code() != grpc::StatusCode::UNAVAILABLE &&
      status.error_code() != grpc::StatusCode::CANCELLED) {
    totals_->sessions_failed_early.fetch_add(1);
  }
}

}  // namespace lite::controlplane::bench
