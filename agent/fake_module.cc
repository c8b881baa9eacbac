#include "agent/fake_module.h"

#include <openssl/sha.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "agent/counters.h"
#include "common/names/names.h"
#include "common/status/macros.h"

namespace lite::agent {
namespace {

constexpr size_t kMaxCalls = 10000;
constexpr uint64_t kPageBytes = 4096;

}  // namespace

FakeModule::FakeModule(FakeModuleOptions options) : options_(options) {}

void FakeModule::RecordCall(std::string call) {
  calls_.push_back(std::move(call));
  while (calls_.size() > kMaxCalls) calls_.pop_front();
}

std::vector<lite::v1::LmrChunk> FakeModule::MakeChunks(uint64_t size_bytes) {
  std::vector<lite::v1::LmrChunk> chunks;
  uint64_t left = size_bytes;
  while (left > 0) {
    uint64_t len = std::min(left, options_.max_chunk_bytes);
    lite::v1::LmrChunk chunk;
    chunk.set_address(next_address_);
    chunk.set_length_bytes(len);
    chunks.push_back(chunk);
    // Leave a page-aligned gap so chunks are visibly not contiguous.
    next_address_ += (len + 2 * kPageBytes - 1) / kPageBytes * kPageBytes;
    left -= len;
  }
  return chunks;
}

absl::StatusOr<std::optional<lite::v1::NodeIdentity>>
FakeModule::GetIdentity() {
  absl::MutexLock lock(&mu_);
  return identity_;
}

absl::Status FakeModule::SetIdentity(const lite::v1::NodeIdentity& identity) {
  if (identity.node_id() == 0 || identity.incarnation() == 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("node identity must be nonzero, got id %u "
                        "incarnation %u",
                        identity.node_id(), identity.incarnation()));
  }
  absl::MutexLock lock(&mu_);
  identity_ = identity;
  RecordCall(absl::StrFormat("SetIdentity %u %u", identity.node_id(),
                             identity.incarnation()));
  WritePeersFileLocked();
  return absl::OkStatus();
}

absl::Status FakeModule::AddPeer(const Peer& peer) {
  if (peer.node_id == 0 || peer.incarnation == 0 || peer.rdma_address.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "peer needs a node id, an incarnation and an address, got %u/%u/'%s'",
        peer.node_id, peer.incarnation, peer.rdma_address));
  }
  // lite.ko's rules for names: the shared one, and not this node's own.
  if (!peer.name.empty()) {
    LITE_RETURN_IF_ERROR(names::ValidateNodeName("peer name", peer.name));
    if (peer.name == options_.node_name) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "peer %u is named '%s', this node's name", peer.node_id, peer.name));
    }
  }
  // lite.ko's rule for secrets (LITE_PEER_SECRET_LEN bytes, not all zero).
  if (!peer.secret.empty() &&
      (peer.secret.size() != kPairSecretBytes ||
       std::all_of(peer.secret.begin(), peer.secret.end(),
                   [](char c) { return c == 0; }))) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "peer %u: a pair secret is %d bytes, not all zero; got %d bytes",
        peer.node_id, kPairSecretBytes, peer.secret.size()));
  }
  absl::MutexLock lock(&mu_);
  if (identity_.has_value() && identity_->node_id() == peer.node_id) {
    return absl::InvalidArgumentError(
        absl::StrFormat("node %u is this node, not a peer", peer.node_id));
  }
  auto it = peers_.find(peer.node_id);
  if (it != peers_.end() && it->second.incarnation == peer.incarnation &&
      it->second.rdma_address == peer.rdma_address &&
      it->second.name == peer.name && !peer.secret.empty() &&
      it->second.secret != peer.secret) {
    ++peer_secrets_replaced_;
  }
  peers_[peer.node_id] = peer;
  RecordCall(absl::StrFormat("AddPeer %u %u %s", peer.node_id, peer.incarnation,
                             peer.rdma_address));
  WritePeersFileLocked();
  return absl::OkStatus();
}

std::optional<std::string> FakeModule::PeerSecret(uint32_t node_id) const {
  absl::MutexLock lock(&mu_);
  auto it = peers_.find(node_id);
  if (it == peers_.end()) return std::nullopt;
  return it->second.secret;
}

