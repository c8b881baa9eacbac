#include "agent/upcall_dispatcher.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "common/grpc/status.h"
#include "common/log/log.h"

namespace lite::agent {
namespace {

static_assert(kUpcallKinds.size() ==
                  std::variant_size_v<decltype(Upcall::request)>,
              "a name for every kind of upcall");

const char* KindName(const Upcall& upcall) {
  return upcall.request.index() < kUpcallKinds.size()
             ? kUpcallKinds[upcall.request.index()]
             : "unknown";
}

}  // namespace

UpcallDispatcher::UpcallDispatcher(
    UpcallDispatcherOptions options, Module* module,
    lite::v1::ClusterManager::StubInterface* stub, CallerSource* callers,
    GrantGate* grants, Counters* counters, UpcallStats* stats)
    : options_(options),
      module_(module),
      stub_(stub),
      callers_(callers),
      grants_(grants),
      counters_(counters),
      stats_(stats),
      unregisterer_(options.unregister, stub, callers, counters) {}

UpcallDispatcher::~UpcallDispatcher() { Stop(); }

void UpcallDispatcher::Start() {
  unregisterer_.Start();
  receiver_ = std::thread([this] { ReceiveLoop(); });
  for (int i = 0; i < options_.workers; ++i) {
    workers_.emplace_back([this] { WorkerLoop(); });
  }
}

void UpcallDispatcher::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  contexts_.CancelAll();
  if (receiver_.joinable()) receiver_.join();
  for (std::thread& t : workers_) {
    if (t.joinable()) t.join();
  }
  workers_.clear();
  unregisterer_.Stop();
  // Whatever is still queued gets an answer, so no application waits for
  // lite.ko's own timeout.
  std::deque<Queued> left;
  {
    absl::MutexLock lock(&mu_);
    left.swap(queue_);
  }
  for (const Queued& item : left) {
    UpcallReply reply;
    reply.upcall_id = item.upcall.upcall_id;
    reply.status = absl::UnavailableError("liteagent is shutting down");
    Answered(item, reply.status.code());
    Complete(item.upcall, std::move(reply));
  }
}

void UpcallDispatcher::ReceiveLoop() {
  while (true) {
    absl::StatusOr<ModuleMessage> msg = module_->Receive();
    if (!msg.ok()) {
      if (!absl::IsCancelled(msg.status())) {
        LITE_LOG_ERROR("module receive failed: %s; upcalls stop",
                       msg.status().ToString());
        counters_->Add("agent.module_errors");
      }
      return;
    }
    if (const auto* lost = std::get_if<LmrLost>(&*msg)) {
      counters_->Add("agent.module_events.lmr_lost");
      LITE_LOG_WARNING(
          "lite.ko lost LMR %#x (errno %d: its RDMA device was removed); "
          "telling the manager",
          lost->lmr_id, lost->reason_errno);
      callers_->ReportLmrLost(*lost);
      continue;
    }
    if (auto* upcall = std::get_if<Upcall>(&*msg)) {
      counters_->Add(absl::StrCat("agent.upcalls.", KindName(*upcall)));
      if (const auto* unmap = std::get_if<UnmapUpcall>(&upcall->request)) {
        // Before the manager hears of it: an ack the home waits for.
        callers_->GrantGivenBack(unmap->grant_id);
      }
      if (const auto* gone =
              std::get_if<RpcUnregisterUpcall>(&upcall->request)) {
        // Nobody waits for it: no answer, retried while the manager is
        // away.
        unregisterer_.Unregister(gone->service_id);
        continue;
      }
      absl::MutexLock lock(&mu_);
      const absl::Time now = absl::Now();
      queue_.push_back(
          Queued{std::move(*upcall), now + options_.upcall_timeout, now});
      continue;
    }
    const auto& failed = std::get<PeerConnectionFailed>(*msg);
    // lite.ko has already failed the peer's operations; the manager, the
    // authority on membership, hears the data path's verdicts and weighs
    // them against its own evidence.
    counters_->Add("agent.module_events.peer_connection_failed");
    LITE_LOG_WARNING(
        "lite.ko reports the connection to node %u (incarnation %u) failed: "
        "%s",
        failed.node_id, failed.incarnation, failed.reason);
    callers_->ReportPeerFailure(failed);
  }
}

void UpcallDispatcher::WorkerLoop() {
  while (true) {
    Queued item;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || !queue_.empty();
      };
      mu_.Await(absl::Condition(&ready));
      if (stopping_) return;
      item = std::move(queue_.front());
      queue_.pop_front();
    }
    Handle(item);
  }
}

