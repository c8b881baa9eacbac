#include "common/tls/credentials.h"

#include <errno.h>
#include <grpcpp/security/tls_certificate_provider.h>
#include <grpcpp/security/tls_certificate_verifier.h>
#include <grpcpp/security/tls_credentials_options.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <sstream>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace lite::tls {
namespace {

// One owner per OpenSSL object, so every early return frees what it made.
struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct KeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct StoreFree {
  void operator()(X509_STORE* s) const { X509_STORE_free(s); }
};
struct StoreCtxFree {
  void operator()(X509_STORE_CTX* c) const { X509_STORE_CTX_free(c); }
};
struct StackFree {
  void operator()(STACK_OF(X509) * s) const { sk_X509_pop_free(s, X509_free); }
};
using X509Ptr = std::unique_ptr<X509, X509Free>;

// What the file is for, as the error messages name it.
std::string Label(absl::string_view flag, const std::string& path) {
  return absl::StrCat("--", flag, " ", path);
}

// The newest OpenSSL error as text (and the queue emptied), for messages.
std::string SslError() {
  const unsigned long e = ERR_peek_last_error();
  ERR_clear_error();
  if (e == 0) return "no details";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof(buf));
  return buf;
}

absl::StatusOr<std::string> ReadFile(absl::string_view flag,
                                     const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    const std::string what =
        absl::StrCat(Label(flag, path), ": cannot read: ", strerror(err));
    if (err == ENOENT) return absl::NotFoundError(what);
    return absl::InvalidArgumentError(what);
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) {
    return absl::InvalidArgumentError(
        absl::StrCat(Label(flag, path), ": read error"));
  }
  return text.str();
}

// The key is the identity: readable by its owner only, as the pair key
// (controlplane/pair_secrets.cc) and as cmd/litecerts writes it (review
// cp-2026-11-28 L3). stat() follows a symbolic link: the mode that matters
// is the key's.
absl::Status CheckKeyMode(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        Label("tls_key", path), ": cannot stat: ", strerror(errno)));
  }
  if ((st.st_mode & 077) != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s has mode %04o: its group or others may read the private key this "
        "certificate's identity rests on; chmod 600 %s (and chown it to the "
        "daemon's user)",
        Label("tls_key", path), st.st_mode & 07777, path));
  }
  return absl::OkStatus();
}

// Every PEM certificate in the text, in order.
absl::StatusOr<std::vector<X509Ptr>> ParseCertificates(absl::string_view flag,
                                                       const std::string& path,
                                                       const std::string& pem) {
  std::unique_ptr<BIO, BioFree> bio(
      BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  std::vector<X509Ptr> certs;
  while (X509* x = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    certs.emplace_back(x);
  }
  ERR_clear_error();  // the loop ends on "no start line"
  if (certs.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(Label(flag, path),
                     ": no PEM certificate (-----BEGIN CERTIFICATE-----)"));
  }
  return certs;
}

// Refuses to ask for a passphrase: a daemon has no one to ask.
int NoPassphrase(char*, int, int, void*) { return -1; }

std::string CommonName(X509* cert) {
  X509_NAME* subject = X509_get_subject_name(cert);
  const int first = X509_NAME_get_index_by_NID(subject, NID_commonName, -1);
  if (first < 0) return "";
  // Two CNs would make the identity ambiguous; identity.h refuses them too.
  if (X509_NAME_get_index_by_NID(subject, NID_commonName, first) >= 0) {
    return "";
  }
  unsigned char* utf8 = nullptr;
  const int n = ASN1_STRING_to_UTF8(
      &utf8, X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, first)));
  if (n < 0) return "";
  std::string name(reinterpret_cast<char*>(utf8), n);
  OPENSSL_free(utf8);
  return name;
}

absl::Time NotAfter(X509* cert) {
  struct tm tm = {};
  if (ASN1_TIME_to_tm(X509_get0_notAfter(cert), &tm) != 1) {
    return absl::InfinitePast();
  }
  return absl::FromTimeT(timegm(&tm));
}

