// Pair secrets: what two nodes' lite.ko use to prove to each other that they
// are lite.ko of the members they claim to be (issue #16,
// docs/kernel-peers.md). Each pair of current incarnations has its own
// 32-byte secret, derived from the cluster key the manager keeps:
//
//   secret = HMAC-SHA256(cluster_key, "lite-pair-v1" || lower || higher)
//
// where lower and higher are the pair's two (node id as 4 bytes, incarnation
// as 8 bytes, both big-endian) in node id order. Derived rather than drawn:
// nothing per pair is stored, both ends get the same secret whichever of
// them asks, a new incarnation of either node changes it by itself, and a
// manager that restarts with the same key (--pair_key_file, or a persistent
// Store) hands out the same secrets for the identities it adopts.
#ifndef LITE_CONTROLPLANE_PAIR_SECRETS_H_
#define LITE_CONTROLPLANE_PAIR_SECRETS_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

// OpenSSL's types stay out of the header.
struct evp_mac_ctx_st;

namespace lite::controlplane {

// One end of a pair: a node's id and incarnation.
struct PairEnd {
  uint32_t node_id = 0;
  uint64_t incarnation = 0;
};

class PairSecrets {
 public:
  static constexpr size_t kKeyBytes = 32;
  static constexpr size_t kSecretBytes = 32;

  // `cluster_key` must be kKeyBytes long (ValidateClusterKey).
  static absl::StatusOr<std::unique_ptr<PairSecrets>> Create(
      absl::string_view cluster_key);
  ~PairSecrets();
  PairSecrets(const PairSecrets&) = delete;
  PairSecrets& operator=(const PairSecrets&) = delete;

  // The secret of the pair {a, b}: the same for (a, b) and (b, a).
  // Thread-safe.
  std::string Derive(PairEnd a, PairEnd b) const;

  // The identity token of node `name` as `end` (JoinResponse.identity_token):
  //
  //   HMAC-SHA256(cluster_key, "lite-id-v1" || len(name) || name || end)
  //
  // with `end` encoded as for pair secrets. A restarted manager adopts a
  // restored identity only when its token verifies for the certificate's
  // name: nothing but the key is needed to check it, so the check is the
  // same whatever Store the manager runs on. Thread-safe.
  static constexpr size_t kTokenBytes = 32;
  std::string IdentityToken(absl::string_view name, PairEnd end) const;
  // True when `token` is IdentityToken(name, end); compared in constant
  // time.
  bool VerifyIdentityToken(absl::string_view name, PairEnd end,
                           absl::string_view token) const;

  // kKeyBytes from the system's CSPRNG.
  static absl::StatusOr<std::string> RandomKey();
  // INVALID_ARGUMENT unless kKeyBytes long and not one byte repeated (a
  // key of zeros is a mistake, not a key).
  static absl::Status ValidateClusterKey(absl::string_view key,
                                         absl::string_view what);
  // Reads --pair_key_file: kKeyBytes raw, or 2 * kKeyBytes hex digits with
  // an optional newline (`openssl rand -hex 32 > FILE`). Refuses a file that
  // its group or others may read or write, as ssh does with private keys.
  static absl::StatusOr<std::string> LoadKeyFile(const std::string& path);

  // Overwrites *key's bytes (OPENSSL_cleanse, which the compiler may not
  // drop) and empties it: transient copies of the cluster key must not
  // outlive their use in a heap a core dump or a later bug could read.
  static void Wipe(std::string* key);

 private:
  explicit PairSecrets(evp_mac_ctx_st* keyed);
  // HMAC-SHA256 of `message` under the cluster key; aborts if it fails.
  std::string Mac(const unsigned char* message, size_t length) const;

  // Keyed once. Each thread derives with its own copy, re-initialized
  // without the key schedule (four times faster than keying anew): a join
  // storm derives N^2 secrets on every gRPC thread at once, and one shared
  // context behind a lock made them queue.
  mutable absl::Mutex mu_;
  evp_mac_ctx_st* const keyed_ ABSL_PT_GUARDED_BY(mu_);
  // Tells the threads' copies of different instances apart.
  const uint64_t instance_;
};

}  // namespace lite::controlplane

#endif  // LITE_CONTROLPLANE_PAIR_SECRETS_H_
