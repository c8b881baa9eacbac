// libLITE RPC, C++: a service that unregisters itself and a client handle
// that closes itself (RAII over api/lite_rpc.h), errors as absl::Status
// (ECONNREFUSED -> UNAVAILABLE, EHOSTDOWN -> UNAVAILABLE, ETIMEDOUT ->
// DEADLINE_EXCEEDED, EMSGSIZE -> INVALID_ARGUMENT, EOVERFLOW ->
// OUT_OF_RANGE; lite::StatusErrno() gives the errno back).
//
//   lite::Lite l = *lite::Lite::Open();
//   lite::RpcService svc = *lite::RpcService::Register(l, "echo", {.mode =
//   0711}); lite::RpcRequest reqs[16]; size_t n =
//   *svc.Recv(absl::MakeSpan(reqs), 1000); svc.Reply(reqs[0], reqs[0].data); //
//   in place: no copy
//
//   lite::RpcClient echo = *lite::RpcClient::Open(l, "echo");
//   size_t got = *echo.Call(request, absl::MakeSpan(reply));
//
// Every call is one ioctl and allocates nothing; a service or client may be
// used by many threads at once (not while it is moved or destroyed).
#ifndef LITE_API_LITE_RPC_HPP_
#define LITE_API_LITE_RPC_HPP_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "api/lite.h"
#include "api/lite.hpp"

namespace lite {

// What a server asks for; zeros take lite.ko's defaults (depth 16, 16
// client nodes).
struct ServiceOptions {
  uint32_t mode = 0711;  // who may call it: the x bits count
  uint32_t max_request = 4096;
  uint32_t max_reply = 4096;
  uint32_t depth = 0;
  uint32_t max_clients = 0;
};

// One request taken by RpcService::Recv: its bytes are in the service's
// mapping of its rings (valid until it is answered).
struct RpcRequest {
  uint64_t id = 0;
  absl::Span<const uint8_t> data;
  uint32_t client_node = 0;
  bool oneway = false;  // a message: Release it, no reply
};

class RpcService {
 public:
  static absl::StatusOr<RpcService> Register(const Lite& lite,
                                             absl::string_view name,
                                             const ServiceOptions& options);
  RpcService(RpcService&& other) noexcept;
  RpcService& operator=(RpcService&& other) noexcept;
  RpcService(const RpcService&) = delete;
  RpcService& operator=(const RpcService&) = delete;
  // Unregisters (callers get ECONNREFUSED); errors ignored: Unregister().
  ~RpcService();

  // Takes up to out.size() (1..64) requests, waiting up to timeout_ms for
  // the first (0: not at all); how many (0 on a timeout).
  absl::StatusOr<size_t> Recv(absl::Span<RpcRequest> out,
                              uint32_t timeout_ms) const;
  // Answers a call with `reply`: sent in place (no copy) when it lies in
  // the request's own slot of the mapping, else copied there first.
  absl::Status Reply(const RpcRequest& request,
                     absl::Span<const uint8_t> reply) const;
  // Gives a message's slot back to its sender.
  absl::Status Release(const RpcRequest& request) const;
  absl::Status Unregister();

  // The reply to one call (or, for a message, ignored). An error answers
  // the caller with an empty reply: the wire carries no status of the
  // application's (put one in the reply bytes if callers need it).
  using Handler =
      std::function<absl::StatusOr<std::string>(const RpcRequest& request)>;
  // Serves with `threads` threads (1..64), each taking up to 16 requests at
  // a time, until Stop() (from any thread, a handler too); returns the
  // first error that stopped a thread (an unregistered service included),
  // else OK. Requests are answered once each, in any order.
  absl::Status Serve(int threads, const Handler& handler);
  void Stop() { stop_->store(true); }

  const std::string& name() const { return name_; }
  uint64_t service_id() const { return info_.service_id; }
  uint32_t port() const { return info_.port; }
  const lite_service_info& info() const { return info_; }

 private:
  RpcService(std::shared_ptr<lite_ctx> ctx, std::string name,
             lite_service_t service, const lite_service_info& info)
      : ctx_(std::move(ctx)),
        name_(std::move(name)),
        service_(service),
        info_(info) {}

  std::shared_ptr<lite_ctx> ctx_;
  std::string name_;
  lite_service_t service_ = 0;
  lite_service_info info_{};
  std::shared_ptr<std::atomic<bool>> stop_ =
      std::make_shared<std::atomic<bool>>(false);
};

class RpcClient {
 public:
  static absl::StatusOr<RpcClient> Open(const Lite& lite,
                                        absl::string_view name);
  RpcClient(RpcClient&& other) noexcept;
  RpcClient& operator=(RpcClient&& other) noexcept;
  RpcClient(const RpcClient&) = delete;
  RpcClient& operator=(const RpcClient&) = delete;
  ~RpcClient();

  // Sends `request` and waits for the reply, copied into `reply`; returns
  // its length. timeout_ms 0: lite.ko's rpc_timeout_ms.
  absl::StatusOr<size_t> Call(absl::Span<const uint8_t> request,
                              absl::Span<uint8_t> reply,
                              uint32_t timeout_ms = 0) const;
  // Many calls at once from this thread: as many in flight as the node's
  // credits allow (at most 64), their replies collected in batches, one
  // system call per submit and one per batch collected. results[i] is
  // reply i's length or its call's error; replies[i] must be as many as
  // requests. timeout_ms bounds each call, as Call's.
  std::vector<absl::StatusOr<size_t>> CallAll(
      absl::Span<const absl::Span<const uint8_t>> requests,
      absl::Span<const absl::Span<uint8_t>> replies,
      uint32_t timeout_ms = 0) const;
  // A one-way message; returns once the server's node has it.
  absl::Status Send(absl::Span<const uint8_t> message,
                    uint32_t timeout_ms = 0) const;
  absl::Status Close();

  const std::string& name() const { return name_; }
  const lite_service_peer& peer() const { return peer_; }

 private:
  RpcClient(std::shared_ptr<lite_ctx> ctx, std::string name,
            lite_service_t service, const lite_service_peer& peer)
      : ctx_(std::move(ctx)),
        name_(std::move(name)),
        service_(service),
        peer_(peer) {}

  std::shared_ptr<lite_ctx> ctx_;
  std::string name_;
  lite_service_t service_ = 0;
  lite_service_peer peer_{};
};

}  // namespace lite

#endif  // LITE_API_LITE_RPC_HPP_