void FakeModule::WritePeersFileLocked() {
  if (options_.peers_file.empty()) return;
  std::string text;
  if (identity_.has_value()) {
    absl::StrAppend(&text, "self ", identity_->node_id(), " ",
                    identity_->incarnation(), "\n");
  }
  for (const auto& [id, peer] : peers_) {
    std::string digest = "-";
    if (!peer.secret.empty()) {
      unsigned char sha[SHA256_DIGEST_LENGTH];
      SHA256(reinterpret_cast<const unsigned char*>(peer.secret.data()),
             peer.secret.size(), sha);
      digest = absl::BytesToHexString(
          absl::string_view(reinterpret_cast<const char*>(sha), sizeof(sha)));
    }
    absl::StrAppend(&text, "peer ", id, " ", peer.incarnation, " ", digest,
                    "\n");
  }
  // Readers never see half a file: write beside it, then rename over it.
  const std::string tmp = absl::StrCat(options_.peers_file, ".tmp");
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << text;
    if (!out.good()) return;
  }
  std::rename(tmp.c_str(), options_.peers_file.c_str());
}

absl::Status FakeModule::RemovePeer(uint32_t node_id, uint64_t incarnation) {
  absl::MutexLock lock(&mu_);
  auto it = peers_.find(node_id);
  if (it == peers_.end() || it->second.incarnation != incarnation) {
    return absl::NotFoundError(absl::StrFormat("no peer %u with incarnation %u",
                                               node_id, incarnation));
  }
  peers_.erase(it);
  RecordCall(absl::StrFormat("RemovePeer %u %u", node_id, incarnation));
  WritePeersFileLocked();
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Peer>> FakeModule::ListPeers() {
  absl::MutexLock lock(&mu_);
  std::vector<Peer> out;
  for (const auto& [id, peer] : peers_) {
    out.push_back(peer);
    out.back().secret.clear();  // Write-only, as in lite.ko.
  }
  return out;
}

absl::StatusOr<lite::v1::AllocatedLmrMemory> FakeModule::AllocateLmrMemory(
    const lite::v1::AllocateLmrMemory& request) {
  if (request.lmr_id() == 0 || request.size_bytes() == 0) {
    return absl::InvalidArgumentError(
        "AllocateLmrMemory needs a nonzero lmr_id and size_bytes");
  }
  // Outside mu_: lite.ko fills one LMR while it serves everything else.
  if (options_.allocate_delay > absl::ZeroDuration()) {
    absl::SleepFor(options_.allocate_delay);
  }
  absl::MutexLock lock(&mu_);
  if (hosted_.contains(request.lmr_id())) {
    return absl::AlreadyExistsError(
        absl::StrFormat("LMR %#x is already hosted here", request.lmr_id()));
  }
  if (request.size_bytes() > options_.memory_bytes - allocated_bytes_) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "out of LMR memory: %u bytes asked, %u of %u bytes free",
        request.size_bytes(), options_.memory_bytes - allocated_bytes_,
        options_.memory_bytes));
  }
  lite::v1::AllocatedLmrMemory out;
  for (auto& chunk : MakeChunks(request.size_bytes())) {
    *out.add_chunks() = chunk;
  }
  out.set_memory_key(options_.memory_key);
  out.set_read_key(options_.read_key);
  allocated_bytes_ += request.size_bytes();

  lite::v1::Lmr lmr;
  lmr.set_lmr_id(request.lmr_id());
  lmr.set_name(request.name());
  lmr.set_size_bytes(request.size_bytes());
  lmr.set_owner_uid(request.owner_uid());
  lmr.set_owner_gid(request.owner_gid());
  lmr.set_mode(request.mode());
  *lmr.mutable_chunks() = out.chunks();
  lmr.set_memory_key(out.memory_key());
  lmr.set_read_key(out.read_key());
  lmr.set_origin(lite::v1::LMR_ORIGIN_ALLOCATED);
  if (identity_.has_value()) {
    lmr.set_home_node_id(identity_->node_id());
    lmr.set_epoch(identity_->incarnation());
  }
  hosted_[request.lmr_id()] = lmr;
  RecordCall(absl::StrFormat("AllocateLmrMemory %#x %s %u", request.lmr_id(),
                             request.name(), request.size_bytes()));
  return out;
}

absl::Status FakeModule::FreeLmrMemory(uint64_t lmr_id, bool quarantine) {
  absl::MutexLock lock(&mu_);
  auto it = hosted_.find(lmr_id);
  if (it == hosted_.end()) {
    return absl::NotFoundError(
        absl::StrFormat("LMR %#x is not hosted here", lmr_id));
  }
  // Quarantined memory is never handed out again: it stays counted.
  if (quarantine) {
    ++lmrs_quarantined_;
  } else if (it->second.origin() == lite::v1::LMR_ORIGIN_ALLOCATED) {
    allocated_bytes_ -= it->second.size_bytes();
  }
  hosted_.erase(it);
  RecordCall(absl::StrFormat("FreeLmrMemory %#x%s", lmr_id,
                             quarantine ? " quarantine" : ""));
  return absl::OkStatus();
}

