// libLITE's C++ layer. See lite.hpp.
#include "api/lite.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace lite {
namespace {

constexpr char kErrnoPayload[] = "type.googleapis.com/lite.Errno";

// The C API takes NUL-terminated names: one with a NUL inside would be cut
// short silently, so it is rejected here.
absl::Status CheckNoNul(absl::string_view name, absl::string_view what) {
  if (name.find('\0') == absl::string_view::npos) return absl::OkStatus();
  return ErrnoToStatus(EINVAL, what, "the LMR name has a NUL byte");
}

absl::Status NotMapped(const std::string& name) {
  return ErrnoToStatus(EBADF, absl::StrCat("LMR \"", name, "\""),
                       "the Lmr is not mapped (moved from or unmapped)");
}

}  // namespace

absl::StatusCode ErrnoToCode(int err) {
  if (err < 0) err = -err;
  switch (err) {
    case 0:
      return absl::StatusCode::kOk;
    case ENOENT:
      return absl::StatusCode::kNotFound;
    case EACCES:
      return absl::StatusCode::kPermissionDenied;
    case EEXIST:
      return absl::StatusCode::kAlreadyExists;
    case EINVAL:
    case EFAULT:
    case EMSGSIZE:
      return absl::StatusCode::kInvalidArgument;
    case EOVERFLOW:  // an RPC reply longer than the buffer
      return absl::StatusCode::kOutOfRange;
    case EBADF:
    case EPERM:
    case EPROTO:
    case EBUSY:  // a try-lock another holds
      return absl::StatusCode::kFailedPrecondition;
    case ESTALE:
    case ECONNABORTED:  // a barrier's participant died
      return absl::StatusCode::kAborted;
    case EHOSTDOWN:
    case ECONNREFUSED:  // an RPC service gone: open it again once it is back
    case ENOTCONN:
    case EAGAIN:
    case ENODEV:
    case ENXIO:
      return absl::StatusCode::kUnavailable;
    case ETIMEDOUT:
      return absl::StatusCode::kDeadlineExceeded;
    case ENOSPC:
    case ENOMEM:
    case EMFILE:
    case EDQUOT:
    case EUSERS:  // an RPC service's max_clients
      return absl::StatusCode::kResourceExhausted;
    case ENOTTY:
    case EOPNOTSUPP:  // e.g. atomics on a device without them, no io_uring
      return absl::StatusCode::kUnimplemented;
    case EINTR:
    case ECANCELED:
      return absl::StatusCode::kCancelled;
    case EIO:
      return absl::StatusCode::kInternal;
    default:
      return absl::StatusCode::kUnknown;
  }
}

absl::Status ErrnoToStatus(int err, absl::string_view what,
                           absl::string_view message) {
  if (err < 0) err = -err;
  if (err == 0) return absl::OkStatus();
  std::string text = absl::StrCat(what, ": ", std::strerror(err), " (",
                                  lite_errno_name(err), ")");
  if (!message.empty()) absl::StrAppend(&text, ": ", message);
  absl::Status status(ErrnoToCode(err), text);
  status.SetPayload(kErrnoPayload, absl::Cord(absl::StrCat(err)));
  return status;
}

absl::optional<int> StatusErrno(const absl::Status& status) {
  absl::optional<absl::Cord> payload = status.GetPayload(kErrnoPayload);
  int err = 0;
  if (!payload || !absl::SimpleAtoi(std::string(*payload), &err)) {
    return absl::nullopt;
  }
  return err;
}

Lite Lite::Adopt(lite_ctx* ctx) {
  return Lite(std::shared_ptr<lite_ctx>(ctx, &lite_close));
}

absl::StatusOr<Lite> Lite::Open(absl::string_view path) {
  lite_ctx* ctx = nullptr;
  std::string p(path);
  int err = lite_open(p.c_str(), &ctx);
  if (err) return ErrnoToStatus(err, "open LITE device", lite_message());
  return Adopt(ctx);
}

absl::StatusOr<NodeInfo> Lite::Node() const {
  NodeInfo node;
  int err = lite_node_id(ctx(), &node.node_id, &node.incarnation);
  if (err) return ErrnoToStatus(err, "LITE node", lite_message());
  // The count can grow between calls; retry with the size lite.ko reports.
  std::vector<lite_member> raw(8);
  for (int attempt = 0; attempt < 8; ++attempt) {
    uint32_t num = 0;
    err = lite_members(ctx(), raw.data(), raw.size(), &num);
    if (err) return ErrnoToStatus(err, "LITE members", lite_message());
    if (num <= raw.size()) {
      for (uint32_t i = 0; i < num; ++i) {
        node.members.push_back(
            Member{raw[i].node_id, raw[i].state, raw[i].incarnation});
      }
      return node;
    }
    raw.resize(std::min<uint32_t>(num, LITE_MEMBERS_MAX));
  }
  return ErrnoToStatus(EAGAIN, "LITE members",
                       "the member list kept changing size");
}

absl::StatusOr<uint32_t> Lite::NodeId(absl::string_view name) const {
  const std::string what = absl::StrCat("node \"", name, "\"");
  if (name.find('\0') != absl::string_view::npos) {
    return ErrnoToStatus(EINVAL, what, "the node name has a NUL byte");
  }
  uint32_t id = 0;
  int err = lite_node_lookup(ctx(), std::string(name).c_str(), &id);
  if (err) return ErrnoToStatus(err, what, lite_message());
  return id;
}

absl::StatusOr<std::string> Lite::NodeName(uint32_t node_id) const {
  char buf[LITE_NODE_NAME_BUF];
  int err = lite_node_name(ctx(), node_id, buf, sizeof(buf));
  if (err) {
    return ErrnoToStatus(err, absl::StrCat("node ", node_id), lite_message());
  }
  return std::string(buf);
}

