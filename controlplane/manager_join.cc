// ManagerState: joining. A Join admits a new node, or a node restoring the
// identity it proves with the manager's token (its id and incarnation
// after a manager restart), and answers with the members and the pair
// secrets the node needs. Membership otherwise is in manager_state.cc.
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/log/log.h"
#include "common/names/names.h"
#include "common/status/macros.h"
#include "common/text/inert.h"
#include "controlplane/manager_state.h"
#include "controlplane/manager_util.h"
#include "controlplane/validation.h"

namespace lite::controlplane {

namespace {

// How far above the highest node id issued a restored identity's id may
// be: every id of a restarted cluster comes back, in any order, while
// the first ones raise the highest (RestoreRefusalLocked).
constexpr uint64_t kRestoreIdMargin = 65536;

}  // namespace

using lite::v1::Event;
using lite::v1::FailureCause;
using lite::v1::Member;

absl::StatusOr<lite::v1::JoinResponse> ManagerState::Join(
    const lite::v1::JoinRequest& request) {
  LITE_ASSIGN_OR_RETURN(const std::string wire, JoinWire(request));
  lite::v1::JoinResponse response;
  if (!response.ParseFromString(wire)) {
    return absl::InternalError("JoinResponse did not parse back");
  }
  return response;
}

absl::StatusOr<std::string> ManagerState::JoinWire(
    const lite::v1::JoinRequest& request) {
  LITE_RETURN_IF_ERROR(
      names::ValidateNodeName("node_name", request.node_name()));
  LITE_ASSIGN_OR_RETURN(
      const std::string address,
      CanonicalRdmaAddress("rdma_address", request.rdma_address()));
  const bool restore = request.has_restore();
  if (restore) {
    if (request.restore().node_id() == 0 ||
        request.restore().incarnation() == 0) {
      return absl::InvalidArgumentError(
          "restore is set but its node_id or incarnation is 0; leave restore "
          "unset for a node without an identity");
    }
    if (request.restore().incarnation() ==
        std::numeric_limits<uint64_t>::max()) {
      return absl::InvalidArgumentError(
          "restore.incarnation is 2^64-1, which cannot be incremented");
    }
  }

  // Checked with the cluster key alone, before the lock: whatever Store the
  // manager runs on, and whether or not it remembers the name.
  const bool token_verified =
      restore &&
      pair_secrets_->VerifyIdentityToken(
          request.node_name(),
          PairEnd{request.restore().node_id(), request.restore().incarnation()},
          request.restore().token());

  std::vector<PairEnd> peers;
  PairEnd self;
  absl::StatusOr<std::string> wire;
  {
    Locked lock(this);
    wire = AdmitLocked(request, address, token_verified, &peers, &self);
  }
  if (!wire.ok()) return wire.status();
  // The secrets of this node's pairs with the members listed, derived
  // without holding the lock (a join storm of N nodes derives N^2/2). Later
  // members come with their MemberJoined, through the session.
  wire->reserve(wire->size() + peers.size() * 56);
  for (const PairEnd& peer : peers) {
    AppendPeerSecretField(&*wire,
                          lite::v1::JoinResponse::kPeerSecretsFieldNumber, peer,
                          pair_secrets_->Derive(self, peer));
  }
  return wire;
}

std::string ManagerState::RestoreRefusalLocked(
    const lite::v1::JoinRequest& request, bool token_verified) const {
  const lite::v1::NodeIdentity& restore = request.restore();
  if (!token_verified) {
    // Another name's identity, another incarnation (the token covers it,
    // so an older one is refused too), or a token from a manager with
    // another cluster key (no --pair_key_file: a new key at each start).
    return restore.token().empty()
               ? "it carries no identity token"
               : "its identity token is not this manager's for this name, "
                 "node id and incarnation";
  }
  // A token is proof enough; the bound keeps even a valid one (a leaked
  // key) from using up the id space.
  const uint64_t highest = store_->HighestNodeId();
  if (restore.node_id() > highest + kRestoreIdMargin) {
    return absl::StrCat("node id ", restore.node_id(), " is more than ",
                        kRestoreIdMargin, " above the highest id issued (",
                        highest, ")");
  }
  std::optional<Member> holder = store_->GetNode(restore.node_id());
  if (holder.has_value()) {
    return absl::StrCat("node id ", restore.node_id(), " is held by ",
                        NodeLabel(*holder));
  }
  return "";
}

absl::Status ManagerState::CheckAddressLocked(
    const std::string& address, std::optional<uint32_t> known_id) const {
  // Pinned: an address recorded for a name stays that name's while its
  // record is kept, alive or departed, so that no node can take a down
  // node's address and keep it from rejoining (review cp L8). The name
  // itself may move to another address, which frees the old one.
  const std::optional<uint32_t> holder = store_->FindNodeIdByAddress(address);
  if (!holder.has_value() || holder == known_id) return absl::OkStatus();
  const Member node = *store_->GetNode(*holder);
  if (live_.contains(*holder)) {
    return absl::AlreadyExistsError(
        absl::StrCat("rdma_address ", address, " is already used by live ",
                     NodeLabel(node), "; give this node its own address"));
  }
  return absl::AlreadyExistsError(absl::StrCat(
      "rdma_address ", address, " is ", NodeLabel(node), "'s (",
      NodeStateName(node.state()),
      "), which keeps it until it joins from another address or its record "
      "is forgotten (the oldest departed records go past "
      "--max_departed_records); give this node its own address"));
}

absl::StatusOr<std::string> ManagerState::AdmitLocked(
    const lite::v1::JoinRequest& request, const std::string& address,
    bool token_verified, std::vector<PairEnd>* peers, PairEnd* self) {
  const bool restore = request.has_restore();
  LITE_RETURN_IF_ERROR(CheckRunningLocked());
  const absl::Time now = clock_->Now();
  const std::optional<uint32_t> known_id =
      store_->FindNodeId(request.node_name());
  if (!known_id.has_value()) LITE_RETURN_IF_ERROR(CheckNodeRoomLocked());
  LITE_RETURN_IF_ERROR(CountJoinLocked(request.node_name(), now));
  LITE_RETURN_IF_ERROR(CheckAddressLocked(address, known_id));

  Member member;
  bool restored = false;
  if (known_id.has_value()) {
    const Member previous = *store_->GetNode(*known_id);
    uint64_t floor = previous.incarnation();
    if (restore && request.restore().node_id() == *known_id) {
      floor = std::max(floor, request.restore().incarnation());
    }
    if (floor == std::numeric_limits<uint64_t>::max()) {
      return absl::FailedPreconditionError(absl::StrCat(
          NodeLabel(previous), " has used every incarnation number"));
    }
    member = previous;
    member.set_incarnation(floor + 1);
    if (live_.contains(*known_id)) {
      EndIncarnationLocked(
          *known_id, /*left=*/false, lite::v1::FAILURE_CAUSE_SUPERSEDED,
          absl::StrCat("the node joined again as incarnation ", floor + 1));
    }
  } else if (const std::string refusal =
                 restore ? RestoreRefusalLocked(request, token_verified) : "";
             restore && refusal.empty()) {
    member.set_node_id(request.restore().node_id());
    member.set_incarnation(request.restore().incarnation());
    restored = true;
  } else {
    if (recovering_) {
      // Ids are counted from 1 again after a restart: a new name admitted
      // now could be given the id of a node that has not restored yet, and
      // then re-register that node's LMR ids as its own (review cp H1).
      return absl::UnavailableError(absl::StrCat(
          "litemgr restarted and keeps node ids for the nodes it had for ",
          absl::ToInt64Milliseconds(recovery_end_ - now),
          " ms more (--recovery_window); a node joins as new only after "
          "that",
          restore ? absl::StrCat(" (its restore was refused: ", refusal, ")")
                  : std::string()));
    }
    if (restore) {
      // Joining as new is safe: a fresh id, and pair secrets for it only.
      LITE_LOG_WARNING(
          "node '%s' asked to restore node %d incarnation %d, refused (%s); "
          "it joins as a new node",
          text::EscapeForTerminal(request.node_name()),
          request.restore().node_id(), request.restore().incarnation(),
          refusal);
    }
    const uint32_t node_id = store_->NextNodeId();
    if (node_id == 0) {
      return absl::ResourceExhaustedError(
          "every node id is taken; this cluster cannot admit new node names");
    }
    member.set_node_id(node_id);
    member.set_incarnation(1);
  }
  member.set_node_name(request.node_name());
  member.set_rdma_address(address);
  member.set_state(lite::v1::NODE_STATE_ALIVE);
  member.set_joined_at_unix_ms(absl::ToUnixMillis(now));
  member.clear_lease_remaining_ms();
  member.clear_session_open();
  store_->PutNode(member);
  NoteNodeRecordLocked(member.node_id(), /*departed=*/false, now);
  if (restored) store_->RaiseNodeId(member.node_id());

  // Announce before the node has a session: its own join is part of the
  // snapshot the response carries, not an event it receives.
  Event event;
  *event.mutable_member_joined()->mutable_member() = member;
  events_.Emit(std::move(event));

  MembersWireLocked();  // Bring it up to date before adding this member.
  // The members the response lists besides this one, whose pair secrets
  // JoinWire derives: a copy of a flat array, not a walk of live_, since
  // every joiner of a storm takes one under the lock.
  *peers = live_ends_;
  *self = PairEnd{member.node_id(), member.incarnation()};
  Live& live = live_[member.node_id()];
  live.member = member;
  events_.AddSession(member.node_id());
  RenewLeaseLocked(live, now);
  address_owner_[address] = member.node_id();
  AppendMemberWireLocked(member);
  ++counters_.joins;

  // Everything but the members, which are appended pre-encoded (a repeated
  // field's entries may come anywhere in a message).
  lite::v1::JoinResponse response;
  response.set_node_id(member.node_id());
  response.set_incarnation(member.incarnation());
  response.set_restored(restored);
  response.set_identity_token(pair_secrets_->IdentityToken(
      member.node_name(), PairEnd{member.node_id(), member.incarnation()}));
  response.set_event_sequence(store_->LastEventSequence());
  response.set_lease_duration_ms(absl::ToInt64Milliseconds(options_.lease));
  response.set_heartbeat_interval_ms(
      std::max<int64_t>(1, absl::ToInt64Milliseconds(options_.lease) /
                               std::max(1, options_.heartbeats_per_lease)));
  response.set_manager_recovering(recovering_);
  if (recovering_) {
    response.set_recovery_remaining_ms(
        std::max<int64_t>(0, absl::ToInt64Milliseconds(recovery_end_ - now)));
  }
  LITE_LOG_INFO("%s joined from %s as incarnation %d%s", NodeLabel(member),
                address, member.incarnation(),
                restored ? " (identity restored)" : "");
  std::string wire = response.SerializeAsString();
  wire.append(MembersWireLocked());
  return wire;
}

}  // namespace lite::controlplane