absl::Status FakeModule::UpdateHostedLmr(uint64_t lmr_id,
                                         const lite::v1::Lmr& lmr) {
  absl::MutexLock lock(&mu_);
  auto it = hosted_.find(lmr_id);
  if (it == hosted_.end()) {
    return absl::NotFoundError(
        absl::StrFormat("LMR %#x is not hosted here", lmr_id));
  }
  if (lmr.lmr_id() == 0) {
    return absl::InvalidArgumentError("the new LMR record has no lmr_id");
  }
  if (lmr.lmr_id() != lmr_id && hosted_.contains(lmr.lmr_id())) {
    return absl::AlreadyExistsError(
        absl::StrFormat("LMR %#x is already hosted here", lmr.lmr_id()));
  }
  if (lmr.size_bytes() != it->second.size_bytes()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("LMR %#x is %u bytes here, the record says %u", lmr_id,
                        it->second.size_bytes(), lmr.size_bytes()));
  }
  // lite.ko keeps its own chunks and key: they describe memory it owns.
  lite::v1::Lmr updated = lmr;
  *updated.mutable_chunks() = it->second.chunks();
  updated.set_memory_key(it->second.memory_key());
  updated.set_origin(it->second.origin());
  // As LITE_ATTR_RELEASING: a record may set the mark, never clear it.
  if (it->second.state() == lite::v1::LMR_STATE_RELEASING) {
    updated.set_state(lite::v1::LMR_STATE_RELEASING);
  }
  hosted_.erase(it);
  hosted_[updated.lmr_id()] = updated;
  RecordCall(absl::StrFormat("UpdateHostedLmr %#x %#x epoch %u", lmr_id,
                             updated.lmr_id(), updated.epoch()));
  return absl::OkStatus();
}

absl::Status FakeModule::MarkLmrReleasing(uint64_t lmr_id) {
  absl::MutexLock lock(&mu_);
  auto it = hosted_.find(lmr_id);
  if (it == hosted_.end()) {
    return absl::NotFoundError(
        absl::StrFormat("LMR %#x is not hosted here", lmr_id));
  }
  it->second.set_state(lite::v1::LMR_STATE_RELEASING);
  RecordCall(absl::StrFormat("MarkLmrReleasing %#x", lmr_id));
  return absl::OkStatus();
}

absl::StatusOr<std::vector<lite::v1::Lmr>> FakeModule::ListHostedLmrs() {
  absl::MutexLock lock(&mu_);
  std::vector<lite::v1::Lmr> out;
  for (const auto& [id, lmr] : hosted_) out.push_back(lmr);
  return out;
}

absl::Status FakeModule::RevokeGrant(uint64_t grant_id) {
  absl::MutexLock lock(&mu_);
  auto held = grants_.find(grant_id);
  if (held == grants_.end() && !revoked_.contains(grant_id)) {
    return absl::NotFoundError(
        absl::StrFormat("grant %#x is not held here", grant_id));
  }
  if (held != grants_.end()) {
    revoked_[grant_id] = held->second;
    grants_.erase(held);
  }
  if (auto t = revoke_timeouts_.find(grant_id);
      t != revoke_timeouts_.end() && t->second > 0) {
    if (--t->second == 0) revoke_timeouts_.erase(t);
    RecordCall(absl::StrFormat("RevokeGrant %#x ETIMEDOUT", grant_id));
    return absl::DeadlineExceededError(absl::StrFormat(
        "revoking grant %#x: operations still in flight", grant_id));
  }
  revoked_.erase(grant_id);
  RecordCall(absl::StrFormat("RevokeGrant %#x", grant_id));
  return absl::OkStatus();
}

absl::StatusOr<std::vector<lite::v1::Grant>> FakeModule::ListRevokedGrants() {
  absl::MutexLock lock(&mu_);
  std::vector<lite::v1::Grant> out;
  for (const auto& [id, grant] : revoked_) out.push_back(grant);
  return out;
}

void FakeModule::SetRevokeTimeouts(uint64_t grant_id, int times) {
  absl::MutexLock lock(&mu_);
  revoke_timeouts_[grant_id] = times;
}

void FakeModule::InjectLmrLost(const LmrLost& event) {
  absl::MutexLock lock(&mu_);
  inbox_.push_back(event);
}