absl::StatusOr<uint64_t> Lite::Alloc(absl::string_view name,
                                     uint64_t size_bytes,
                                     const AllocOptions& options) const {
  const std::string what = absl::StrCat("alloc \"", name, "\"");
  if (absl::Status s = CheckNoNul(name, what); !s.ok()) return s;
  uint64_t id = 0;
  int err = lite_alloc(ctx(), std::string(name).c_str(), size_bytes,
                       options.mode, options.home_node_id, &id);
  if (err) return ErrnoToStatus(err, what, lite_message());
  return id;
}

absl::StatusOr<Lmr> Lite::Map(absl::string_view name, uint32_t access) const {
  const std::string what = absl::StrCat("map \"", name, "\"");
  if (absl::Status s = CheckNoNul(name, what); !s.ok()) return s;
  lite_handle_t handle = 0;
  lite_lmr_info info{};
  std::string n(name);
  int err = lite_map(ctx(), n.c_str(), access, &handle, &info);
  if (err) return ErrnoToStatus(err, what, lite_message());
  return Lmr(ctx_, std::move(n), handle, info);
}

absl::Status Lite::Free(absl::string_view name) const {
  const std::string what = absl::StrCat("free \"", name, "\"");
  if (absl::Status s = CheckNoNul(name, what); !s.ok()) return s;
  int err = lite_free(ctx(), std::string(name).c_str());
  return ErrnoToStatus(err, what, err ? lite_message() : "");
}

absl::Status Lite::SetPriority(uint32_t priority) const {
  int err = lite_set_priority(ctx(), priority);
  return ErrnoToStatus(err, absl::StrCat("set priority ", priority),
                       err ? lite_message() : "");
}

absl::StatusOr<uint32_t> Lite::Priority() const {
  uint32_t priority = 0;
  int err = lite_get_priority(ctx(), &priority, nullptr);
  if (err) return ErrnoToStatus(err, "get priority", lite_message());
  return priority;
}

Lmr::Lmr(Lmr&& other) noexcept
    : ctx_(std::move(other.ctx_)),
      name_(std::move(other.name_)),
      handle_(other.handle_),
      info_(other.info_) {
  other.ctx_.reset();
}

Lmr& Lmr::operator=(Lmr&& other) noexcept {
  if (this != &other) {
    Unmap().IgnoreError();
    ctx_ = std::move(other.ctx_);
    other.ctx_.reset();
    name_ = std::move(other.name_);
    handle_ = other.handle_;
    info_ = other.info_;
  }
  return *this;
}

Lmr::~Lmr() { Unmap().IgnoreError(); }

absl::Status Lmr::Unmap() {
  if (!ctx_) return absl::OkStatus();
  int err = lite_unmap(ctx_.get(), handle_);
  ctx_.reset();
  return ErrnoToStatus(err, absl::StrCat("unmap \"", name_, "\""));
}

absl::Status Lmr::OpStatus(int err, const char* what) const {
  return ErrnoToStatus(err, absl::StrCat(what, " \"", name_, "\""),
                       lite_message());
}

absl::Status Lmr::Read(uint64_t offset, absl::Span<uint8_t> out) const {
  if (!ctx_) return NotMapped(name_);
  int err = lite_read(live_ctx(), handle_, offset, out.data(), out.size());
  return err ? OpStatus(err, "read") : absl::OkStatus();
}

absl::Status Lmr::Write(uint64_t offset, absl::Span<const uint8_t> data) const {
  if (!ctx_) return NotMapped(name_);
  int err = lite_write(live_ctx(), handle_, offset, data.data(), data.size());
  return err ? OpStatus(err, "write") : absl::OkStatus();
}

absl::Status Lmr::Write(uint64_t offset, absl::string_view data) const {
  return Write(
      offset, absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(data.data()),
                                  data.size()));
}

absl::Status Lmr::Memset(uint64_t offset, uint8_t value,
                         uint64_t length) const {
  if (!ctx_) return NotMapped(name_);
  int err = lite_memset(live_ctx(), handle_, offset, value, length);
  return err ? OpStatus(err, "memset") : absl::OkStatus();
}

absl::Status Lmr::CopyFrom(uint64_t offset, const Lmr& src, uint64_t src_offset,
                           uint64_t length) const {
  if (!ctx_) return NotMapped(name_);
  if (!src.ctx_) return NotMapped(src.name_);
  if (src.ctx_ != ctx_) {
    return ErrnoToStatus(EBADF, absl::StrCat("memcpy \"", name_, "\""),
                         "both Lmrs must be mapped through the same Lite");
  }
  int err =
      lite_memcpy(live_ctx(), handle_, offset, src.handle_, src_offset, length);
  return err ? OpStatus(err, "memcpy") : absl::OkStatus();
}

absl::StatusOr<uint64_t> Lmr::FetchAdd(uint64_t offset, uint64_t add) const {
  if (!ctx_) return NotMapped(name_);
  uint64_t old = 0;
  int err = lite_faa(live_ctx(), handle_, offset, add, &old);
  if (err) return OpStatus(err, "faa");
  return old;
}

absl::StatusOr<uint64_t> Lmr::CompareSwap(uint64_t offset, uint64_t expected,
                                          uint64_t desired) const {
  if (!ctx_) return NotMapped(name_);
  uint64_t old = 0;
  int err = lite_cas(live_ctx(), handle_, offset, expected, desired, &old);
  if (err) return OpStatus(err, "cas");
  return old;
}

}  // namespace lite
