// LmrRegistry: AllocLmr, the "ask the home and wait" path that makes an LMR
// in the home's memory. The home is sent AllocateLmrMemory through the one
// request table (NodeRequests); the LMR's name is reserved until its answer,
// deadline, or end, and the caller's `done` runs once, after the lock is
// released.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status/macros.h"
#include "controlplane/lmr_registry.h"
#include "controlplane/manager_util.h"
#include "controlplane/validation.h"

namespace lite::controlplane {

using lite::v1::Event;
using lite::v1::Lmr;
using lite::v1::ManagerMessage;

namespace {

// What the home is told of an allocation the manager gave up on or could
// not use: it frees the memory if it allocated it after all.
Event AllocationAbandoned(const Lmr& lmr) {
  Event event;
  auto* removed = event.mutable_lmr_removed();
  removed->set_lmr_id(lmr.lmr_id());
  removed->set_name(lmr.name());
  removed->set_home_node_id(lmr.home_node_id());
  removed->set_cause(lite::v1::REMOVAL_CAUSE_ALLOCATION_ABANDONED);
  return event;
}

}  // namespace

void LmrRegistry::FinishAlloc(
    uint64_t request_id, absl::StatusOr<lite::v1::AllocLmrResponse> outcome) {
  auto it = allocs_.find(request_id);
  if (it == allocs_.end()) return;
  // Unless it was answered or timed out (counted then), it was given up.
  requests_->End(request_id, NodeRequests::Outcome::kAbandoned, clock_->Now());
  PendingAlloc pending = std::move(it->second);
  allocs_.erase(it);
  alloc_names_.erase(pending.lmr.name());
  deferred_->push_back(
      [done = std::move(pending.done), outcome = std::move(outcome)]() mutable {
        done(std::move(outcome));
      });
}

absl::Status LmrRegistry::Alloc(const lite::v1::Member& home,
                                const lite::v1::AllocLmrRequest& request,
                                AllocDone done) {
  const uint32_t home_id = home.node_id();
  LITE_RETURN_IF_ERROR(CheckNameFree(request.name()));
  LITE_RETURN_IF_ERROR(CheckPendingRoom());
  LITE_RETURN_IF_ERROR(CheckOwnerRoom(request.owner().uid()));
  // Chunks are the home's answer; the room for them is checked then.
  LITE_RETURN_IF_ERROR(
      CheckHomeRoom(home_id, request.owner().uid(), request.size_bytes(), 0));
  const uint32_t seq = store_->NextLmrSeq(home_id);
  if (seq == 0) {
    return absl::ResourceExhaustedError(
        absl::StrCat(NodeLabel(home), " has used every LMR id"));
  }

  const absl::Time now = clock_->Now();
  const uint64_t request_id =
      requests_->Start(NodeRequests::Kind::kAllocateLmrMemory, home_id,
                       home.incarnation(), now, now + options_.request_timeout);
  PendingAlloc pending;
  pending.lmr.set_lmr_id(MakeId(home_id, seq));
  pending.lmr.set_name(request.name());
  pending.lmr.set_home_node_id(home_id);
  pending.lmr.set_size_bytes(request.size_bytes());
  pending.lmr.set_owner_uid(request.owner().uid());
  pending.lmr.set_owner_gid(request.owner().gid());
  pending.lmr.set_mode(request.mode());
  pending.lmr.set_origin(lite::v1::LMR_ORIGIN_ALLOCATED);
  pending.done = std::move(done);

  ManagerMessage message;
  auto* node_request = message.mutable_request();
  node_request->set_request_id(request_id);
  node_request->set_deadline_ms(
      absl::ToInt64Milliseconds(options_.request_timeout));
  auto* alloc = node_request->mutable_allocate_lmr_memory();
  alloc->set_lmr_id(pending.lmr.lmr_id());
  alloc->set_name(pending.lmr.name());
  alloc->set_size_bytes(pending.lmr.size_bytes());
  alloc->set_owner_uid(pending.lmr.owner_uid());
  alloc->set_owner_gid(pending.lmr.owner_gid());
  alloc->set_mode(pending.lmr.mode());

  alloc_names_[pending.lmr.name()] = request_id;
  allocs_.emplace(request_id, std::move(pending));
  events_->SendTo(home_id, std::move(message));
  return absl::OkStatus();
}

void LmrRegistry::AllocAnswered(const lite::v1::NodeRequestResult& result,
                                uint64_t home_incarnation) {
  PendingAlloc& pending = allocs_.at(result.request_id());
  Lmr lmr = pending.lmr;
  const std::string label = NodeText(*store_, lmr.home_node_id());
  requests_->End(result.request_id(),
                 result.status_code() == 0 ? NodeRequests::Outcome::kOk
                                           : NodeRequests::Outcome::kError,
                 clock_->Now());
  if (result.status_code() != 0) {
    // The agent's words go into the caller's error: bounded and inert
    // (ValidateNodeRequestResult).
    const std::string& agent_message = result.status_message();
    FinishAlloc(
        result.request_id(),
        absl::Status(
            AgentCode(result.status_code()),
            absl::StrCat(
                label, " could not allocate ", lmr.size_bytes(),
                " bytes for LMR '", lmr.name(), "': ",
                agent_message.empty() ? "no reason given" : agent_message)));
    return;
  }
  absl::Status valid =
      result.has_allocated_lmr_memory()
          ? ValidateChunks("allocated_lmr_memory.chunks",
                           result.allocated_lmr_memory().chunks(),
                           lmr.size_bytes(), options_.max_lmr_chunks)
          : absl::InvalidArgumentError(
                "no allocated_lmr_memory in an OK result");
  if (valid.ok()) {
    const uint64_t held = store_->LmrChunksOnHome(lmr.home_node_id());
    const auto chunks =
        static_cast<uint64_t>(result.allocated_lmr_memory().chunks_size());
    if (held + chunks >
        static_cast<uint64_t>(options_.max_lmr_chunks_per_node)) {
      valid = absl::ResourceExhaustedError(absl::StrCat(
          "its ", chunks, " chunks are more than the node's LMRs may have ",
          "with the ", held, " they have (--max_lmr_chunks_per_node ",
          options_.max_lmr_chunks_per_node, ")"));
    }
  }
  if (valid.ok() && store_->GetLmr(lmr.lmr_id()).has_value()) {
    valid = absl::AlreadyExistsError(
        absl::StrCat("LMR id ", IdHex(lmr.lmr_id()), " is already registered"));
  }
  if (!valid.ok()) {
    FinishAlloc(result.request_id(),
                absl::IsResourceExhausted(valid)
                    ? absl::ResourceExhaustedError(
                          absl::StrCat(label, " allocated LMR '", lmr.name(),
                                       "', but ", valid.message()))
                    : absl::InternalError(absl::StrCat(
                          label, " answered the allocation of LMR '",
                          lmr.name(), "' with an unusable result: ",
                          valid.message(), "; this is a bug in its agent")));
    events_->Emit(AllocationAbandoned(lmr));
    return;
  }
  *lmr.mutable_chunks() = result.allocated_lmr_memory().chunks();
  lmr.set_memory_key(result.allocated_lmr_memory().memory_key());
  lmr.set_read_key(result.allocated_lmr_memory().read_key());
  lmr.set_epoch(home_incarnation);
  lmr.set_created_at_unix_ms(absl::ToUnixMillis(clock_->Now()));
  lmr.set_state(lite::v1::LMR_STATE_LIVE);
  // Release the name reservation before recording the LMR under that name.
  lite::v1::AllocLmrResponse response;
  *response.mutable_lmr() = WithoutKey(lmr);
  FinishAlloc(result.request_id(), std::move(response));
  store_->PutLmr(lmr);
  Event event;
  *event.mutable_lmr_added()->mutable_lmr() = WithoutKey(std::move(lmr));
  events_->Emit(std::move(event));
}
void LmrRegistry::AllocTimedOut(uint64_t request_id) {
  const Lmr lmr = allocs_.at(request_id).lmr;
  const std::string label = NodeText(*store_, lmr.home_node_id());
  FinishAlloc(
      request_id,
      absl::UnavailableError(absl::StrCat(
          label, " did not answer the allocation of LMR '", lmr.name(),
          "' within ", absl::ToInt64Milliseconds(options_.request_timeout),
          " ms (--request_timeout_ms); retry, or allocate elsewhere")));
  // The home may still allocate; this tells it to free the memory.
  events_->Emit(AllocationAbandoned(lmr));
}

void LmrRegistry::FailAllAllocs(const absl::Status& why) {
  std::vector<uint64_t> ids;
  for (const auto& [request_id, alloc] : allocs_) ids.push_back(request_id);
  for (uint64_t request_id : ids) FinishAlloc(request_id, why);
}

}  // namespace lite::controlplane
