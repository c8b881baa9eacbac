// The codec's shared helpers (decode.cc defines them), for the decoders and
// encoders split into files of their own (decode_rpc.cc, encode_rpc.cc).
// Not part of the library's interface: codec.h is.
#ifndef LITE_GENL_CODEC_INTERNAL_H_
#define LITE_GENL_CODEC_INTERNAL_H_

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "genl/types.h"
#include "kmod/include/uapi/lite.h"

struct nl_msg;
struct nlattr;
struct nlmsghdr;

namespace lite::genl {

// A parsed message of the family, by the attribute policy.
struct Attrs {
  nlattr* tb[LITE_ATTR_MAX + 1] = {};
  uint8_t cmd = 0;
  const nlmsghdr* hdr = nullptr;  // for attributes that may repeat
};

absl::StatusOr<Attrs> Parse(const nlmsghdr* msg);
// EBADMSG "lite.ko's message lacks <what>".
absl::Status Missing(const char* what);
// EBADMSG unless the message is command @cmd.
absl::Status CheckCmd(const Attrs& a, uint8_t cmd, const char* name);
// Every one of @types is there.
absl::Status Require(const Attrs& a,
                     std::initializer_list<std::pair<int, const char*>> types);
// LITE_ATTR_NAME, an LMR or service name (1..LITE_NAME_MAX bytes).
absl::StatusOr<std::string> GetName(const Attrs& a);
// A u64 attribute that must be there and not 0.
absl::StatusOr<uint64_t> GetId64(const Attrs& a, int type, const char* what);

// decode_rpc.cc: the kind-specific attributes of an RPC upcall.
absl::Status DecodeRpcUpcallKind(const Attrs& a, uint32_t kind,
                                 UpcallRequest* u);

// encode_rpc.cc: the RPC answer of a successful upcall (service_id,
// service or ring), if the completion carries one.
absl::Status EncodeRpcCompletion(nl_msg* msg, const UpcallCompletion& c);

}  // namespace lite::genl

#endif  // LITE_GENL_CODEC_INTERNAL_H_
