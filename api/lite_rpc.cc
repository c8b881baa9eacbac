// libLITE RPC, C++ layer (see lite_rpc.hpp): RAII and absl::Status over the
// C calls, nothing more.
#include "api/lite_rpc.hpp"

#include <cerrno>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace lite {
namespace {

absl::Status Failed(int err, absl::string_view what, absl::string_view name) {
  return ErrnoToStatus(err, absl::StrCat(what, " '", name, "'"),
                       lite_message());
}

absl::Status Gone(absl::string_view name) {
  return absl::FailedPreconditionError(
      absl::StrCat("RPC service '", name, "' is closed here"));
}

}  // namespace

absl::StatusOr<RpcService> RpcService::Register(const Lite& lite,
                                                absl::string_view name,
                                                const ServiceOptions& options) {
  const std::string n(name);
  lite_service_opts opts = {options.mode, options.max_request,
                            options.max_reply, options.depth,
                            options.max_clients};
  lite_service_t service = 0;
  lite_service_info info = {};
  int err = lite_rpc_register(lite.ctx(), n.c_str(), &opts, &service, &info);
  if (err) return Failed(err, "registering RPC service", n);
  return RpcService(lite.ctx_, n, service, info);
}

RpcService::RpcService(RpcService&& other) noexcept
    : ctx_(std::move(other.ctx_)),
      name_(std::move(other.name_)),
      service_(other.service_),
      info_(other.info_) {
  other.ctx_.reset();
}

RpcService& RpcService::operator=(RpcService&& other) noexcept {
  if (this != &other) {
    Unregister().IgnoreError();
    ctx_ = std::move(other.ctx_);
    name_ = std::move(other.name_);
    service_ = other.service_;
    info_ = other.info_;
    other.ctx_.reset();
  }
  return *this;
}

RpcService::~RpcService() { Unregister().IgnoreError(); }

absl::Status RpcService::Unregister() {
  if (!ctx_) return absl::OkStatus();
  int err = lite_rpc_unregister(ctx_.get(), service_, &info_);
  ctx_.reset();
  return err ? Failed(err, "unregistering RPC service", name_)
             : absl::OkStatus();
}

absl::StatusOr<size_t> RpcService::Recv(absl::Span<RpcRequest> out,
                                        uint32_t timeout_ms) const {
  if (!ctx_) return Gone(name_);
  lite_rpc_request reqs[LITE_RPC_RECV_MAX];
  const uint32_t max = static_cast<uint32_t>(
      out.size() < LITE_RPC_RECV_MAX ? out.size() : LITE_RPC_RECV_MAX);
  uint32_t n = 0;
  int err = lite_rpc_recv(ctx_.get(), service_, reqs, max, timeout_ms, &n);
  if (err) return Failed(err, "receiving from RPC service", name_);
  for (uint32_t i = 0; i < n; ++i) {
    const auto* data =
        static_cast<const uint8_t*>(lite_rpc_data(&info_, &reqs[i]));
    out[i] = {reqs[i].id, absl::MakeConstSpan(data, reqs[i].length),
              reqs[i].client_node, (reqs[i].flags & LITE_RPC_REQ_ONEWAY) != 0};
  }
  return n;
}

absl::Status RpcService::Reply(const RpcRequest& request,
                               absl::Span<const uint8_t> reply) const {
  if (!ctx_) return Gone(name_);
  const auto* base = static_cast<const uint8_t*>(info_.rings);
  int err;
  if (base != nullptr && reply.data() >= base &&
      reply.data() + reply.size() <= base + info_.map_bytes) {
    err = lite_rpc_reply_in_place(ctx_.get(), service_, &info_, request.id,
                                  reply.data(), reply.size());
  } else {
    err = lite_rpc_reply(ctx_.get(), service_, request.id, reply.data(),
                         reply.size());
  }
  return err ? Failed(err, "replying on RPC service", name_) : absl::OkStatus();
}

absl::Status RpcService::Release(const RpcRequest& request) const {
  if (!ctx_) return Gone(name_);
  int err = lite_rpc_release(ctx_.get(), service_, request.id);
  return err ? Failed(err, "releasing a message of RPC service", name_)
             : absl::OkStatus();
}

absl::Status RpcService::Serve(int threads, const Handler& handler) {
  if (threads < 1 || threads > 64) {
    return absl::InvalidArgumentError("Serve: threads must be 1..64");
  }
  stop_->store(false);
  std::vector<absl::Status> results(threads);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([this, &handler, &results, t] {
      RpcRequest reqs[16];
      while (!stop_->load()) {
        // A short wait, so that Stop() is seen within 100 ms.
        absl::StatusOr<size_t> n = Recv(absl::MakeSpan(reqs), 100);
        if (!n.ok()) {
          results[t] = n.status();
          return;
        }
        for (size_t i = 0; i < *n; ++i) {
          absl::StatusOr<std::string> reply = handler(reqs[i]);
          absl::Status sent;
          if (reqs[i].oneway) {
            sent = Release(reqs[i]);
          } else {
            const std::string bytes = reply.ok() ? *std::move(reply) : "";
            sent = Reply(reqs[i],
                         absl::MakeConstSpan(
                             reinterpret_cast<const uint8_t*>(bytes.data()),
                             bytes.size()));
          }
          // A caller whose node failed is not the server's failure.
          if (!sent.ok() && StatusErrno(sent) != EHOSTDOWN) {
            results[t] = sent;
            return;
          }
        }
      }
    });
  }
  for (std::thread& t : pool) t.join();
  for (const absl::Status& r : results) {
    if (!r.ok()) return r;
  }
  return absl::OkStatus();
}