void UpcallDispatcher::Handle(const Queued& item) {
  UpcallReply reply;
  reply.upcall_id = item.upcall.upcall_id;
  std::optional<lite::v1::NodeCaller> caller =
      callers_->WaitForCaller(item.deadline);
  if (!caller.has_value()) {
    reply.status = absl::UnavailableError(
        "liteagent is not connected to the cluster manager; try again later");
  } else {
    reply.status = Call(*caller, item.upcall, item.deadline, &reply);
  }
  if (!reply.status.ok()) {
    counters_->Add("agent.upcalls_failed");
    LITE_LOG_INFO("%s upcall %u from uid %u pid %u failed: %s",
                  KindName(item.upcall), item.upcall.upcall_id,
                  item.upcall.credentials.uid(), item.upcall.credentials.pid(),
                  reply.status.ToString());
  }
  if (reply.status.ok() && reply.grant.has_value()) {
    // Hand the grant to the module only if it was not revoked meanwhile.
    const UpcallReply& ok_reply = reply;
    absl::Status installed = grants_->Install(
        *reply.grant, [&] { return module_->CompleteUpcall(ok_reply); });
    if (installed.ok()) return Answered(item, absl::StatusCode::kOk);
    if (!absl::IsAborted(installed)) {
      // lite.ko did not take the grant (e.g. the application gave up): give
      // it back so that the manager does not keep a grant nobody holds.
      if (!absl::IsNotFound(installed)) counters_->Add("agent.module_errors");
      LITE_LOG_WARNING("map upcall %u: the module did not take grant %#x: %s",
                       reply.upcall_id, reply.grant->grant_id(),
                       installed.ToString());
      ReleaseGrant(*caller, reply.grant->grant_id(), item.deadline);
      // The answer went nowhere: counted as lite.ko's refusal.
      return Answered(item, installed.code());
    }
    counters_->Add("agent.upcalls_failed");
    reply.status = installed;
    reply.grant.reset();
  }
  // An LMR made for a caller that left (killed, or timed out) before its
  // answer arrived: the caller was told the ALLOC failed.
  std::optional<lite::v1::Lmr> created;
  if (reply.status.ok() && reply.lmr.has_value() &&
      std::holds_alternative<AllocUpcall>(item.upcall.request)) {
    created = reply.lmr;
  }
  // Likewise a service registered for a server process that left: lite.ko
  // freed its rings, so the manager must not keep it listed.
  std::optional<uint64_t> registered = reply.service_id;
  if (!reply.status.ok()) registered.reset();
  Answered(item, reply.status.code());
  const absl::Status answered = Complete(item.upcall, std::move(reply));
  const bool unclaimed =
      absl::IsCancelled(answered) || absl::IsNotFound(answered);
  if (created.has_value() && unclaimed) {
    FreeUnclaimed(*caller, item.upcall, *created, item.deadline);
  }
  if (registered.has_value() && unclaimed) {
    counters_->Add("agent.services_unclaimed");
    unregisterer_.Unregister(*registered);
  }
}

absl::Status UpcallDispatcher::Call(const lite::v1::NodeCaller& caller,
                                    const Upcall& upcall, absl::Time deadline,
                                    UpcallReply* reply) {
  grpc::ClientContext ctx;
  ctx.set_deadline(absl::ToChronoTime(deadline));
  ContextRegistry::Scoped scoped(&contexts_, &ctx);
  grpc::Status status;
  if (const auto* r = std::get_if<AllocUpcall>(&upcall.request)) {
    lite::v1::AllocLmrRequest req;
    *req.mutable_caller() = caller;
    *req.mutable_owner() = upcall.credentials;
    req.set_name(r->name);
    req.set_size_bytes(r->size_bytes);
    req.set_mode(r->mode);
    req.set_home_node_id(r->home_node_id);
    lite::v1::AllocLmrResponse resp;
    status = stub_->AllocLmr(&ctx, req, &resp);
    if (status.ok()) reply->lmr = resp.lmr();
  } else if (const auto* r = std::get_if<RegisterUpcall>(&upcall.request)) {
    lite::v1::RegisterLmrRequest req;
    *req.mutable_caller() = caller;
    *req.mutable_owner() = upcall.credentials;
    req.set_name(r->name);
    req.set_size_bytes(r->size_bytes);
    req.set_mode(r->mode);
    for (const auto& chunk : r->chunks) *req.add_chunks() = chunk;
    req.set_memory_key(r->memory_key);
    lite::v1::RegisterLmrResponse resp;
    status = stub_->RegisterLmr(&ctx, req, &resp);
    if (status.ok()) reply->lmr = resp.lmr();
  } else if (const auto* r = std::get_if<MapUpcall>(&upcall.request)) {
    lite::v1::MapLmrRequest req;
    *req.mutable_caller() = caller;
    *req.mutable_requester() = upcall.credentials;
    req.set_name(r->name);
    req.mutable_access()->set_read(r->read);
    req.mutable_access()->set_write(r->write);
    lite::v1::MapLmrResponse resp;
    status = stub_->MapLmr(&ctx, req, &resp);
    if (status.ok()) reply->grant = resp.grant();
  } else if (const auto* r = std::get_if<UnmapUpcall>(&upcall.request)) {
    lite::v1::UnmapLmrRequest req;
    *req.mutable_caller() = caller;
    req.set_grant_id(r->grant_id);
    lite::v1::UnmapLmrResponse resp;
    status = stub_->UnmapLmr(&ctx, req, &resp);
  } else if (const auto* r = std::get_if<FreeUpcall>(&upcall.request)) {
    lite::v1::FreeLmrRequest req;
    *req.mutable_caller() = caller;
    *req.mutable_requester() = upcall.credentials;
    req.set_name(r->name);
    lite::v1::FreeLmrResponse resp;
    status = stub_->FreeLmr(&ctx, req, &resp);
  } else {
    return CallRpc(caller, upcall, &ctx, reply);
  }
  return FromGrpcStatus(status);
}

