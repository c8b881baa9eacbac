// Who is calling: the name a gRPC peer proved with its certificate. The
// identity of a LITE certificate is its subject CN (cmd/litecerts also puts
// it in the SAN); docs/security.md.
#ifndef LITE_COMMON_TLS_IDENTITY_H_
#define LITE_COMMON_TLS_IDENTITY_H_

#include <grpcpp/security/auth_context.h>

#include <optional>
#include <string>

#include "absl/time/time.h"

namespace lite::tls {

// The subject CN of the peer's certificate, only when the connection is TLS
// and gRPC verified that certificate against the CA (IsPeerAuthenticated);
// nullopt otherwise (plaintext, no client certificate, or a certificate
// carrying no CN or more than one).
std::optional<std::string> PeerName(const grpc::AuthContext& context);

// When the peer's verified certificate stops being valid (its notAfter);
// InfiniteFuture when there is none or it cannot be read (plaintext).
absl::Time PeerNotAfter(const grpc::AuthContext& context);

}  // namespace lite::tls

#endif  // LITE_COMMON_TLS_IDENTITY_H_