// The server's certificate must carry exactly the expected name: its CN,
// and its SAN DNS names (if any) must include it, byte for byte. gRPC's
// HostNameCertificateVerifier folds case and ignores a trailing dot, so a
// CA-issued "Litemgr" or "litemgr." would pass as "litemgr"; a LITE name is
// an identity compared exactly everywhere else (authz, Join), and here too.
class ExactNameVerifier final
    : public grpc::experimental::ExternalCertificateVerifier {
 public:
  bool Verify(grpc::experimental::TlsCustomVerificationCheckRequest* request,
              std::function<void(grpc::Status)> /*callback*/,
              grpc::Status* sync_status) override {
    *sync_status = Check(request);
    return true;  // answered synchronously
  }
  void Cancel(grpc::experimental::TlsCustomVerificationCheckRequest*) override {
  }

 private:
  static grpc::Status Check(
      grpc::experimental::TlsCustomVerificationCheckRequest* request) {
    const std::string want = ExpectedServerName(absl::string_view(
        request->target_name().data(), request->target_name().size()));
    const std::string cn(request->common_name().data(),
                         request->common_name().size());
    if (want.empty() || cn != want) {
      return grpc::Status(
          grpc::StatusCode::UNAUTHENTICATED,
          absl::StrCat("the server's certificate is \"", absl::CHexEscape(cn),
                       "\", not the expected \"", absl::CHexEscape(want),
                       "\" (names are compared exactly)"));
    }
    const std::vector<grpc::string_ref> dns = request->dns_names();
    bool listed = dns.empty();
    for (const grpc::string_ref& name : dns) {
      listed = listed || absl::string_view(name.data(), name.size()) == want;
    }
    if (!listed) {
      return grpc::Status(
          grpc::StatusCode::UNAUTHENTICATED,
          absl::StrCat("the server's certificate does not list \"",
                       absl::CHexEscape(want), "\" among its DNS names"));
    }
    return grpc::Status::OK;
  }
};

std::unique_ptr<grpc::experimental::FileWatcherCertificateProvider> Provider(
    const TlsFiles& files, absl::Duration reload_interval) {
  const int64_t seconds =
      std::max<int64_t>(1, absl::ToInt64Seconds(reload_interval));
  return std::make_unique<grpc::experimental::FileWatcherCertificateProvider>(
      files.key, files.cert, files.ca, static_cast<unsigned int>(seconds));
}

}  // namespace

std::string ExpectedServerName(absl::string_view target) {
  // "[v6]:port" and "host:port" lose the port; a bare name stays.
  if (!target.empty() && target.front() == '[') {
    const size_t close = target.find(']');
    return close == absl::string_view::npos
               ? std::string(target)
               : std::string(target.substr(1, close - 1));
  }
  const size_t colon = target.rfind(':');
  if (colon != absl::string_view::npos && target.find(':') == colon) {
    return std::string(target.substr(0, colon));
  }
  return std::string(target);
}

absl::Status CheckTlsFlags(const TlsFiles& files, bool insecure,
                           absl::string_view program) {
  const int given =
      !files.cert.empty() + !files.key.empty() + !files.ca.empty();
  if (insecure) {
    if (given == 0) return absl::OkStatus();
    return absl::InvalidArgumentError(
        "--insecure and --tls_cert/--tls_key/--tls_ca exclude each other: "
        "choose plaintext or mutual TLS");
  }
  if (given == 3) return absl::OkStatus();
  if (given == 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s needs mutual TLS: --tls_cert, --tls_key and --tls_ca (make them "
        "with cmd/litecerts DIR ca, then cmd/litecerts DIR manager|node "
        "NAME|operator NAME; see docs/security.md), or --insecure for "
        "plaintext on a trusted, isolated network only",
        program));
  }
  std::vector<std::string> missing;
  if (files.cert.empty()) missing.push_back("--tls_cert");
  if (files.key.empty()) missing.push_back("--tls_key");
  if (files.ca.empty()) missing.push_back("--tls_ca");
  return absl::InvalidArgumentError(
      absl::StrCat("mutual TLS needs all of --tls_cert, --tls_key and "
                   "--tls_ca; missing: ",
                   absl::StrJoin(missing, ", ")));
}

absl::Status CheckServerTlsFlags(const TlsFiles& files, bool insecure,
                                 absl::string_view authz_file,
                                 absl::Duration reload_interval,
                                 absl::string_view program) {
  if (absl::Status s = CheckTlsFlags(files, insecure, program); !s.ok()) {
    return s;
  }
  if (insecure) {
    if (authz_file.empty()) return absl::OkStatus();
    return absl::InvalidArgumentError(
        "--authz needs mutual TLS: with --insecure every caller has every "
        "role");
  }
  if (authz_file.empty()) {
    return absl::InvalidArgumentError(
        "--authz FILE is required with TLS: it gives certificate names their "
        "roles (cmd/litecerts writes DIR/authz)");
  }
  if (reload_interval < absl::Seconds(1)) {
    return absl::InvalidArgumentError(
        "--tls_reload_interval must be at least 1s");
  }
  return absl::OkStatus();
}

std::string InsecureWarning(absl::string_view program) {
  return absl::StrFormat(
      "%s runs with --insecure: plaintext gRPC, no certificates, every "
      "caller trusted with every role. Anyone who can reach its ports can "
      "join as any node, act as any user and drain or evict nodes. Use only "
      "on a trusted, isolated network (docs/security.md).",
      program);
}