void UpcallDispatcher::ReleaseGrant(const lite::v1::NodeCaller& caller,
                                    uint64_t grant_id, absl::Time deadline) {
  grpc::ClientContext ctx;
  // At least a second, even if the upcall's own time ran out.
  ctx.set_deadline(
      absl::ToChronoTime(std::max(deadline, absl::Now() + absl::Seconds(1))));
  ContextRegistry::Scoped scoped(&contexts_, &ctx);
  lite::v1::UnmapLmrRequest req;
  *req.mutable_caller() = caller;
  req.set_grant_id(grant_id);
  lite::v1::UnmapLmrResponse resp;
  grpc::Status s = stub_->UnmapLmr(&ctx, req, &resp);
  if (!s.ok()) {
    LITE_LOG_WARNING("giving back grant %#x: %s", grant_id,
                     FromGrpcStatus(s).ToString());
  }
}

void UpcallDispatcher::Answered(const Queued& item, absl::StatusCode code) {
  stats_->Answered(item.upcall.request.index(), code,
                   absl::Now() - item.received);
}

absl::Status UpcallDispatcher::Complete(const Upcall& upcall,
                                        UpcallReply reply) {
  const uint64_t id = reply.upcall_id;
  absl::Status s = module_->CompleteUpcall(reply);
  if (!s.ok()) {
    // NOT_FOUND: the application gave up and lite.ko dropped the upcall;
    // CANCELLED: it left after lite.ko had taken the answer.
    if (!absl::IsNotFound(s) && !absl::IsCancelled(s)) {
      counters_->Add("agent.module_errors");
    }
    LITE_LOG_WARNING("answering %s upcall %u: %s", KindName(upcall), id,
                     s.ToString());
  }
  return s;
}

void UpcallDispatcher::FreeUnclaimed(const lite::v1::NodeCaller& caller,
                                     const Upcall& upcall,
                                     const lite::v1::Lmr& lmr,
                                     absl::Time deadline) {
  grpc::ClientContext ctx;
  // At least a second, even if the upcall's own time ran out.
  ctx.set_deadline(
      absl::ToChronoTime(std::max(deadline, absl::Now() + absl::Seconds(1))));
  ContextRegistry::Scoped scoped(&contexts_, &ctx);
  lite::v1::FreeLmrRequest req;
  *req.mutable_caller() = caller;
  // As the owner who asked for it: only the owner may free.
  *req.mutable_requester() = upcall.credentials;
  req.set_name(lmr.name());
  lite::v1::FreeLmrResponse resp;
  const absl::Status s = FromGrpcStatus(stub_->FreeLmr(&ctx, req, &resp));
  if (s.ok()) {
    counters_->Add("agent.lmrs_unclaimed_freed");
    LITE_LOG_INFO(
        "LMR '%s' (%#x) was made for pid %u, which was gone when the answer "
        "arrived; freed it",
        lmr.name(), lmr.lmr_id(), upcall.credentials.pid());
  } else {
    counters_->Add("agent.lmrs_unclaimed_kept");
    LITE_LOG_WARNING(
        "LMR '%s' (%#x) was made for pid %u, which was gone when the answer "
        "arrived; freeing it failed: %s (its owner can free it by name)",
        lmr.name(), lmr.lmr_id(), upcall.credentials.pid(), s.ToString());
  }
}

}  // namespace lite::agent
