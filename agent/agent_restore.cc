// Agent: joining and adopting the manager's view, and restoring what
// outlived a manager or agent restart — hosted LMRs registered again, grants
// applications hold restored or dropped. See agent.h for the life cycle.
#include <unistd.h>

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "agent/agent.h"
#include "common/grpc/status.h"
#include "common/log/log.h"
#include "common/status/macros.h"

namespace lite::agent {

absl::StatusOr<lite::v1::JoinResponse> Agent::Join() {
  lite::v1::JoinRequest req;
  req.set_node_name(options_.node_name);
  req.set_rdma_address(options_.rdma_address);
  absl::StatusOr<std::optional<lite::v1::NodeIdentity>> identity =
      module_->GetIdentity();
  if (!identity.ok()) {
    ModuleError("reading the node identity", identity.status());
    return identity.status();
  }
  if (identity->has_value()) {
    *req.mutable_restore() = **identity;
    // The token goes only with the identity it was issued for.
    absl::MutexLock lock(&mu_);
    if ((*identity)->node_id() == node_id_ &&
        (*identity)->incarnation() == incarnation_) {
      req.mutable_restore()->set_token(identity_token_);
    }
  }

  grpc::ClientContext ctx;
  ctx.set_deadline(absl::ToChronoTime(absl::Now() + options_.rpc_timeout));
  ContextRegistry::Scoped scoped(&contexts_, &ctx);
  lite::v1::JoinResponse resp;
  grpc::Status status = stub_->Join(&ctx, req, &resp);
  if (!status.ok()) return FromGrpcStatus(status);
  if (resp.node_id() == 0 || resp.incarnation() == 0 ||
      resp.lease_duration_ms() == 0) {
    return absl::InternalError(absl::StrFormat(
        "the manager answered Join with node id %u, incarnation %u, lease %u "
        "ms; all must be nonzero",
        resp.node_id(), resp.incarnation(), resp.lease_duration_ms()));
  }
  counters_.Add("agent.joins");
  if (resp.restored()) counters_.Add("agent.joins_restored");
  LITE_LOG_INFO(
      "joined as node %u incarnation %u%s: %d members, event sequence %u, "
      "lease %u ms, heartbeat every %u ms%s",
      resp.node_id(), resp.incarnation(),
      resp.restored() ? " (identity restored)" : "", resp.members_size(),
      resp.event_sequence(), resp.lease_duration_ms(),
      resp.heartbeat_interval_ms(),
      resp.manager_recovering()
          ? absl::StrFormat(", manager recovering for %u ms",
                            resp.recovery_remaining_ms())
          : "");
  return resp;
}

absl::Status Agent::Adopt(const lite::v1::JoinResponse& join) {
  lite::v1::NodeIdentity identity;
  identity.set_node_id(join.node_id());
  identity.set_incarnation(join.incarnation());
  if (absl::Status s = module_->SetIdentity(identity); !s.ok()) {
    ModuleError("setting the node identity", s);
    return s;
  }
  {
    absl::MutexLock lock(&mu_);
    node_id_ = join.node_id();
    incarnation_ = join.incarnation();
    identity_token_ = join.identity_token();
    incarnation_live_ = true;
    applied_event_sequence_ = join.event_sequence();
  }
  // A new incarnation holds no grants: the manager dropped the old ones.
  absl::StatusOr<int> revoked =
      grants_.SetHolder(join.node_id(), join.incarnation());
  if (!revoked.ok()) {
    ModuleError("revoking the previous incarnation's grants", revoked.status());
  } else if (*revoked > 0) {
    counters_.Add("agent.grants_revoked", *revoked);
    LITE_LOG_INFO("revoked %d grants of the previous incarnation", *revoked);
  }
  // While the manager recovers, peers missing from the list may just not
  // have rejoined yet; RecoveryComplete settles it.
  std::vector<lite::v1::Member> members(join.members().begin(),
                                        join.members().end());
  // Each peer goes to lite.ko with the secret of this node's pair with it.
  const PeerSecrets secrets = Secrets(join.peer_secrets());
  int without = 0;
  for (const lite::v1::Member& m : members) {
    if (m.node_id() != join.node_id() && SecretFor(secrets, m).empty()) {
      ++without;
    }
  }
  if (without > 0) {
    counters_.Add("agent.peers_without_secret", without);
    LITE_LOG_WARNING(
        "the manager's Join answer has no pair secret for %d of %d peers (a "
        "manager older than peer authentication?); lite.ko with peer_auth=1 "
        "will not connect to them",
        without, members.size() - 1);
  }
  if (absl::Status s = peers_.Reconcile(members, join.node_id(),
                                        join.manager_recovering(), secrets);
      !s.ok()) {
    ModuleError("programming peers", s);
  }
  return absl::OkStatus();
}

PeerSecrets Agent::Secrets(
    const google::protobuf::RepeatedPtrField<lite::v1::PeerSecret>& in) {
  int invalid = 0;
  PeerSecrets secrets = CollectPeerSecrets(in, &invalid);
  if (invalid > 0) {
    // Not the secrets themselves: they are never logged.
    counters_.Add("agent.peer_secrets_invalid", invalid);
    LITE_LOG_ERROR(
        "the manager sent %d pair secrets that are not %d bytes (or name "
        "node 0); their peers are added without one",
        invalid, kPairSecretBytes);
  }
  return secrets;
}

absl::Status Agent::Restore(const lite::v1::JoinResponse& join) {
  SetState(lite::v1::MANAGER_CONNECTION_STATE_RESTORING);
  const lite::v1::NodeCaller caller = Caller();
  absl::StatusOr<std::vector<lite::v1::Lmr>> hosted = module_->ListHostedLmrs();
  if (!hosted.ok()) {
    ModuleError("listing hosted LMRs", hosted.status());
    return hosted.status();
  }
  for (const lite::v1::Lmr& lmr : *hosted) {
    if (ShuttingDown()) return absl::CancelledError("shutting down");
    LITE_RETURN_IF_ERROR(ReRegister(caller, lmr));
  }
  LITE_RETURN_IF_ERROR(RestoreServices(caller));
  // Only a restored identity keeps its grants; a new incarnation's were
  // revoked in Adopt.
  if (join.restored()) return RestoreGrants(caller, join.manager_recovering());
  return absl::OkStatus();
}

absl::Status Agent::ReRegister(const lite::v1::NodeCaller& caller,
                               const lite::v1::Lmr& lmr) {
  lite::v1::RegisterLmrRequest req;
  *req.mutable_caller() = caller;
  req.mutable_owner()->set_uid(lmr.owner_uid());
  req.mutable_owner()->set_gid(lmr.owner_gid());
  // The original caller's pid is not part of the record; the agent acts.
  req.mutable_owner()->set_pid(static_cast<uint32_t>(getpid()));
  req.set_name(lmr.name());
  req.set_size_bytes(lmr.size_bytes());
  req.set_mode(lmr.mode());
  *req.mutable_chunks() = lmr.chunks();
  req.set_memory_key(lmr.memory_key());
  req.set_read_key(lmr.read_key());
  // The id keeps its home part only if this node kept its id; otherwise the
  // LMR is registered as new and gets a fresh id.
  const bool keeps_id = (lmr.lmr_id() >> 32) == caller.node_id();
  // Freed by the manager and not released yet: this process saw the
  // LmrRemoved, or an earlier one did and told lite.ko (an agent restart).
  const bool marked = lmr.state() == lite::v1::LMR_STATE_RELEASING;
  bool releasing;
  {
    absl::MutexLock lock(&mu_);
    if (marked) releasing_lmrs_.insert(lmr.lmr_id());
    releasing = releasing_lmrs_.contains(lmr.lmr_id());
  }
  if (releasing && !keeps_id) {
    // Freed, but no manager will fence it under another id: nobody can
    // prove that no holder still reaches it, so it is never reused.
    counters_.Add("agent.lmrs_quarantined");
    LITE_LOG_WARNING(
        "LMR %#x was releasing and this node's id changed; "
        "quarantining its memory",
        lmr.lmr_id());
    if (absl::Status f = module_->FreeLmrMemory(lmr.lmr_id(), true); !f.ok()) {
      ModuleError("quarantining a releasing LMR", f);
    }
    absl::MutexLock lock(&mu_);
    releasing_lmrs_.erase(lmr.lmr_id());
    return absl::OkStatus();
  }
  req.set_releasing(releasing);
  if (keeps_id) {
    req.set_lmr_id(lmr.lmr_id());
    req.set_origin(lmr.origin() == lite::v1::LMR_ORIGIN_UNSPECIFIED
                       ? lite::v1::LMR_ORIGIN_REGISTERED
                       : lmr.origin());
  }
  grpc::ClientContext ctx;
  ctx.set_deadline(absl::ToChronoTime(absl::Now() + options_.rpc_timeout));
  ContextRegistry::Scoped scoped(&contexts_, &ctx);
  lite::v1::RegisterLmrResponse resp;
  const absl::Status s = FromGrpcStatus(stub_->RegisterLmr(&ctx, req, &resp));
  if (s.ok()) {
    if (resp.lmr().state() == lite::v1::LMR_STATE_RELEASING) {
      // Freed while this node was away: the memory waits for the release.
      absl::MutexLock lock(&mu_);
      releasing_lmrs_.insert(lmr.lmr_id());
    }
    counters_.Add("agent.lmrs_reregistered");
    if (releasing) counters_.Add("agent.lmrs_reregistered_releasing");
    LITE_LOG_INFO("re-registered LMR '%s' as %#x (epoch %u)%s", lmr.name(),
                  resp.lmr().lmr_id(), resp.lmr().epoch(),
                  releasing ? ", releasing" : "");
    if (absl::Status u = module_->UpdateHostedLmr(lmr.lmr_id(), resp.lmr());
        !u.ok()) {
      ModuleError("recording a re-registered LMR", u);
    }
    return absl::OkStatus();
  }
  switch (s.code()) {
    case absl::StatusCode::kAlreadyExists:
    case absl::StatusCode::kPermissionDenied:
    case absl::StatusCode::kInvalidArgument: {
      // The manager will never accept this record (e.g. the name was taken
      // while this node was away): no one can map it again, so keeping the
      // memory would only leak it.
      counters_.Add("agent.lmrs_dropped");
      LITE_LOG_ERROR(
          "LMR '%s' (%#x) cannot be registered again: %s; "
          "freeing its memory",
          lmr.name(), lmr.lmr_id(), s.ToString());
      if (absl::Status f = module_->FreeLmrMemory(lmr.lmr_id(), false);
          !f.ok()) {
        ModuleError("freeing a refused LMR", f);
      }
      return absl::OkStatus();
    }
    case absl::StatusCode::kFailedPrecondition:
      if (!keeps_id) {
        // A new registration on a draining node: keep the memory and try
        // again at the next Join.
        LITE_LOG_WARNING("LMR '%s' not registered again for now: %s",
                         lmr.name(), s.ToString());
        return absl::OkStatus();
      }
      [[fallthrough]];
    default:
      return absl::Status(
          s.code(), absl::StrFormat("re-registering LMR '%s': %s", lmr.name(),
                                    s.message()));
  }
}

absl::Status Agent::RestoreGrant(const lite::v1::NodeCaller& caller,
                                 const lite::v1::Grant& grant, bool revoking,
                                 lite::v1::RestoreGrantResponse* resp) {
  lite::v1::RestoreGrantRequest req;
  *req.mutable_caller() = caller;
  *req.mutable_grant() = grant;
  req.set_revoking(revoking);
  grpc::ClientContext ctx;
  ctx.set_deadline(absl::ToChronoTime(absl::Now() + options_.rpc_timeout));
  ContextRegistry::Scoped scoped(&contexts_, &ctx);
  return FromGrpcStatus(stub_->RestoreGrant(&ctx, req, resp));
}

absl::Status Agent::RestoreGrants(const lite::v1::NodeCaller& caller,
                                  bool manager_recovering) {
  absl::StatusOr<std::vector<lite::v1::Grant>> grants = module_->ListGrants();
  if (!grants.ok()) {
    ModuleError("listing grants", grants.status());
    return grants.status();
  }
  auto revoke = [this](const lite::v1::Grant& g, const absl::Status& why) {
    LITE_LOG_WARNING("grant %#x on '%s' not restored (%s); revoking it",
                     g.grant_id(), g.lmr_name(), why.ToString());
    revoker_.Revoke(g.grant_id(), g.holder_incarnation(), /*ack=*/false);
  };
  // Revoked grants lite.ko still drains (or keeps until unmapped): the
  // release of their LMR waits for them, so they are restored as revoking
  // and acknowledged once drained.
  absl::StatusOr<std::vector<lite::v1::Grant>> revoking =
      module_->ListRevokedGrants();
  if (!revoking.ok()) {
    ModuleError("listing revoked grants", revoking.status());
    return revoking.status();
  }
  for (const lite::v1::Grant& g : *revoking) {
    if (manager_recovering) {
      lite::v1::RestoreGrantResponse resp;
      const absl::Status s = RestoreGrant(caller, g, /*revoking=*/true, &resp);
      if (!s.ok() && absl::IsUnavailable(s)) return s;
      if (!s.ok()) {
        LITE_LOG_WARNING("revoking grant %#x not restored: %s", g.grant_id(),
                         s.ToString());
      }
    }
    // Ack asked in any case: one nothing waits for is ignored.
    revoker_.Revoke(g.grant_id(), g.holder_incarnation(), /*ack=*/true);
  }
  for (const lite::v1::Grant& g : *grants) {
    if (!manager_recovering) {
      revoke(g, absl::FailedPreconditionError(
                    "the manager's recovery window is over"));
      continue;
    }
    lite::v1::RestoreGrantResponse resp;
    const absl::Status s = RestoreGrant(caller, g, /*revoking=*/false, &resp);
    switch (s.code()) {
      case absl::StatusCode::kOk:
        if (resp.revoked()) {
          // Its LMR was freed before the manager restarted.
          revoker_.Revoke(g.grant_id(), g.holder_incarnation(), /*ack=*/true);
          break;
        }
        counters_.Add("agent.grants_restored");
        break;
      // The manager will not take this grant back (recovery ended, the mode
      // does not allow it, or the id is taken): lite.ko must not keep it.
      // (If FAILED_PRECONDITION meant a stale incarnation, the session will
      // be refused and the next Join revokes everything anyway.)
      case absl::StatusCode::kFailedPrecondition:
      case absl::StatusCode::kPermissionDenied:
      case absl::StatusCode::kAlreadyExists:
      case absl::StatusCode::kInvalidArgument:
        revoke(g, s);
        break;
      default:
        return absl::Status(
            s.code(), absl::StrFormat("restoring grant %#x: %s", g.grant_id(),
                                      s.message()));
    }
  }
  return absl::OkStatus();
}

}  // namespace lite::agent
