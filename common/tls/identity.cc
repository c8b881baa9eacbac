#include "common/tls/identity.h"

#include <grpc/grpc_security_constants.h>
#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <time.h>

#include <vector>

namespace lite::tls {

std::optional<std::string> PeerName(const grpc::AuthContext& context) {
  // gRPC marks a peer authenticated once it has an identity property, which
  // its SSL transport sets only from a certificate that passed verification
  // (a server that does not verify client certificates must never be used
  // with this check: litemgr's credentials always verify).
  if (!context.IsPeerAuthenticated()) return std::nullopt;
  const std::vector<grpc::string_ref> transport =
      context.FindPropertyValues(GRPC_TRANSPORT_SECURITY_TYPE_PROPERTY_NAME);
  // "ssl" from SslServerCredentials, "tls" from TlsServerCredentials (the
  // daemons' credentials.h): both are X.509 over TLS.
  if (transport.size() != 1) return std::nullopt;
  const std::string type(transport[0].data(), transport[0].size());
  if (type != GRPC_SSL_TRANSPORT_SECURITY_TYPE &&
      type != GRPC_TLS_TRANSPORT_SECURITY_TYPE) {
    return std::nullopt;
  }
  const std::vector<grpc::string_ref> cn =
      context.FindPropertyValues(GRPC_X509_CN_PROPERTY_NAME);
  // Two CNs would make the identity ambiguous; an empty one names nobody.
  if (cn.size() != 1 || cn[0].empty()) return std::nullopt;
  return std::string(cn[0].data(), cn[0].size());
}

absl::Time PeerNotAfter(const grpc::AuthContext& context) {
  if (!PeerName(context).has_value()) return absl::InfiniteFuture();
  const std::vector<grpc::string_ref> pem =
      context.FindPropertyValues(GRPC_X509_PEM_CERT_PROPERTY_NAME);
  if (pem.size() != 1) return absl::InfiniteFuture();
  BIO* bio = BIO_new_mem_buf(pem[0].data(), static_cast<int>(pem[0].size()));
  if (bio == nullptr) return absl::InfiniteFuture();
  X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  if (cert == nullptr) return absl::InfiniteFuture();
  struct tm tm = {};
  const bool ok = ASN1_TIME_to_tm(X509_get0_notAfter(cert), &tm) == 1;
  X509_free(cert);
  return ok ? absl::FromTimeT(timegm(&tm)) : absl::InfiniteFuture();
}

}  // namespace lite::tls
