#include "controlplane/pair_secrets.h"

#include <fcntl.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace lite::controlplane {
namespace {

constexpr absl::string_view kLabel = "lite-pair-v1";
// Identity tokens (IdentityToken): another label, so that no token is ever
// a pair secret or the other way round.
constexpr absl::string_view kIdLabel = "lite-id-v1";
constexpr size_t kMaxTokenNameBytes = 255;
// Read at most this much of a key file: a key is 65 bytes at most.
constexpr size_t kMaxKeyFileBytes = 4096;

std::string OpenSslError() {
  const unsigned long err = ERR_get_error();
  if (err == 0) return "unknown OpenSSL error";
  char buf[256];
  ERR_error_string_n(err, buf, sizeof(buf));
  return buf;
}

// This thread's copy of the keyed context of the PairSecrets it used last.
struct ThreadContext {
  uint64_t instance = 0;
  EVP_MAC_CTX* ctx = nullptr;
  ~ThreadContext() { EVP_MAC_CTX_free(ctx); }
};
thread_local ThreadContext thread_context;

std::atomic<uint64_t> next_instance{1};

// The 12 bytes of one end: node id (4) and incarnation (8), big-endian.
constexpr size_t kEndBytes = 12;
unsigned char* PutEnd(unsigned char* out, PairEnd end) {
  for (int shift = 24; shift >= 0; shift -= 8) *out++ = end.node_id >> shift;
  for (int shift = 56; shift >= 0; shift -= 8) {
    *out++ = end.incarnation >> shift;
  }
  return out;
}

}  // namespace

absl::StatusOr<std::unique_ptr<PairSecrets>> PairSecrets::Create(
    absl::string_view cluster_key) {
  if (absl::Status s = ValidateClusterKey(cluster_key, "the cluster key");
      !s.ok()) {
    return s;
  }
  EVP_MAC* mac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
  if (mac == nullptr) {
    return absl::InternalError(
        absl::StrCat("OpenSSL has no HMAC: ", OpenSslError()));
  }
  EVP_MAC_CTX* ctx = EVP_MAC_CTX_new(mac);
  EVP_MAC_free(mac);  // The context keeps its own reference.
  if (ctx == nullptr) {
    return absl::InternalError(
        absl::StrCat("EVP_MAC_CTX_new: ", OpenSslError()));
  }
  char digest[] = "SHA256";
  const OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
      OSSL_PARAM_construct_end()};
  if (EVP_MAC_init(ctx,
                   reinterpret_cast<const unsigned char*>(cluster_key.data()),
                   cluster_key.size(), params) != 1) {
    const std::string why = OpenSslError();
    EVP_MAC_CTX_free(ctx);
    return absl::InternalError(
        absl::StrCat("HMAC-SHA256 cannot be keyed: ", why));
  }
  return std::unique_ptr<PairSecrets>(new PairSecrets(ctx));
}

PairSecrets::PairSecrets(evp_mac_ctx_st* keyed)
    : keyed_(keyed), instance_(next_instance.fetch_add(1)) {}

PairSecrets::~PairSecrets() { EVP_MAC_CTX_free(keyed_); }

std::string PairSecrets::Derive(PairEnd a, PairEnd b) const {
  if (b.node_id < a.node_id) std::swap(a, b);
  unsigned char message[kLabel.size() + 2 * kEndBytes];
  std::memcpy(message, kLabel.data(), kLabel.size());
  PutEnd(PutEnd(message + kLabel.size(), a), b);
  return Mac(message, sizeof(message));
}

std::string PairSecrets::IdentityToken(absl::string_view name,
                                       PairEnd end) const {
  // The name's length first, so that no other (name, end) has this message;
  // names are at most 64 bytes (names::ValidateNodeName), the cap is only a
  // guard for a caller that did not validate.
  const size_t length = std::min<size_t>(name.size(), kMaxTokenNameBytes);
  unsigned char message[kIdLabel.size() + 1 + kMaxTokenNameBytes + kEndBytes];
  unsigned char* out = message;
  std::memcpy(out, kIdLabel.data(), kIdLabel.size());
  out += kIdLabel.size();
  *out++ = static_cast<unsigned char>(length);
  std::memcpy(out, name.data(), length);
  out = PutEnd(out + length, end);
  return Mac(message, static_cast<size_t>(out - message));
}