absl::StatusOr<std::vector<lite::v1::Grant>> FakeModule::ListGrants() {
  absl::MutexLock lock(&mu_);
  std::vector<lite::v1::Grant> out;
  for (const auto& [id, grant] : grants_) out.push_back(grant);
  return out;
}

absl::StatusOr<ModuleMessage> FakeModule::Receive() {
  absl::MutexLock lock(&mu_);
  // Close() wakes this for good, so the wait is bounded by shutdown.
  auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return closed_ || !inbox_.empty();
  };
  if (!ready()) {
    ++blocked_receivers_;
    mu_.Await(absl::Condition(&ready));
    --blocked_receivers_;
  }
  if (closed_) return absl::CancelledError("the module was closed");
  ModuleMessage msg = std::move(inbox_.front());
  inbox_.pop_front();
  return msg;
}

absl::Status FakeModule::CheckReply(const Upcall& upcall,
                                    const UpcallReply& reply) {
  if (!reply.status.ok()) return absl::OkStatus();
  if (upcall.request.index() >= 5) return CheckRpcReply(upcall, reply);
  if (reply.service_id.has_value() || reply.service.has_value() ||
      reply.ring.has_value()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "upcall %u: an LMR upcall's reply carries no service or ring",
        upcall.upcall_id));
  }
  const bool wants_lmr = std::holds_alternative<AllocUpcall>(upcall.request) ||
                         std::holds_alternative<RegisterUpcall>(upcall.request);
  const bool wants_grant = std::holds_alternative<MapUpcall>(upcall.request);
  if (wants_lmr != reply.lmr.has_value() ||
      wants_grant != reply.grant.has_value()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "upcall %u: a successful reply must carry %s", upcall.upcall_id,
        wants_lmr ? "an LMR" : (wants_grant ? "a grant" : "no result")));
  }
  if (wants_grant && grants_.contains(reply.grant->grant_id())) {
    return absl::AlreadyExistsError(absl::StrFormat(
        "grant %#x is already installed", reply.grant->grant_id()));
  }
  if (const auto* reg = std::get_if<RegisterUpcall>(&upcall.request)) {
    if (reply.lmr->lmr_id() == 0 || hosted_.contains(reply.lmr->lmr_id()) ||
        reply.lmr->size_bytes() != reg->size_bytes) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "upcall %u: the registered LMR record does not fit (id %#x, %u "
          "bytes)",
          upcall.upcall_id, reply.lmr->lmr_id(), reply.lmr->size_bytes()));
    }
  }
  return absl::OkStatus();
}

void FakeModule::FailCompletion(uint64_t id, absl::Status status) {
  absl::MutexLock lock(&mu_);
  failed_completions_[id] = std::move(status);
}

absl::Status FakeModule::CompleteUpcall(const UpcallReply& reply) {
  absl::MutexLock lock(&mu_);
  if (auto failed = failed_completions_.find(reply.upcall_id);
      failed != failed_completions_.end()) {
    RecordCall(absl::StrFormat("CompleteUpcall %u failed: %s", reply.upcall_id,
                               failed->second.ToString()));
    pending_.erase(reply.upcall_id);
    return failed->second;
  }
  auto it = pending_.find(reply.upcall_id);
  if (it == pending_.end()) {
    return absl::NotFoundError(
        absl::StrFormat("upcall %u is not pending", reply.upcall_id));
  }
  LITE_RETURN_IF_ERROR(CheckReply(it->second, reply));
  const Upcall& upcall = it->second;
  if (reply.status.ok()) {
    if (const auto* reg = std::get_if<RegisterUpcall>(&upcall.request)) {
      // The pinned memory is hosted under the manager's id from now on.
      lite::v1::Lmr lmr = *reply.lmr;
      lmr.clear_chunks();
      for (const auto& chunk : reg->chunks) *lmr.add_chunks() = chunk;
      lmr.set_memory_key(reg->memory_key);
      lmr.set_origin(lite::v1::LMR_ORIGIN_REGISTERED);
      hosted_[lmr.lmr_id()] = lmr;
    } else if (std::holds_alternative<MapUpcall>(upcall.request)) {
      grants_[reply.grant->grant_id()] = *reply.grant;
    }
  }
  ApplyRpcReply(upcall, reply);
  RecordCall(absl::StrFormat("CompleteUpcall %u %s", reply.upcall_id,
                             absl::StatusCodeToString(reply.status.code())));
  if (reply.status.ok()) {
    ++upcalls_completed_;
  } else {
    ++upcalls_failed_;
  }
  replies_[reply.upcall_id] = reply;
  pending_.erase(it);
  return absl::OkStatus();
}

