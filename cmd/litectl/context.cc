#include "cmd/litectl/context.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/grpc/keepalive.h"
#include "common/grpc/status.h"
#include "google/protobuf/util/json_util.h"

namespace lite::litectl {

void Interrupt::SetHook(std::function<void()> hook) {
  absl::MutexLock lock(&mu_);
  hook_ = std::move(hook);
}

void Interrupt::ClearHook() {
  absl::MutexLock lock(&mu_);
  hook_ = nullptr;
}

bool Interrupt::Fire() {
  absl::MutexLock lock(&mu_);
  if (!hook_) return false;
  hook_();
  return true;
}

absl::Status Context::MakeCredentials() {
  if (insecure) {
    credentials = grpc::InsecureChannelCredentials();
    return absl::OkStatus();
  }
  // litectl runs for a moment: the files are read once.
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> creds =
      tls::ChannelCredentials(tls, absl::Hours(1));
  if (!creds.ok()) return creds.status();
  credentials = *std::move(creds);
  return absl::OkStatus();
}

std::shared_ptr<grpc::Channel> Context::Dial(const std::string& target) const {
  grpc::ChannelArguments args;
  ClientKeepalive(&args);  // a watch on a manager that vanished ends in 30 s
  if (!insecure) {
    tls::SetServerName(&args,
                       target == manager ? manager_tls_name : agent_tls_name);
  }
  return grpc::CreateCustomChannel(target, credentials, args);
}

void Context::Arm(grpc::ClientContext* ctx) const {
  ctx->set_deadline(absl::ToChronoTime(absl::Now() + timeout));
}

absl::Status CallError(const grpc::Status& status, absl::string_view target) {
  absl::Status converted = FromGrpcStatus(status);
  if (absl::IsUnavailable(converted) || absl::IsDeadlineExceeded(converted)) {
    return absl::Status(converted.code(),
                        absl::StrCat(target, ": ", converted.message()));
  }
  return converted;
}

absl::Status PrintJson(const Context& ctx, const google::protobuf::Message& msg,
                       bool pretty) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  options.add_whitespace = pretty;
  std::string json;
  // Fails only for messages with unresolvable Any fields (lite.v1 has none).
  const auto s =
      google::protobuf::util::MessageToJsonString(msg, &json, options);
  if (!s.ok()) {
    return absl::InternalError(absl::StrCat("cannot print ", msg.GetTypeName(),
                                            " as JSON: ", s.ToString()));
  }
  if (json.empty() || json.back() != '\n') json.push_back('\n');
  *ctx.out << json;
  return absl::OkStatus();
}

std::string EnumSuffix(const std::string& name, absl::string_view prefix) {
  if (absl::StartsWith(name, prefix)) return name.substr(prefix.size());
  return name.empty() ? "?" : name;
}

}  // namespace lite::litectl