absl::StatusOr<CertificateInfo> CheckFiles(const TlsFiles& files) {
  absl::StatusOr<std::string> cert_pem = ReadFile("tls_cert", files.cert);
  if (!cert_pem.ok()) return cert_pem.status();
  absl::StatusOr<std::string> key_pem = ReadFile("tls_key", files.key);
  if (!key_pem.ok()) return key_pem.status();
  if (absl::Status private_key = CheckKeyMode(files.key); !private_key.ok()) {
    return private_key;
  }
  absl::StatusOr<std::string> ca_pem = ReadFile("tls_ca", files.ca);
  if (!ca_pem.ok()) return ca_pem.status();

  absl::StatusOr<std::vector<X509Ptr>> chain =
      ParseCertificates("tls_cert", files.cert, *cert_pem);
  if (!chain.ok()) return chain.status();
  absl::StatusOr<std::vector<X509Ptr>> roots =
      ParseCertificates("tls_ca", files.ca, *ca_pem);
  if (!roots.ok()) return roots.status();

  std::unique_ptr<BIO, BioFree> key_bio(
      BIO_new_mem_buf(key_pem->data(), static_cast<int>(key_pem->size())));
  std::unique_ptr<EVP_PKEY, KeyFree> key(
      PEM_read_bio_PrivateKey(key_bio.get(), nullptr, NoPassphrase, nullptr));
  if (key == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(Label("tls_key", files.key),
                     ": no unencrypted PEM private key (", SslError(), ")"));
  }
  X509* leaf = chain->front().get();
  if (X509_check_private_key(leaf, key.get()) != 1) {
    ERR_clear_error();
    return absl::InvalidArgumentError(
        absl::StrCat(Label("tls_key", files.key), " is not the key of ",
                     Label("tls_cert", files.cert)));
  }

  std::unique_ptr<X509_STORE, StoreFree> store(X509_STORE_new());
  for (const X509Ptr& root : *roots)
    X509_STORE_add_cert(store.get(), root.get());
  std::unique_ptr<STACK_OF(X509), StackFree> untrusted(sk_X509_new_null());
  for (size_t i = 1; i < chain->size(); ++i) {
    X509_up_ref((*chain)[i].get());
    sk_X509_push(untrusted.get(), (*chain)[i].get());
  }
  std::unique_ptr<X509_STORE_CTX, StoreCtxFree> ctx(X509_STORE_CTX_new());
  if (ctx == nullptr ||
      X509_STORE_CTX_init(ctx.get(), store.get(), leaf, untrusted.get()) != 1) {
    return absl::InternalError(
        absl::StrCat("cannot set up certificate verification: ", SslError()));
  }
  if (X509_verify_cert(ctx.get()) != 1) {
    const int err = X509_STORE_CTX_get_error(ctx.get());
    ERR_clear_error();
    return absl::InvalidArgumentError(absl::StrCat(
        Label("tls_cert", files.cert), " does not verify against ",
        Label("tls_ca", files.ca), ": ", X509_verify_cert_error_string(err)));
  }
  CertificateInfo info;
  info.name = CommonName(leaf);
  if (info.name.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(Label("tls_cert", files.cert),
                     " has no (single) subject CN: LITE names a peer by it"));
  }
  info.not_after = NotAfter(leaf);
  return info;
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> ServerCredentials(
    const TlsFiles& files, absl::Duration reload_interval) {
  absl::StatusOr<CertificateInfo> info = CheckFiles(files);
  if (!info.ok()) return info.status();
  grpc::experimental::TlsServerCredentialsOptions options(
      Provider(files, reload_interval));
  options.watch_root_certs();
  options.watch_identity_key_cert_pairs();
  // A client without a certificate of the cluster's CA ends at the
  // handshake: it never reaches protobuf parsing, a handler or the audit
  // log, and costs no more than a TLS handshake (review cp-2026-11-28 M1,
  // L6). The health service, too, answers only certificate holders.
  options.set_cert_request_type(
      GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  std::shared_ptr<grpc::ServerCredentials> creds =
      grpc::experimental::TlsServerCredentials(options);
  if (creds == nullptr) {
    return absl::InternalError("gRPC refused the TLS server options");
  }
  return creds;
}

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> ChannelCredentials(
    const TlsFiles& files, absl::Duration reload_interval) {
  absl::StatusOr<CertificateInfo> info = CheckFiles(files);
  if (!info.ok()) return info.status();
  grpc::experimental::TlsChannelCredentialsOptions options;
  options.set_certificate_provider(Provider(files, reload_interval));
  options.watch_root_certs();
  options.watch_identity_key_cert_pairs();
  options.set_verify_server_certs(true);
  // Stated rather than left to gRPC's default: the server's certificate must
  // carry exactly the expected name, or another certificate of the CA (a
  // node's, or one named "Litemgr") could pose as the manager.
  options.set_certificate_verifier(
      grpc::experimental::ExternalCertificateVerifier::Create<
          ExactNameVerifier>());
  std::shared_ptr<grpc::ChannelCredentials> creds =
      grpc::experimental::TlsCredentials(options);
  if (creds == nullptr) {
    return absl::InternalError("gRPC refused the TLS channel options");
  }
  return creds;
}

void SetServerName(grpc::ChannelArguments* args, const std::string& name) {
  args->SetSslTargetNameOverride(name);
}

}  // namespace lite::tls
