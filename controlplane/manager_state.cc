// ManagerState: membership, sessions and time. The event and watch machinery
// is in manager_events.cc, joining in manager_join.cc, the LMR and grant
// operations in manager_lmrs.cc.
#include "controlplane/manager_state.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/log/log.h"
#include "common/names/names.h"
#include "common/status/macros.h"
#include "common/text/inert.h"
#include "controlplane/manager_util.h"
#include "controlplane/validation.h"

namespace lite::controlplane {

namespace {

// ActingAs's name for this thread; null when none.
thread_local const std::string* acting_as = nullptr;

}  // namespace

using lite::v1::Event;
using lite::v1::FailureCause;
using lite::v1::ManagerMessage;
using lite::v1::Member;

ManagerState::ActingAs::ActingAs(const std::string& certificate_name)
    : previous_(acting_as) {
  acting_as = &certificate_name;
}

ManagerState::ActingAs::~ActingAs() { acting_as = previous_; }

absl::Status ManagerState::CheckActingForLocked(const Member& node) {
  if (acting_as == nullptr || node.node_name() == *acting_as) {
    return absl::OkStatus();
  }
  return absl::PermissionDeniedError(absl::StrCat(
      "certificate '", text::EscapeForTerminal(*acting_as),
      "' may act only for its own node, not for node ", node.node_id()));
}

ManagerState::Locked::Locked(ManagerState* state) : state_(state) {
  state_->mu_.Lock();
}

ManagerState::Locked::~Locked() {
  state_->HandleOverflowsLocked();
  // A request sent under this lock may be due before the timer's next tick.
  state_->AddDeadlineLocked(state_->node_requests_.NextDeadline());
  state_->AddDeadlineLocked(state_->fenced_free_.NextTimer());
  std::vector<std::shared_ptr<Outbox>> notify = state_->events_.TakeToNotify();
  std::vector<std::function<void()>> after;
  after.swap(state_->after_unlock_);
  state_->mu_.Unlock();
  for (const auto& outbox : notify) outbox->NotifyReader();
  for (auto& fn : after) fn();
}

namespace {

// A store with nothing in it: agents rebuild a restarted manager's state.
bool StartsRecovering(const ManagerOptions& options, const Store& store) {
  return options.recovery_window > absl::ZeroDuration() && store.Empty();
}

ManagerOptions WithoutPairKey(const ManagerOptions& options) {
  ManagerOptions copy = options;
  PairSecrets::Wipe(&copy.pair_key);
  return copy;
}

}  // namespace

ManagerState::ManagerState(ManagerOptions options, const Clock* clock,
                           std::unique_ptr<Store> store)
    : options_(WithoutPairKey(options)),
      clock_(clock),
      store_(std::move(store)),
      events_(options_, clock_, store_.get()),
      fenced_free_(
          options_, clock_, store_.get(), &events_, &node_requests_,
          [this](uint32_t node_id) { return OpenSessionOfLocked(node_id); },
          StartsRecovering(options_, *store_)),
      lmrs_(options_, clock_, store_.get(), &events_, &node_requests_,
            &fenced_free_, &after_unlock_,
            [this](uint32_t node_id, const std::string& what) {
              auto it = live_.find(node_id);
              return it == live_.end()
                         ? absl::OkStatus()
                         : CheckNotSuspectLocked(it->second, what);
            }),
      services_(options_, clock_, &events_, &node_requests_, &after_unlock_) {
  absl::MutexLock lock(&mu_);
  if (StartsRecovering(options_, *store_)) {
    recovering_ = true;
    recovery_end_ = clock_->Now() + options_.recovery_window;
  }
  // The cluster key: the configured one (--pair_key_file), else the one the
  // store kept, else a new one kept in the store from now on.
  std::string key = options.pair_key;
  if (key.empty()) key = store_->ClusterKey();
  if (key.empty()) {
    absl::StatusOr<std::string> random = PairSecrets::RandomKey();
    if (!random.ok()) {
      LITE_LOG_ERROR("%s", random.status().ToString());
      std::abort();
    }
    key = *std::move(random);
  }
  if (store_->ClusterKey() != key) store_->SetClusterKey(key);
  absl::StatusOr<std::unique_ptr<PairSecrets>> secrets =
      PairSecrets::Create(key);
  // From here the key lives in the keyed HMAC context and in the store
  // (which must keep it for the manager's next start); options_ never held
  // it, and this function's copies are wiped (review cp L14).
  PairSecrets::Wipe(&key);
  PairSecrets::Wipe(&options.pair_key);
  if (!secrets.ok()) {
    // litemgr checks --pair_key_file before it gets here: a programming
    // error, and a manager that cannot make pair secrets must not run.
    LITE_LOG_ERROR("cannot make pair secrets: %s", secrets.status().ToString());
    std::abort();
  }
  pair_secrets_ = *std::move(secrets);
}

ManagerState::~ManagerState() = default;

// ------------------------------------------------------------------ checks

absl::Status ManagerState::ValidateCallerFields(
    const lite::v1::NodeCaller& caller) {
  if (caller.node_id() == 0) {
    return absl::InvalidArgumentError(
        "caller.node_id is 0; pass the node id Join returned");
  }
  if (caller.incarnation() == 0) {
    return absl::InvalidArgumentError(
        "caller.incarnation is 0; pass the incarnation Join returned");
  }
  return absl::OkStatus();
}

absl::Status ManagerState::CheckRunningLocked() const {
  if (shut_down_) {
    return absl::UnavailableError(
        "litemgr is shutting down; retry against the restarted manager");
  }
  return absl::OkStatus();
}

absl::StatusOr<ManagerState::Live*> ManagerState::CheckCallerLocked(
    const lite::v1::NodeCaller& caller) {
  LITE_RETURN_IF_ERROR(CheckRunningLocked());
  std::optional<Member> node = store_->GetNode(caller.node_id());
  if (!node.has_value()) {
    return absl::NotFoundError(absl::StrCat(
        "node ", caller.node_id(),
        " is not a member of this cluster; Join "
        "first (a restarted manager forgets nodes until they join again)"));
  }
  LITE_RETURN_IF_ERROR(CheckActingForLocked(*node));
  auto it = live_.find(caller.node_id());
  const uint64_t live_incarnation =
      it == live_.end() ? 0 : it->second.member.incarnation();
  if (live_incarnation != caller.incarnation()) {
    return StaleIncarnationError(*node, caller.incarnation(), live_incarnation);
  }
  return &it->second;
}

absl::StatusOr<Member> ManagerState::FindNodeLocked(
    uint32_t node_id, const std::string& node_name) const {
  if ((node_id == 0) == node_name.empty()) {
    return absl::InvalidArgumentError(
        "give exactly one of node_id and node_name");
  }
  if (node_id == 0) {
    LITE_RETURN_IF_ERROR(names::ValidateNodeName("node_name", node_name));
    std::optional<uint32_t> id = store_->FindNodeId(node_name);
    if (!id.has_value()) {
      return absl::NotFoundError(
          absl::StrCat("no node named '", node_name,
                       "' has joined this cluster; see ListNodes"));
    }
    node_id = *id;
  }
  std::optional<Member> node = store_->GetNode(node_id);
  if (!node.has_value()) {
    return absl::NotFoundError(absl::StrCat(
        "node ", node_id, " is not a member of this cluster; see ListNodes"));
  }
  return *node;
}

// ------------------------------------------------------------------ time

std::optional<uint64_t> ManagerState::OpenSessionOfLocked(
    uint32_t node_id) const {
  auto it = live_.find(node_id);
  if (it == live_.end() || !it->second.session_open) return std::nullopt;
  return it->second.member.incarnation();
}

void ManagerState::AddDeadlineLocked(absl::Time deadline) {
  if (deadline >= next_tick_) return;
  next_tick_ = deadline;
  if (deadline_listener_) after_unlock_.push_back(deadline_listener_);
}

void ManagerState::RenewLeaseLocked(Live& live, absl::Time now) {
  const uint32_t node_id = live.member.node_id();
  if (live.suspect_since != absl::InfiniteFuture()) RecoverLocked(live, now);
  expiries_.erase({live.lease_expiry, node_id});
  live.lease_expiry = now + options_.lease;
  if (recovering_) {
    // A restarted manager expects every agent to reconnect at once and may
    // fall behind on their heartbeats while it admits them: no lease runs
    // out before the recovery window has, plus one lease.
    live.lease_expiry =
        std::max(live.lease_expiry, recovery_end_ + options_.lease);
  }
  live.last_renewal = now;
  if (live.report_deadline != absl::InfiniteFuture()) DropReportLocked(live);
  expiries_.insert({live.lease_expiry, node_id});
  AddDeadlineLocked(live.lease_expiry);
}

void ManagerState::SetDeadlineListener(std::function<void()> listener) {
  absl::MutexLock lock(&mu_);
  deadline_listener_ = std::move(listener);
}

absl::Time ManagerState::Tick() {
  Locked lock(this);
  if (shut_down_) {
    next_tick_ = absl::InfiniteFuture();
    return next_tick_;
  }
  const absl::Time now = clock_->Now();
  while (!expiries_.empty() && expiries_.begin()->first <= now) {
    // SUSPECT, another probe round, or failed (manager_suspect.cc).
    LeaseExpiredLocked(expiries_.begin()->second, now);
  }
  // Every request with a deadline of its own: its caller gets UNAVAILABLE.
  while (auto due = node_requests_.NextDue(now)) {
    const auto [request_id, kind] = *due;
    node_requests_.End(request_id, NodeRequests::Outcome::kTimeout, now);
    if (kind == NodeRequests::Kind::kAllocateLmrMemory) {
      lmrs_.AllocTimedOut(request_id);
    } else {
      services_.BindTimedOut(request_id);
    }
  }
  FailReportedLocked(now);
  if (recovering_ && now >= recovery_end_) EndRecoveryLocked();

  absl::Time next = fenced_free_.Due(now);
  if (!expiries_.empty()) next = std::min(next, expiries_.begin()->first);
  if (!report_deadlines_.empty()) {
    next = std::min(next, report_deadlines_.begin()->first);
  }
  next = std::min(next, node_requests_.NextDeadline());
  if (recovering_) next = std::min(next, recovery_end_);
  next_tick_ = next;
  return next;
}

void ManagerState::EndRecoveryLocked() {
  recovering_ = false;
  fenced_free_.RecoveryEnded();
  // Grants restored into LMRs that no home re-registered cannot be checked
  // or honoured: revoked.
  const size_t orphans = lmrs_.RevokeOrphans();
  Event event;
  // Set the kind even when no member came back: the event must say what it is.
  event.mutable_recovery_complete();
  for (Member& member : AliveMembersLocked()) {
    *event.mutable_recovery_complete()->add_members() = std::move(member);
  }
  Event compact;
  compact.mutable_recovery_complete()->set_members_omitted(true);
  events_.Emit(std::move(event), nullptr, &compact);
  LITE_LOG_INFO(
      "recovery complete: %d nodes, %d LMRs and %d grants restored from the "
      "agents; %d orphaned grants revoked",
      live_.size(), store_->LmrCount(), store_->GrantCount(), orphans);
}

// ------------------------------------------------------------------ members

std::vector<Member> ManagerState::AliveMembersLocked() const {
  std::vector<Member> members;
  members.reserve(live_.size());
  for (const auto& [node_id, live] : live_) members.push_back(live.member);
  return members;
}

Member ManagerState::DecoratedLocked(const Member& member,
                                     absl::Time now) const {
  Member out = member;
  auto it = live_.find(member.node_id());
  if (it != live_.end() &&
      it->second.member.incarnation() == member.incarnation()) {
    out.set_lease_remaining_ms(std::max<int64_t>(
        0, absl::ToInt64Milliseconds(it->second.lease_expiry - now)));
    out.set_session_open(it->second.session_open);
    if (it->second.suspect_since != absl::InfiniteFuture()) {
      out.set_suspect_since_unix_ms(
          absl::ToUnixMillis(it->second.suspect_since));
    }
  }
  return out;
}

const std::string& ManagerState::MembersWireLocked() {
  if (members_wire_stale_) {
    members_wire_.clear();
    live_ends_.clear();
    for (const auto& [node_id, live] : live_) {
      AppendMemberWireLocked(live.member);
    }
    members_wire_stale_ = false;
  }
  return members_wire_;
}

void ManagerState::AppendMemberWireLocked(const Member& member) {
  lite::v1::JoinResponse one;
  *one.add_members() = member;
  one.AppendToString(&members_wire_);
  live_ends_.push_back(PairEnd{member.node_id(), member.incarnation()});
}

absl::Status ManagerState::Leave(const lite::v1::LeaveRequest& request) {
  LITE_RETURN_IF_ERROR(ValidateCallerFields(request.caller()));
  Locked lock(this);
  LITE_ASSIGN_OR_RETURN(Live * live, CheckCallerLocked(request.caller()));
  EndIncarnationLocked(live->member.node_id(), /*left=*/true,
                       lite::v1::FAILURE_CAUSE_UNSPECIFIED, "left");
  return absl::OkStatus();
}

void ManagerState::EndIncarnationLocked(uint32_t node_id, bool left,
                                        FailureCause cause,
                                        const std::string& reason) {
  auto it = live_.find(node_id);
  if (it == live_.end()) return;
  const Member member = it->second.member;
  const std::string label = NodeLabel(member);

  // Announce first, while the node is still live, so that its own session
  // (if it still listens) learns that its incarnation is over.
  Event event;
  if (left) {
    auto* m = event.mutable_member_left();
    m->set_node_id(node_id);
    m->set_node_name(member.node_name());
    m->set_incarnation(member.incarnation());
  } else {
    auto* m = event.mutable_member_failed();
    m->set_node_id(node_id);
    m->set_node_name(member.node_name());
    m->set_incarnation(member.incarnation());
    m->set_cause(cause);
    m->set_reason(reason);
  }
  events_.Emit(std::move(event));

  Live live = std::move(live_.at(node_id));
  DropProbesLocked(live);
  live_.erase(node_id);
  members_wire_stale_ = true;
  expiries_.erase({live.lease_expiry, node_id});
  report_deadlines_.erase({live.report_deadline, node_id});
  auto owner = address_owner_.find(member.rdma_address());
  if (owner != address_owner_.end() && owner->second == node_id) {
    address_owner_.erase(owner);
  }
  events_.EndSession(
      node_id,
      left ? absl::OkStatus()
           : absl::FailedPreconditionError(absl::StrCat(
                 label, " incarnation ", member.incarnation(),
                 " was declared failed (", lite::v1::FailureCause_Name(cause),
                 ": ", reason, "); Join again")),
      /*drain=*/true);

  Member record = member;
  record.set_state(left ? lite::v1::NODE_STATE_LEFT
                        : lite::v1::NODE_STATE_FAILED);
  store_->PutNode(record);

  // Its LMRs go away with it, announced, with every grant into them; its
  // own grants are dropped; allocations on it fail.
  const LmrRegistry::NodeEndedCounts lmrs =
      lmrs_.NodeEnded(node_id, left, label);
  // Its revoked grants into RELEASING LMRs: acknowledged by its end.
  fenced_free_.HolderEnded({node_id, member.incarnation()});
  // Its RPC services end with it (their rings were its memory), and the
  // binds it was asked for will never be answered.
  services_.NodeEnded(node_id, absl::UnavailableError(absl::StrCat(
                                   label, (left ? " left" : " failed"),
                                   " before answering a bind to its service")));

  if (left) {
    ++counters_.leaves;
  } else {
    ++counters_.failures;
    ++counters_.failures_by_cause[cause];
  }
  // Counted once its LMRs and grants are gone (a record they refer to is
  // never forgotten).
  NoteNodeRecordLocked(node_id, /*departed=*/true, clock_->Now());
  LITE_LOG_INFO(
      "%s incarnation %d %s%s; %d LMRs and %d grants into them revoked, %d "
      "held grants dropped",
      label, member.incarnation(), left ? "left" : "failed: ",
      left ? ""
           : absl::StrCat(lite::v1::FailureCause_Name(cause), ": ",
                          text::EscapeForTerminal(reason)),
      lmrs.lmrs, lmrs.revoked, lmrs.dropped);
}

// ------------------------------------------------------------------ sessions

absl::StatusOr<OpenedSession> ManagerState::OpenSession(
    const lite::v1::Heartbeat& first) {
  if (first.node_id() == 0 || first.incarnation() == 0) {
    return absl::InvalidArgumentError(
        "the first heartbeat has node_id or incarnation 0; send the node id "
        "and incarnation Join returned");
  }
  Locked lock(this);
  LITE_RETURN_IF_ERROR(CheckRunningLocked());
  std::optional<Member> node = store_->GetNode(first.node_id());
  if (!node.has_value()) {
    return absl::NotFoundError(absl::StrCat(
        "node ", first.node_id(),
        " is not a member of this cluster; Join first (a restarted manager "
        "forgets nodes until they join again)"));
  }
  LITE_RETURN_IF_ERROR(CheckActingForLocked(*node));
  auto it = live_.find(first.node_id());
  const uint64_t live_incarnation =
      it == live_.end() ? 0 : it->second.member.incarnation();
  if (live_incarnation != first.incarnation()) {
    return StaleIncarnationError(*node, first.incarnation(), live_incarnation);
  }
  Live& live = it->second;
  if (live.session_opened) {
    return absl::FailedPreconditionError(absl::StrCat(
        "a session was already opened for ", NodeLabel(live.member),
        " incarnation ", live.member.incarnation(),
        "; a session cannot be reopened: Join again"));
  }
  live.session_opened = true;
  live.session_open = true;
  events_.SetCompact(live.member.node_id(),
                     first.accept_compact_recovery_complete());
  const absl::Time now = clock_->Now();
  RenewLeaseLocked(live, now);
  ++counters_.heartbeats;
  services_.NoteStats(live.member.node_id(), first);
  ManagerMessage ack;
  ack.mutable_heartbeat_ack()->set_heartbeat_seq(first.heartbeat_seq());
  ack.mutable_heartbeat_ack()->set_lease_remaining_ms(
      absl::ToInt64Milliseconds(live.lease_expiry - now));
  events_.SendTo(live.member.node_id(), std::move(ack));
  OpenedSession opened;
  opened.binding.node_id = first.node_id();
  opened.binding.incarnation = first.incarnation();
  opened.outbox = events_.OutboxOf(live.member.node_id());
  return opened;
}

absl::Status ManagerState::Heartbeat(const SessionBinding& binding,
                                     const lite::v1::Heartbeat& heartbeat) {
  if (heartbeat.node_id() != binding.node_id ||
      heartbeat.incarnation() != binding.incarnation) {
    return absl::InvalidArgumentError(absl::StrCat(
        "heartbeat names node ", heartbeat.node_id(), " incarnation ",
        heartbeat.incarnation(), ", but this session belongs to node ",
        binding.node_id, " incarnation ", binding.incarnation));
  }
  Locked lock(this);
  LITE_RETURN_IF_ERROR(CheckBindingLocked(binding));
  Live& live = live_.at(binding.node_id);
  const absl::Time now = clock_->Now();
  RenewLeaseLocked(live, now);
  ++counters_.heartbeats;
  services_.NoteStats(live.member.node_id(), heartbeat);
  ManagerMessage ack;
  ack.mutable_heartbeat_ack()->set_heartbeat_seq(heartbeat.heartbeat_seq());
  ack.mutable_heartbeat_ack()->set_lease_remaining_ms(
      absl::ToInt64Milliseconds(live.lease_expiry - now));
  events_.SendTo(live.member.node_id(), std::move(ack));
  return absl::OkStatus();
}

void ManagerState::SessionEnded(const SessionBinding& binding,
                                const absl::Status& why) {
  Locked lock(this);
  if (shut_down_) return;
  auto it = live_.find(binding.node_id);
  if (it == live_.end() ||
      it->second.member.incarnation() != binding.incarnation) {
    return;  // Already over (left, failed, superseded).
  }
  it->second.session_open = false;
  EndIncarnationLocked(
      binding.node_id, /*left=*/false, lite::v1::FAILURE_CAUSE_SESSION_CLOSED,
      why.ok() ? std::string("the agent closed its session without Leave")
               : absl::StrCat("session ended: ", why.ToString()));
}

void ManagerState::Shutdown() {
  Locked lock(this);
  if (shut_down_) return;
  shut_down_ = true;
  const absl::Status bye = absl::UnavailableError(
      "litemgr is shutting down; Join again when it is back");
  events_.CloseAll(bye);
  lmrs_.FailAllAllocs(absl::UnavailableError(
      "litemgr shut down before the home node answered"));
  services_.FailAllBinds(absl::UnavailableError(
      "litemgr shut down before the server node answered"));
}

bool ManagerState::recovering() const {
  absl::MutexLock lock(&mu_);
  return recovering_;
}

uint64_t ManagerState::last_event_sequence() const {
  absl::MutexLock lock(&mu_);
  return store_->LastEventSequence();
}

std::optional<uint32_t> ManagerState::NodeIdOf(
    const std::string& node_name) const {
  absl::MutexLock lock(&mu_);
  return store_->FindNodeId(node_name);
}

// ------------------------------------------------------------------ listings

absl::StatusOr<lite::v1::ListNodesResponse> ManagerState::ListNodes(
    const lite::v1::ListNodesRequest& request) const {
  LITE_ASSIGN_OR_RETURN(const Page page,
                        ParsePage(request.page_size(), request.page_token()));
  if (page.after_id > std::numeric_limits<uint32_t>::max()) {
    return absl::InvalidArgumentError(
        "page_token is not one this manager issued for ListNodes");
  }
  absl::MutexLock lock(&mu_);
  LITE_RETURN_IF_ERROR(CheckRunningLocked());
  const absl::Time now = clock_->Now();
  lite::v1::ListNodesResponse response;
  std::vector<Member> nodes =
      store_->ListNodes(static_cast<uint32_t>(page.after_id), page.size + 1);
  const bool more = static_cast<int>(nodes.size()) > page.size;
  if (more) nodes.pop_back();
  for (const Member& node : nodes) {
    *response.add_nodes() = DecoratedLocked(node, now);
  }
  if (more) response.set_next_page_token(PageToken(nodes.back().node_id()));
  response.set_event_sequence(store_->LastEventSequence());
  return response;
}

absl::StatusOr<lite::v1::DrainNodeResponse> ManagerState::DrainNode(
    const lite::v1::DrainNodeRequest& request) {
  Locked lock(this);
  LITE_RETURN_IF_ERROR(CheckRunningLocked());
  LITE_ASSIGN_OR_RETURN(Member node,
                        FindNodeLocked(request.node_id(), request.node_name()));
  const bool draining = !request.cancel();
  if (node.draining() != draining) {
    node.set_draining(draining);
    store_->PutNode(node);
    auto it = live_.find(node.node_id());
    if (it != live_.end()) {
      it->second.member.set_draining(draining);
      members_wire_stale_ = true;
    }
    Event event;
    auto* changed = event.mutable_member_drain_changed();
    changed->set_node_id(node.node_id());
    changed->set_node_name(node.node_name());
    changed->set_draining(draining);
    events_.Emit(std::move(event));
    LITE_LOG_INFO("%s %s", NodeLabel(node),
                  draining ? "is draining" : "is back in service");
  }
  lite::v1::DrainNodeResponse response;
  *response.mutable_member() = DecoratedLocked(node, clock_->Now());
  return response;
}

absl::StatusOr<lite::v1::EvictNodeResponse> ManagerState::EvictNode(
    const lite::v1::EvictNodeRequest& request) {
  LITE_RETURN_IF_ERROR(
      text::ValidateInertText("reason", request.reason(), kMaxReasonLength));
  Locked lock(this);
  LITE_RETURN_IF_ERROR(CheckRunningLocked());
  LITE_ASSIGN_OR_RETURN(const Member node,
                        FindNodeLocked(request.node_id(), request.node_name()));
  if (!live_.contains(node.node_id())) {
    return absl::FailedPreconditionError(
        absl::StrCat(NodeLabel(node), " is ", NodeStateName(node.state()),
                     ", not alive; there is nothing to evict"));
  }
  EndIncarnationLocked(
      node.node_id(), /*left=*/false, lite::v1::FAILURE_CAUSE_EVICTED,
      request.reason().empty()
          ? std::string("evicted by an operator")
          : absl::StrCat("evicted by an operator: ", request.reason()));
  lite::v1::EvictNodeResponse response;
  // Its record as it ended; with --max_departed_records 0 the store has
  // forgotten it already.
  std::optional<Member> ended = store_->GetNode(node.node_id());
  if (!ended.has_value()) {
    ended = node;
    ended->set_state(lite::v1::NODE_STATE_FAILED);
  }
  *response.mutable_member() = *std::move(ended);
  return response;
}

}  // namespace lite::controlplane