bool PairSecrets::VerifyIdentityToken(absl::string_view name, PairEnd end,
                                      absl::string_view token) const {
  if (token.size() != kTokenBytes || name.empty() ||
      name.size() > kMaxTokenNameBytes) {
    return false;
  }
  const std::string expected = IdentityToken(name, end);
  // Constant time: a mismatch must not say how much of the token was right.
  return CRYPTO_memcmp(expected.data(), token.data(), kTokenBytes) == 0;
}

std::string PairSecrets::Mac(const unsigned char* message,
                             size_t length) const {
  std::string mac(kSecretBytes, '\0');
  size_t written = 0;
  ThreadContext& mine = thread_context;
  if (mine.instance != instance_ || mine.ctx == nullptr) {
    EVP_MAC_CTX* copy;
    {
      absl::MutexLock lock(&mu_);
      copy = EVP_MAC_CTX_dup(keyed_);
    }
    EVP_MAC_CTX_free(mine.ctx);
    mine.ctx = copy;
    mine.instance = copy != nullptr ? instance_ : 0;
  }
  EVP_MAC_CTX* ctx = mine.ctx;
  // Re-initializing with no key keeps the key; these calls fail only on
  // memory exhaustion, which the process does not survive anyway.
  const bool ok =
      ctx != nullptr && EVP_MAC_init(ctx, nullptr, 0, nullptr) == 1 &&
      EVP_MAC_update(ctx, message, length) == 1 &&
      EVP_MAC_final(ctx, reinterpret_cast<unsigned char*>(mac.data()), &written,
                    mac.size()) == 1 &&
      written == kSecretBytes;
  if (!ok) {
    // Never hand out a secret or token that is not one: a peer without a
    // secret is refused by lite.ko, a predictable one would be accepted.
    std::fprintf(stderr, "litemgr: HMAC-SHA256 failed: %s\n",
                 OpenSslError().c_str());
    std::abort();
  }
  return mac;
}

absl::StatusOr<std::string> PairSecrets::RandomKey() {
  std::string key(kKeyBytes, '\0');
  if (RAND_priv_bytes(reinterpret_cast<unsigned char*>(key.data()),
                      static_cast<int>(key.size())) != 1) {
    return absl::InternalError(
        absl::StrCat("cannot draw a random cluster key: ", OpenSslError()));
  }
  return key;
}

absl::Status PairSecrets::ValidateClusterKey(absl::string_view key,
                                             absl::string_view what) {
  if (key.size() != kKeyBytes) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s is %d bytes long; it must be %d random bytes", what,
                        key.size(), kKeyBytes));
  }
  if (std::all_of(key.begin(), key.end(),
                  [&](char c) { return c == key.front(); })) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s is one byte repeated %d times, not random bytes", what, kKeyBytes));
  }
  return absl::OkStatus();
}

void PairSecrets::Wipe(std::string* key) {
  if (!key->empty()) OPENSSL_cleanse(key->data(), key->size());
  key->clear();
}

absl::StatusOr<std::string> PairSecrets::LoadKeyFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot open ", path, ": ", std::strerror(errno),
        " (create it with: (umask 077; openssl rand -hex 32 > ", path, "))"));
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return absl::InvalidArgumentError(
        absl::StrCat(path, " is not a regular file"));
  }
  if ((st.st_mode & 077) != 0) {
    close(fd);
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s has mode %04o: its group or others may read or change the key "
        "every pair secret derives from; chmod 600 %s",
        path, st.st_mode & 07777, path));
  }
  std::string content(kMaxKeyFileBytes + 1, '\0');
  // The file's bytes (the key, raw or in hex) leave nothing behind on any
  // return.
  absl::Cleanup wipe_content = [&content] { Wipe(&content); };
  size_t got = 0;
  while (got < content.size()) {
    const ssize_t n = read(fd, content.data() + got, content.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      close(fd);
      return absl::InvalidArgumentError(
          absl::StrCat("cannot read ", path, ": ", std::strerror(err)));
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  close(fd);
  content.resize(got);

  std::string key;
  absl::string_view text = absl::StripTrailingAsciiWhitespace(content);
  if (content.size() == kKeyBytes) {
    key = content;
  } else if (text.size() == 2 * kKeyBytes &&
             std::all_of(text.begin(), text.end(), absl::ascii_isxdigit)) {
    key = absl::HexStringToBytes(text);
  } else {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s holds %d bytes; it must hold the cluster key: %d random bytes, "
        "raw or as %d hex digits (e.g. openssl rand -hex 32)",
        path, content.size(), kKeyBytes, 2 * kKeyBytes));
  }
  if (absl::Status s = ValidateClusterKey(key, path); !s.ok()) {
    Wipe(&key);
    return s;
  }
  return key;
}

}  // namespace lite::controlplane
