#include "controlplane/audit.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/log/log.h"

namespace lite::controlplane {
namespace {

// A caller name printed bare when it cannot be mistaken for anything else
// (what cmd/litecerts issues), quoted otherwise.
std::string CallerField(absl::string_view caller) {
  if (caller.empty() || caller.size() > kMaxQuotedBytes) return Quoted(caller);
  for (char c : caller) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '.' &&
        c != '-' && c != '_' && c != '@' && c != '(' && c != ')') {
      return Quoted(caller);
    }
  }
  return std::string(caller);
}

RefusalLimiter& Limiter() {
  static RefusalLimiter* const limiter =
      new RefusalLimiter(kRefusalInterval, kMaxRefusalPeers);
  return *limiter;
}

}  // namespace

std::string Quoted(absl::string_view text) {
  if (text.size() <= kMaxQuotedBytes) {
    return absl::StrCat("\"", absl::CHexEscape(text), "\"");
  }
  return absl::StrCat("\"", absl::CHexEscape(text.substr(0, kMaxQuotedBytes)),
                      "\"...(", text.size(), " bytes)");
}

void Audit(absl::string_view caller, absl::string_view method,
           absl::string_view fields, const absl::Status& outcome) {
  LITE_LOG_INFO("audit: %s %s %s -> %s", CallerField(caller), method, fields,
                absl::StatusCodeToString(outcome.code()));
}

std::string PeerHost(absl::string_view peer) {
  const size_t colon = peer.rfind(':');
  const size_t bracket = peer.rfind(']');
  // "ipv4:a.b.c.d:port", "ipv6:[addr]:port": cut the last ":port"; a peer
  // without one ("unix:/path") stays as it is.
  if (colon == absl::string_view::npos || colon == peer.find(':') ||
      (bracket != absl::string_view::npos && colon < bracket)) {
    return std::string(peer.substr(0, kMaxQuotedBytes));
  }
  return std::string(peer.substr(0, std::min(colon, kMaxQuotedBytes)));
}

void AuditRefused(absl::string_view caller, absl::string_view peer,
                  absl::string_view method, const absl::Status& outcome) {
  const std::string host = PeerHost(peer);
  // A certificate holder is one peer wherever it connects from; a caller
  // without a name is known only by its address.
  const bool named = !caller.empty() && caller[0] != '(';
  std::optional<RefusalLimiter::Verdict> verdict =
      Limiter().Note(named ? caller : absl::string_view(host), absl::Now());
  if (!verdict.has_value()) return;
  std::string more;
  if (verdict->skipped > 0) {
    more = absl::StrCat(
        " (", verdict->skipped, " more refused from ",
        verdict->key == RefusalLimiter::kOtherPeers ? "other peers" : "it",
        " since)");
  }
  LITE_LOG_INFO("audit: %s %s from %s -> %s%s", CallerField(caller), method,
                Quoted(host), absl::StatusCodeToString(outcome.code()), more);
}

std::optional<RefusalLimiter::Verdict> RefusalLimiter::Note(
    absl::string_view peer, absl::Time now) {
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(peer);
  if (it == entries_.end()) {
    // Peers kept apart: all entries but the shared one, at most
    // max_peers_ - 1 so that the shared one always has its slot.
    auto apart = [&] {
      return entries_.size() - entries_.contains(kOtherPeers);
    };
    if (apart() + 1 >= max_peers_) SweepLocked(now);
    it = apart() + 1 >= max_peers_
             ? entries_.try_emplace(std::string(kOtherPeers)).first
             : entries_.try_emplace(std::string(peer)).first;
  }
  Entry& entry = it->second;
  if (now - entry.last_logged < interval_) {
    ++entry.skipped;
    return std::nullopt;
  }
  Verdict verdict{it->first, entry.skipped};
  entry.last_logged = now;
  entry.skipped = 0;
  return verdict;
}

void RefusalLimiter::SweepLocked(absl::Time now) {
  uint64_t orphaned = 0;
  for (auto it = entries_.begin(); it != entries_.end();) {
    auto next = std::next(it);
    if (it->first != kOtherPeers && now - it->second.last_logged >= interval_) {
      orphaned += it->second.skipped;
      entries_.erase(it);
    }
    it = next;
  }
  if (orphaned > 0) entries_[kOtherPeers].skipped += orphaned;
}

size_t RefusalLimiter::peers() const {
  absl::MutexLock lock(&mu_);
  return entries_.size();
}

}  // namespace lite::controlplane
