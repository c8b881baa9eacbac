// gRPC credentials for mutual TLS from a node's (or operator's) certificate
// files: the cluster CA, the certificate and its private key, all PEM, as
// cmd/litecerts makes them. docs/security.md.
//
// Servers require a client certificate and verify it against the CA: a
// client without one, or with one from another CA, expired or not yet
// valid, fails the handshake (the client sees UNAVAILABLE) and never
// reaches a service, so nothing an unknown caller sends is parsed or
// logged; authz (authz.h) then decides what a verified name may call.
// Clients always present their certificate and verify the server's against
// the CA and the name it must carry.
//
// The files are watched: a renewed certificate and key (replace both, key
// first or atomically by rename) are served from the next refresh on, without
// a restart. gRPC keeps the previous pair while the two do not match.
#ifndef LITE_COMMON_TLS_CREDENTIALS_H_
#define LITE_COMMON_TLS_CREDENTIALS_H_

#include <grpcpp/security/credentials.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/support/channel_arguments.h>

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace lite::tls {

// --tls_reload_interval's default: how often the files are looked at again.
inline constexpr absl::Duration kDefaultReloadInterval = absl::Seconds(60);

// The files of one TLS endpoint (--tls_cert, --tls_key, --tls_ca).
struct TlsFiles {
  std::string cert;
  std::string key;
  std::string ca;
};

// What a certificate file holds, as CheckFiles found it.
struct CertificateInfo {
  std::string name;  // subject CN: the identity
  absl::Time not_after;
};

// The flags' decision, for a program's start: OK when all three files are
// given (TLS) or none is and `insecure` is set (plaintext). Otherwise
// INVALID_ARGUMENT saying what is missing or contradictory and, when no file
// is given, how to make certificates with cmd/litecerts. `program` names
// the binary in the message.
absl::Status CheckTlsFlags(const TlsFiles& files, bool insecure,
                           absl::string_view program);

// A daemon's serving flags (litemgr, liteagent): CheckTlsFlags, then the
// authz file given exactly when TLS is on (with --insecure every caller has
// every role, so a roles file would be a lie), and a reload interval of at
// least a second. INVALID_ARGUMENT naming the flag otherwise.
absl::Status CheckServerTlsFlags(const TlsFiles& files, bool insecure,
                                 absl::string_view authz_file,
                                 absl::Duration reload_interval,
                                 absl::string_view program);

// The warning every --insecure start logs: who can do what without TLS.
std::string InsecureWarning(absl::string_view program);

// Reads and checks the files the way gRPC will use them, so that a start
// with a bad file fails with a message naming the file rather than later
// with a handshake error: each readable and PEM; the key file readable by
// its owner only (no group or other bits: INVALID_ARGUMENT naming the mode
// and the chmod); the certificate's key is
// the key file's; the certificate is signed by the CA (chain in the
// certificate file after the leaf, if any) and valid now; it has a CN.
// INVALID_ARGUMENT or NOT_FOUND with the file's flag and path otherwise.
absl::StatusOr<CertificateInfo> CheckFiles(const TlsFiles& files);

// Server side: CheckFiles, then TLS credentials that re-read the files
// every `reload_interval` (at least one second).
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> ServerCredentials(
    const TlsFiles& files, absl::Duration reload_interval);

// Client side: CheckFiles, then TLS credentials presenting the certificate
// and verifying the server's against the CA and the name set by
// SetServerName (without it, the host part of the target).
absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> ChannelCredentials(
    const TlsFiles& files, absl::Duration reload_interval);

// The name a server's certificate must carry for a channel to `target` (the
// SetServerName override, or the target's host): "litemgr" stays,
// "host:7420" is "host", "[::1]:7420" is "::1". The certificate's CN must be
// exactly this name, and its SAN DNS names (if any) must include it: no case
// folding, no trailing-dot equivalence.
std::string ExpectedServerName(absl::string_view target);

// The name the server's certificate must carry (its CN/SAN DNS name, e.g.
// --manager_tls_name's "litemgr") when the target is an address.
void SetServerName(grpc::ChannelArguments* args, const std::string& name);

}  // namespace lite::tls

#endif  // LITE_COMMON_TLS_CREDENTIALS_H_
