// The manager's audit trail: one log line per mutating call (Join, Leave,
// RegisterLmr, AllocLmr, MapLmr, UnmapLmr, FreeLmr, RestoreGrant, DrainNode,
// EvictNode), refused ones included:
//   audit: n1 MapLmr node=3 name="kv" uid=1000 access=read -> OK
// The caller is the name its certificate proved ("(insecure)" under
// --insecure, "(unauthenticated)" without a certificate). Strings from the
// wire are quoted, C-escaped and cut to kMaxQuotedBytes, so a line cannot be
// forged, carry terminal escapes or grow with the request; memory keys and
// addresses are never logged.
//
// A call whose caller has no certificate, or a certificate without the role
// the call needs, is logged by AuditRefused with no request field at all
// (nothing such a caller chooses reaches the log), at most once per peer per
// kRefusalInterval with the number of refusals folded into it: a flood of
// refused calls cannot flood the journal and push real audit lines out.
#ifndef LITE_CONTROLPLANE_AUDIT_H_
#define LITE_CONTROLPLANE_AUDIT_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace lite::controlplane {

// The most bytes of one string Quoted shows: above every name (128) and
// free-text field (reasons, 256) the manager accepts.
inline constexpr size_t kMaxQuotedBytes = 256;

// How often one peer's refused calls are logged, and how many peers are
// counted apart (the rest share one entry).
inline constexpr absl::Duration kRefusalInterval = absl::Seconds(10);
inline constexpr size_t kMaxRefusalPeers = 1024;

// `text` quoted and C-escaped: "a\x1b[2J" stays on one inert line. Text
// longer than kMaxQuotedBytes is cut there and followed by its length:
// "aaaa..."...(1048576 bytes).
std::string Quoted(absl::string_view text);

// Logs "audit: <caller> <method> <fields> -> <code>". `fields` must be
// built with Quoted for every string from the wire.
void Audit(absl::string_view caller, absl::string_view method,
           absl::string_view fields, const absl::Status& outcome);

// A call refused because the caller is not identified with the role it
// needs (Authz::Require failed). `peer` is gRPC's peer address
// (ServerContext::peer(), "ipv4:10.0.0.7:51234"); callers are counted by
// their certificate name, or by their address without the port when they
// have none. Logs "audit: <caller> <method> from <host> -> <code>" (and
// "(N more refused since)") when the limiter lets it through.
void AuditRefused(absl::string_view caller, absl::string_view peer,
                  absl::string_view method, const absl::Status& outcome);

// "ipv4:10.0.0.7:51234" -> "ipv4:10.0.0.7", "ipv6:[::1]:5" -> "ipv6:[::1]":
// one client's connections share a key.
std::string PeerHost(absl::string_view peer);

// Decides which refusals are logged: the first from a peer, then at most
// one per `interval`, which carries the count of those not logged since.
// At most `max_peers` peers are kept apart; once full, entries idle for an
// interval are dropped (their unlogged count moves to a shared "(other
// peers)" entry), and a new peer that still finds no room is counted there.
class RefusalLimiter {
 public:
  RefusalLimiter(absl::Duration interval, size_t max_peers)
      : interval_(interval), max_peers_(max_peers) {}

  struct Verdict {
    std::string key;       // the peer, or kOtherPeers
    uint64_t skipped = 0;  // refusals from it not logged since its last line
  };
  static constexpr absl::string_view kOtherPeers = "(other peers)";

  // nullopt: count this refusal and log nothing.
  std::optional<Verdict> Note(absl::string_view peer, absl::Time now);

  size_t peers() const;

 private:
  struct Entry {
    absl::Time last_logged = absl::InfinitePast();
    uint64_t skipped = 0;
  };
  void SweepLocked(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const absl::Duration interval_;
  const size_t max_peers_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, Entry> entries_ ABSL_GUARDED_BY(mu_);
};

}  // namespace lite::controlplane

#endif  // LITE_CONTROLPLANE_AUDIT_H_
