// libLITE's C++ layer: RAII sessions and LMR handles over the C API
// (api/lite.h), absl::Status errors, absl::Span buffers.
//
//   ASSIGN_OR_RETURN(lite::Lite session, lite::Lite::Open());
//   ASSIGN_OR_RETURN(lite::Lmr kv, session.Map("kv-store", lite::kReadWrite));
//   RETURN_IF_ERROR(kv.Write(0, absl::MakeConstSpan(bytes)));
//   ASSIGN_OR_RETURN(uint64_t old, kv.FetchAdd(64, 1));
//
// Errors. Every failure is an absl::Status whose code comes from the errno
// (ErrnoToCode below), whose text is "<call>: <strerror> (<ENAME>)" followed
// by ": <why>" when the kernel or the cluster manager said why, and which
// carries the errno itself (StatusErrno). The errno -> code table:
//
//   ENOENT                    NOT_FOUND            no such LMR / device
//   EACCES                    PERMISSION_DENIED    mode bits, not the owner
//   EEXIST                    ALREADY_EXISTS       LMR name taken
//   EINVAL, EFAULT, EMSGSIZE  INVALID_ARGUMENT     bad argument, bounds
//   EBADF                     FAILED_PRECONDITION  handle unmapped / not ours
//   EPERM                     FAILED_PRECONDITION  home node draining, an
//                                                  unlock of a lock not held
//   EPROTO                    FAILED_PRECONDITION  lite.ko speaks another ABI
//   EBUSY                     FAILED_PRECONDITION  try-lock: another holds it
//   ESTALE                    ABORTED              grant revoked (LMR freed or
//                                                  home restarted): map again
//   ECONNABORTED              ABORTED              a barrier's participant
//                                                  died
//   EHOSTDOWN, ENOTCONN,      UNAVAILABLE          peer failed, no agent,
//   EAGAIN, ENODEV, ENXIO                          manager unreachable, no
//                                                  module; retry later
//   ETIMEDOUT                 DEADLINE_EXCEEDED
//   ENOSPC, ENOMEM, EMFILE    RESOURCE_EXHAUSTED   quota, memory, handles
//   ENOTTY, EOPNOTSUPP        UNIMPLEMENTED        not a LITE device,
//                                                  lite.ko lacks the ioctl,
//                                                  no atomics or io_uring
//   EINTR, ECANCELED          CANCELLED
//   EIO                       INTERNAL             RDMA error (see dmesg)
//   anything else             UNKNOWN
//
// Thread safety: a Lite and its Lmrs may be used from many threads at once;
// moving or destroying one needs exclusive use of that object.
#ifndef LITE_API_LITE_HPP_
#define LITE_API_LITE_HPP_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/optional.h"
#include "absl/types/span.h"
#include "api/lite.h"

namespace lite {

// The status code for an errno (positive or negative); OK for 0.
absl::StatusCode ErrnoToCode(int err);

// "<what>: <strerror> (<ENAME>)[: <message>]" with ErrnoToCode(err) and the
// errno attached (StatusErrno). OkStatus() for err == 0.
absl::Status ErrnoToStatus(int err, absl::string_view what,
                           absl::string_view message = {});

// The positive errno a status from this library carries, or nullopt.
absl::optional<int> StatusErrno(const absl::Status& status);

// Access of a map.
enum Access : uint32_t {
  kRead = LITE_ACCESS_READ,
  kWrite = LITE_ACCESS_WRITE,
  kReadWrite = LITE_ACCESS_READ | LITE_ACCESS_WRITE,
};

struct Member {
  uint32_t node_id = 0;
  uint32_t state = 0;  // enum lite_peer_state
  uint64_t incarnation = 0;
};

struct NodeInfo {
  uint32_t node_id = 0;         // 0 until the agent set it
  uint64_t incarnation = 0;     // 0 until the agent set it
  std::vector<Member> members;  // this node first, then peers by id
};

struct AllocOptions {
  uint32_t mode = 0600;       // subset of 0666
  uint32_t home_node_id = 0;  // 0: this node
};

class Lmr;

// A session: one open file of /dev/lite. Movable, not copyable. The file is
// closed when the Lite and every Lmr mapped through it are gone (closing it
// unmaps every handle, so Lmrs keep it open).
class Lite {
 public:
  // Opens `path` (default /dev/lite) and checks the ABI version.
  static absl::StatusOr<Lite> Open(absl::string_view path = LITE_DEVICE_PATH);

  Lite(Lite&&) = default;
  Lite& operator=(Lite&&) = default;
  Lite(const Lite&) = delete;
  Lite& operator=(const Lite&) = delete;