bool FakeModule::AwaitBlockedReceivers(int count, absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto reached = [this, count]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return blocked_receivers_ >= count;
  };
  return mu_.AwaitWithTimeout(absl::Condition(&reached), timeout);
}

void FakeModule::Close() {
  absl::MutexLock lock(&mu_);
  closed_ = true;
}

absl::StatusOr<std::vector<lite::v1::Counter>> FakeModule::GetCounters() {
  absl::MutexLock lock(&mu_);
  uint64_t hosted_bytes = 0;
  for (const auto& [lmr_id, lmr] : hosted_) hosted_bytes += lmr.size_bytes();
  // Named as lite.ko's where they mean the same (module.lmrs, lmr_bytes,
  // grants, peers), so that the metrics of a fake node read like a real
  // one's (agent/kernel_metrics.cc).
  return std::vector<lite::v1::Counter>{
      MakeCounter("module.grants", grants_.size(),
                  "grants installed for applications on this node"),
      MakeCounter("module.lmr_memory_allocated_bytes", allocated_bytes_,
                  "LMR memory allocated by the module"),
      MakeCounter("module.lmrs", hosted_.size(),
                  "LMRs whose memory this node hosts"),
      MakeCounter("module.lmr_bytes", hosted_bytes,
                  "the sizes of the LMRs this node hosts"),
      MakeCounter("module.peers", peers_.size(), "peers programmed"),
      MakeCounter("module.peers_without_secret",
                  static_cast<uint64_t>(std::count_if(
                      peers_.begin(), peers_.end(),
                      [](const auto& p) { return p.second.secret.empty(); })),
                  "peers programmed without a pair secret (lite.ko with "
                  "peer_auth=1 never connects to them)"),
      MakeCounter("module.peer_secrets_replaced", peer_secrets_replaced_,
                  "pair secrets replaced for a peer that stayed"),
      MakeCounter("module.upcalls_completed", upcalls_completed_,
                  "upcalls answered with success"),
      MakeCounter("module.upcalls_failed", upcalls_failed_,
                  "upcalls answered with an error"),
      MakeCounter("module.upcalls_pending", pending_.size(),
                  "upcalls waiting for the agent's answer"),
      MakeCounter("module.lmrs_quarantined", lmrs_quarantined_,
                  "LMRs freed with quarantine (pages never reused)"),
      MakeCounter("module.grants_revoking", revoked_.size(),
                  "revoked grants still draining"),
  };
}

uint64_t FakeModule::InjectUpcall(const lite::v1::Credentials& credentials,
                                  UpcallRequest request) {
  absl::MutexLock lock(&mu_);
  Upcall upcall;
  upcall.upcall_id = next_upcall_id_++;
  upcall.credentials = credentials;
  if (auto* reg = std::get_if<RegisterUpcall>(&request)) {
    if (reg->chunks.empty()) reg->chunks = MakeChunks(reg->size_bytes);
    if (reg->memory_key == 0) reg->memory_key = options_.memory_key;
  }
  if (const auto* unmap = std::get_if<UnmapUpcall>(&request)) {
    // lite.ko gives a revoked grant back once it drained.
    grants_.erase(unmap->grant_id);
    revoked_.erase(unmap->grant_id);
  }
  const bool pending = InjectRpcLocked(upcall.upcall_id, credentials, &request);
  upcall.request = std::move(request);
  if (pending) pending_[upcall.upcall_id] = upcall;
  inbox_.push_back(std::move(upcall));
  return next_upcall_id_ - 1;
}

void FakeModule::InjectPeerConnectionFailed(const PeerConnectionFailed& event) {
  absl::MutexLock lock(&mu_);
  inbox_.push_back(event);
}

absl::StatusOr<UpcallReply> FakeModule::WaitForReply(uint64_t upcall_id,
                                                     absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto done = [this, upcall_id]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return replies_.contains(upcall_id);
  };
  if (!mu_.AwaitWithTimeout(absl::Condition(&done), timeout)) {
    return absl::DeadlineExceededError(
        absl::StrFormat("no reply to upcall %u within %s", upcall_id,
                        absl::FormatDuration(timeout)));
  }
  return replies_[upcall_id];
}

std::vector<std::string> FakeModule::Calls() const {
  absl::MutexLock lock(&mu_);
  return {calls_.begin(), calls_.end()};
}

}  // namespace lite::agent