absl::StatusOr<RpcClient> RpcClient::Open(const Lite& lite,
                                          absl::string_view name) {
  const std::string n(name);
  lite_service_t service = 0;
  lite_service_peer peer = {};
  int err = lite_rpc_open(lite.ctx(), n.c_str(), &service, &peer);
  if (err) return Failed(err, "opening RPC service", n);
  return RpcClient(lite.ctx_, n, service, peer);
}

RpcClient::RpcClient(RpcClient&& other) noexcept
    : ctx_(std::move(other.ctx_)),
      name_(std::move(other.name_)),
      service_(other.service_),
      peer_(other.peer_) {
  other.ctx_.reset();
}

RpcClient& RpcClient::operator=(RpcClient&& other) noexcept {
  if (this != &other) {
    Close().IgnoreError();
    ctx_ = std::move(other.ctx_);
    name_ = std::move(other.name_);
    service_ = other.service_;
    peer_ = other.peer_;
    other.ctx_.reset();
  }
  return *this;
}

RpcClient::~RpcClient() { Close().IgnoreError(); }

absl::Status RpcClient::Close() {
  if (!ctx_) return absl::OkStatus();
  int err = lite_rpc_close(ctx_.get(), service_);
  ctx_.reset();
  return err ? Failed(err, "closing RPC service", name_) : absl::OkStatus();
}

absl::StatusOr<size_t> RpcClient::Call(absl::Span<const uint8_t> request,
                                       absl::Span<uint8_t> reply,
                                       uint32_t timeout_ms) const {
  if (!ctx_) return Gone(name_);
  size_t len = 0;
  int err = lite_rpc_call(ctx_.get(), service_, request.data(), request.size(),
                          reply.data(), reply.size(), &len, timeout_ms);
  if (err) return Failed(err, "calling RPC service", name_);
  return len;
}

std::vector<absl::StatusOr<size_t>> RpcClient::CallAll(
    absl::Span<const absl::Span<const uint8_t>> requests,
    absl::Span<const absl::Span<uint8_t>> replies, uint32_t timeout_ms) const {
  std::vector<absl::StatusOr<size_t>> results(
      requests.size(), absl::InternalError("not called"));
  if (!ctx_ || replies.size() != requests.size()) {
    absl::Status why =
        ctx_ ? absl::InvalidArgumentError("CallAll needs a reply per request")
             : Gone(name_);
    for (auto& r : results) r = why;
    return results;
  }
  std::vector<lite_rpc_result> pending;
  std::vector<size_t> index;  // of each pending call's request
  pending.reserve(LITE_RPC_WAIT_MAX);
  index.reserve(LITE_RPC_WAIT_MAX);
  size_t next = 0;
  while (next < requests.size() || !pending.empty()) {
    while (next < requests.size() && pending.size() < LITE_RPC_WAIT_MAX) {
      // Without a credit, collect ours first: they hold the credits. Only
      // when none of ours does (other threads hold them) wait for one.
      uint32_t flags = pending.empty() ? 0 : LITE_RPC_NONBLOCK;
      uint64_t call = 0;
      int err = lite_rpc_call_async(
          ctx_.get(), service_, requests[next].data(), requests[next].size(),
          replies[next].data(), replies[next].size(), timeout_ms, flags, &call);
      if (err == -EAGAIN && flags) break;
      if (err) {
        results[next++] = Failed(err, "calling RPC service", name_);
        continue;
      }
      pending.push_back({call, 0, 0});
      index.push_back(next++);
    }
    if (pending.empty()) continue;
    uint32_t done = 0;
    int err = lite_rpc_wait(ctx_.get(), pending.data(),
                            static_cast<uint32_t>(pending.size()), UINT32_MAX,
                            0, &done);
    size_t kept = 0;
    for (size_t i = 0; i < pending.size(); ++i) {
      int call_err = err ? err : pending[i].error;
      if (call_err == -EINPROGRESS) {
        pending[kept] = pending[i];
        index[kept++] = index[i];
        continue;
      }
      if (call_err)
        results[index[i]] = Failed(call_err, "calling RPC service", name_);
      else
        results[index[i]] = static_cast<size_t>(pending[i].reply_len);
    }
    pending.resize(kept);
    index.resize(kept);
  }
  return results;
}

absl::Status RpcClient::Send(absl::Span<const uint8_t> message,
                             uint32_t timeout_ms) const {
  if (!ctx_) return Gone(name_);
  int err = lite_send(ctx_.get(), service_, message.data(), message.size(),
                      timeout_ms);
  return err ? Failed(err, "sending to RPC service", name_) : absl::OkStatus();
}

}  // namespace lite