  // This node's id, incarnation and the members it knows.
  absl::StatusOr<NodeInfo> Node() const;

  // The id of the node named `name`: this node or a peer, by the name its
  // agent gave it (the cluster manager's node name). NOT_FOUND if none has
  // it, INVALID_ARGUMENT if it is not a node name, UNAVAILABLE (ENOTCONN)
  // before the agent set this node up.
  absl::StatusOr<uint32_t> NodeId(absl::string_view name) const;

  // The name of node `node_id` (this node or a peer); "" if its agent gave
  // it none. NOT_FOUND if there is no such node (0 included).
  absl::StatusOr<std::string> NodeName(uint32_t node_id) const;

  // Creates an LMR (not mapped); returns its id.
  absl::StatusOr<uint64_t> Alloc(absl::string_view name, uint64_t size_bytes,
                                 const AllocOptions& options = {}) const;

  // Maps an LMR by name.
  absl::StatusOr<Lmr> Map(absl::string_view name, uint32_t access) const;

  // Deletes an LMR by name (owner only); every map of it gets ESTALE.
  absl::Status Free(absl::string_view name) const;

  // The priority every operation of this context runs at (QoS,
  // docs/qos.md): LITE_PRIO_HIGH or LITE_PRIO_LOW (the default).
  // PERMISSION_DENIED for HIGH without CAP_SYS_NICE or qos_high_gid.
  absl::Status SetPriority(uint32_t priority) const;
  absl::StatusOr<uint32_t> Priority() const;

  // The C context, for calls this layer does not wrap.
  lite_ctx* ctx() const { return ctx_.get(); }

  // Wraps a context from lite_open()/lite_open_fake(); takes ownership.
  static Lite Adopt(lite_ctx* ctx);

 private:
  // They keep the context open as long as they live (api/lite_rpc.hpp).
  friend class RpcService;
  friend class RpcClient;
  friend class Ring;
  explicit Lite(std::shared_ptr<lite_ctx> ctx) : ctx_(std::move(ctx)) {}
  std::shared_ptr<lite_ctx> ctx_;
};

// One map of one LMR. The destructor unmaps it (errors ignored; call Unmap()
// to see them). Movable, not copyable. Operations are one ioctl each and
// allocate nothing.
class Lmr {
 public:
  Lmr(Lmr&& other) noexcept;
  Lmr& operator=(Lmr&& other) noexcept;
  Lmr(const Lmr&) = delete;
  Lmr& operator=(const Lmr&) = delete;
  ~Lmr();

  const std::string& name() const { return name_; }
  lite_handle_t handle() const { return handle_; }
  uint64_t lmr_id() const { return info_.lmr_id; }
  uint64_t size() const { return info_.size_bytes; }
  uint32_t home_node_id() const { return info_.home_node_id; }
  uint32_t access() const { return info_.access; }
  bool mapped() const { return ctx_ != nullptr; }

  absl::Status Read(uint64_t offset, absl::Span<uint8_t> out) const;
  absl::Status Write(uint64_t offset, absl::Span<const uint8_t> data) const;
  absl::Status Write(uint64_t offset, absl::string_view data) const;
  absl::Status Memset(uint64_t offset, uint8_t value, uint64_t length) const;
  // Copies length bytes from src at src_offset to this LMR at offset.
  absl::Status CopyFrom(uint64_t offset, const Lmr& src, uint64_t src_offset,
                        uint64_t length) const;
  // Returns the old value.
  absl::StatusOr<uint64_t> FetchAdd(uint64_t offset, uint64_t add) const;
  // Returns the old value; the swap happened iff it equals `expected`.
  absl::StatusOr<uint64_t> CompareSwap(uint64_t offset, uint64_t expected,
                                       uint64_t desired) const;

  // Unmaps now; afterwards every operation fails with FAILED_PRECONDITION.
  absl::Status Unmap();

 private:
  friend class Lite;
  friend class Batch;  // its operations run in this Lmr's session
  friend class Ring;
  friend class Mutex;  // locks and barriers on it (api/lite_sync.hpp)
  friend class Barrier;
  Lmr(std::shared_ptr<lite_ctx> ctx, std::string name, lite_handle_t handle,
      const lite_lmr_info& info)
      : ctx_(std::move(ctx)),
        name_(std::move(name)),
        handle_(handle),
        info_(info) {}
  absl::Status OpStatus(int err, const char* what) const;
  lite_ctx* live_ctx() const { return ctx_.get(); }

  std::shared_ptr<lite_ctx> ctx_;
  std::string name_;
  lite_handle_t handle_ = 0;
  lite_lmr_info info_{};
};

}  // namespace lite

#endif  // LITE_API_LITE_HPP_
