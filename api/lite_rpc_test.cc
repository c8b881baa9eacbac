// Unit tests of libLITE's RPC C API (api/lite_rpc.h) against the fake
// device: what each call puts in its uapi struct, what it hands back from
// lite.ko's answer, and what it refuses before any ioctl.
#include "api/lite_rpc.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "api/fake_device.h"
#include "api/lite.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace lite::testing {
namespace {

using ::testing::HasSubstr;

class RpcApiTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(dev_.Open(&ctx_), 0) << lite_message(); }
  void TearDown() override { lite_close(ctx_); }

  FakeDevice dev_;
  lite_ctx* ctx_ = nullptr;
};

TEST_F(RpcApiTest, RegisterFillsTheStructAndReportsTheService) {
  dev_.set_handler([](unsigned long request, void* data) {
    if (request != LITE_IOC_RPC_REGISTER) return -ENOTTY;
    auto* r = static_cast<struct lite_rpc_register*>(data);
    r->service = 0x1234;
    r->service_id = 0x200000001;
    r->port = 7;
    r->slot_bytes = 4096;
    r->ring_bytes = 65536;
    r->depth = 16;
    r->max_clients = 16;
    r->map_offset = 1ull << 32;
    r->map_bytes = 16 * 65536;
    return 0;
  });
  lite_service_opts opts = {.mode = 0711,
                            .max_request = 4000,
                            .max_reply = 100,
                            .depth = 0,
                            .max_clients = 0};
  lite_service_t svc = 0;
  lite_service_info info = {};
  ASSERT_EQ(lite_rpc_register(ctx_, "echo", &opts, &svc, &info), 0)
      << lite_message();
  const struct lite_rpc_register sent =
      dev_.last<struct lite_rpc_register>(LITE_IOC_RPC_REGISTER);
  EXPECT_STREQ(sent.name, "echo");
  EXPECT_EQ(sent.mode, 0711u);
  EXPECT_EQ(sent.max_request, 4000u);
  EXPECT_EQ(sent.max_reply, 100u);
  EXPECT_EQ(sent.flags, 0u);
  EXPECT_EQ(svc, 0x1234u);
  EXPECT_EQ(info.service_id, 0x200000001u);
  EXPECT_EQ(info.port, 7u);
  EXPECT_EQ(info.slot_bytes, 4096u);
  EXPECT_EQ(info.map_bytes, 16u * 65536);
  // No real device: nothing is mapped.
  EXPECT_EQ(info.rings, nullptr);
}

TEST_F(RpcApiTest, RegisterRefusesBadArgumentsBeforeTheIoctl) {
  lite_service_opts opts = {.mode = 0711};
  lite_service_t svc = 0;
  lite_service_info info = {};
  EXPECT_EQ(lite_rpc_register(ctx_, "-bad", &opts, &svc, &info), -EINVAL);
  EXPECT_EQ(lite_rpc_register(ctx_, nullptr, &opts, &svc, &info), -EINVAL);
  EXPECT_EQ(lite_rpc_register(ctx_, "ok", nullptr, &svc, &info), -EINVAL);
  opts.mode = 01000;
  EXPECT_EQ(lite_rpc_register(ctx_, "ok", &opts, &svc, &info), -EINVAL);
  EXPECT_THAT(lite_message(), HasSubstr("0777"));
  opts.mode = 0711;
  opts.max_request = LITE_RPC_MSG_MAX + 1;
  EXPECT_EQ(lite_rpc_register(ctx_, "ok", &opts, &svc, &info), -EMSGSIZE);
  EXPECT_EQ(dev_.calls(LITE_IOC_RPC_REGISTER), 0);
}

TEST_F(RpcApiTest, OpenReportsTheServerAndTheManagersRefusal) {
  dev_.set_handler([](unsigned long request, void* data) {
    auto* o = static_cast<struct lite_rpc_open*>(data);
    if (std::string(o->name) == "secret") {
      std::strcpy(o->message, "the other class has no x bit");
      return -EACCES;
    }
    o->service = 99;
    o->service_id = 5;
    o->node_id = 3;
    o->max_request = 10;
    o->max_reply = 20;
    o->depth = 8;
    return 0;
  });
  lite_service_t svc = 0;
  lite_service_peer peer = {};
  ASSERT_EQ(lite_rpc_open(ctx_, "echo", &svc, &peer), 0);
  EXPECT_EQ(svc, 99u);
  EXPECT_EQ(peer.node_id, 3u);
  EXPECT_EQ(peer.depth, 8u);
  EXPECT_EQ(lite_rpc_open(ctx_, "secret", &svc, nullptr), -EACCES);
  EXPECT_THAT(lite_message(), HasSubstr("no x bit"));
}

TEST_F(RpcApiTest, CallPassesTheBuffersAndReturnsTheReplyLength) {
  dev_.set_handler([](unsigned long request, void* data) {
    if (request != LITE_IOC_RPC_CALL) return -ENOTTY;
    auto* c = static_cast<struct lite_rpc_call*>(data);
    c->reply_len = 3;
    return 0;
  });
  char req[5] = "ping", reply[16];
  size_t len = 0;
  ASSERT_EQ(lite_rpc_call(ctx_, 42, req, 4, reply, sizeof(reply), &len, 250),
            0);
  const struct lite_rpc_call sent =
      dev_.last<struct lite_rpc_call>(LITE_IOC_RPC_CALL);
  EXPECT_EQ(sent.service, 42u);
  EXPECT_EQ(sent.request, reinterpret_cast<uintptr_t>(req));
  EXPECT_EQ(sent.reply, reinterpret_cast<uintptr_t>(reply));
  EXPECT_EQ(sent.req_len, 4u);
  EXPECT_EQ(sent.reply_max, sizeof(reply));
  EXPECT_EQ(sent.timeout_ms, 250u);
  EXPECT_EQ(sent.flags, 0u);
  EXPECT_EQ(len, 3u);
  EXPECT_EQ(lite_rpc_call_flags(ctx_, 42, req, 4, reply, 16, nullptr, 0,
                                LITE_RPC_NONBLOCK),
            0);
  EXPECT_EQ(dev_.last<struct lite_rpc_call>(LITE_IOC_RPC_CALL).flags,
            static_cast<uint32_t>(LITE_RPC_NONBLOCK));
  // Over the largest request: refused here, nothing sent.
  const int before = dev_.calls(LITE_IOC_RPC_CALL);
  EXPECT_EQ(
      lite_rpc_call(ctx_, 42, req, LITE_RPC_MSG_MAX + 1, reply, 16, &len, 0),
      -EMSGSIZE);
  EXPECT_EQ(dev_.calls(LITE_IOC_RPC_CALL), before);
}

TEST_F(RpcApiTest, RecvReplyAndReleaseFillTheirStructs) {
  dev_.set_handler([](unsigned long request, void* data) {
    if (request == LITE_IOC_RPC_RECV) {
      auto* r = static_cast<struct lite_rpc_recv*>(data);
      auto* out = reinterpret_cast<lite_rpc_request*>(r->requests);
      out[0] = {.id = 77, .offset = 128, .length = 4, .client_node = 2};
      r->count = 1;
    }
    return 0;
  });
  lite_rpc_request reqs[4];
  uint32_t n = 0;
  ASSERT_EQ(lite_rpc_recv(ctx_, 9, reqs, 4, 100, &n), 0);
  EXPECT_EQ(n, 1u);
  EXPECT_EQ(reqs[0].id, 77u);
  struct lite_rpc_recv sent =
      dev_.last<struct lite_rpc_recv>(LITE_IOC_RPC_RECV);
  EXPECT_EQ(sent.max, 4u);
  EXPECT_EQ(sent.timeout_ms, 100u);
  EXPECT_EQ(sent.reply_id, 0u);
  EXPECT_EQ(lite_rpc_recv(ctx_, 9, reqs, 0, 100, &n), -EINVAL);
  EXPECT_EQ(lite_rpc_recv(ctx_, 9, reqs, LITE_RPC_RECV_MAX + 1, 0, &n),
            -EINVAL);

  char answer[] = "pong";
  ASSERT_EQ(lite_rpc_reply_recv(ctx_, 9, 77, answer, 4, reqs, 4, 0, &n), 0);
  sent = dev_.last<struct lite_rpc_recv>(LITE_IOC_RPC_RECV);
  EXPECT_EQ(sent.reply_id, 77u);
  EXPECT_EQ(sent.reply_data, reinterpret_cast<uintptr_t>(answer));
  EXPECT_EQ(sent.reply_len, 4u);

  ASSERT_EQ(lite_rpc_reply(ctx_, 9, 77, answer, 4), 0);
  struct lite_rpc_reply r =
      dev_.last<struct lite_rpc_reply>(LITE_IOC_RPC_REPLY);
  EXPECT_EQ(r.id, 77u);
  EXPECT_EQ(r.flags, 0u);
  ASSERT_EQ(lite_rpc_release(ctx_, 9, 78), 0);
  r = dev_.last<struct lite_rpc_reply>(LITE_IOC_RPC_REPLY);
  EXPECT_EQ(r.id, 78u);
  EXPECT_EQ(r.flags, static_cast<uint32_t>(LITE_RPC_REPLY_RELEASE));
  EXPECT_EQ(r.len, 0u);
}

TEST_F(RpcApiTest, InPlaceReplyNeedsAPointerIntoTheMapping) {
  dev_.set_handler([](unsigned long, void*) { return 0; });
  char rings[256];
  lite_service_info info = {};
  info.rings = rings;
  info.map_bytes = sizeof(rings);
  ASSERT_EQ(lite_rpc_reply_in_place(ctx_, 9, &info, 5, rings + 64, 8), 0);
  const struct lite_rpc_reply r =
      dev_.last<struct lite_rpc_reply>(LITE_IOC_RPC_REPLY);
  EXPECT_EQ(r.data, 64u);  // an offset in the mapping, not a pointer
  EXPECT_EQ(r.flags, static_cast<uint32_t>(LITE_RPC_REPLY_IN_PLACE));
  char elsewhere[8];
  EXPECT_EQ(lite_rpc_reply_in_place(ctx_, 9, &info, 5, elsewhere, 8), -EINVAL);
  EXPECT_THAT(lite_message(), HasSubstr("not in the service's mapping"));
  info.rings = nullptr;
  EXPECT_EQ(lite_rpc_reply_in_place(ctx_, 9, &info, 5, rings, 8), -EINVAL);
}

TEST_F(RpcApiTest, KernelErrorsComeBackAsNegativeErrnos) {
  dev_.set_handler([](unsigned long, void*) { return -ECONNREFUSED; });
  char b[4] = {};
  EXPECT_EQ(lite_rpc_call(ctx_, 1, b, 4, b, 4, nullptr, 0), -ECONNREFUSED);
  EXPECT_EQ(lite_send(ctx_, 1, b, 4, 0), -ECONNREFUSED);
  EXPECT_STREQ(lite_errno_name(-ECONNREFUSED), "ECONNREFUSED");
  EXPECT_EQ(lite_rpc_call(nullptr, 1, b, 4, b, 4, nullptr, 0), -EINVAL);
}

// The C++ layer: RAII, statuses, in-place replies chosen by address.
TEST(RpcCppTest, ServiceAndClientCloseThemselvesAndMapErrors) {
  FakeDevice dev;
  lite_ctx* ctx = nullptr;
  ASSERT_EQ(dev.Open(&ctx), 0);
  lite::Lite l = lite::Lite::Adopt(ctx);
  dev.set_handler([](unsigned long request, void* data) {
    switch (request) {
      case LITE_IOC_RPC_REGISTER:
        static_cast<struct lite_rpc_register*>(data)->service = 11;
        return 0;
      case LITE_IOC_RPC_OPEN:
        static_cast<struct lite_rpc_open*>(data)->service = 12;
        return 0;
      case LITE_IOC_RPC_CALL:
        return -ECONNREFUSED;
      case LITE_IOC_RPC_SEND:
        return -ETIMEDOUT;
      default:
        return 0;
    }
  });
  {
    absl::StatusOr<lite::RpcService> svc =
        lite::RpcService::Register(l, "echo", {.mode = 0700});
    ASSERT_TRUE(svc.ok()) << svc.status();
    EXPECT_EQ(dev.last<struct lite_rpc_register>(LITE_IOC_RPC_REGISTER).mode,
              0700u);
    absl::StatusOr<lite::RpcClient> c = lite::RpcClient::Open(l, "echo");
    ASSERT_TRUE(c.ok()) << c.status();
    uint8_t buf[8] = {};
    absl::StatusOr<size_t> got = c->Call(buf, absl::MakeSpan(buf));
    EXPECT_EQ(got.status().code(), absl::StatusCode::kUnavailable);
    EXPECT_EQ(lite::StatusErrno(got.status()), ECONNREFUSED);
    EXPECT_EQ(c->Send(buf).code(), absl::StatusCode::kDeadlineExceeded);
    lite::RpcClient moved = std::move(*c);
    EXPECT_EQ(c->Send(buf).code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_EQ(dev.calls(LITE_IOC_RPC_CLOSE), 0);
  }
  // Both handles were closed by their destructors: the client, then the
  // service (its handle 11 last).
  EXPECT_EQ(dev.calls(LITE_IOC_RPC_CLOSE), 2);
  EXPECT_EQ(dev.last<struct lite_rpc_close>(LITE_IOC_RPC_CLOSE).service, 11u);
}

TEST_F(RpcApiTest, AsyncCallAndWaitFillTheirStructs) {
  dev_.set_handler([](unsigned long request, void* data) {
    if (request == LITE_IOC_RPC_CALL) {
      static_cast<struct lite_rpc_call*>(data)->call = 77;
      return 0;
    }
    if (request != LITE_IOC_RPC_WAIT) return -ENOTTY;
    auto* w = static_cast<struct lite_rpc_wait*>(data);
    auto* r = reinterpret_cast<struct lite_rpc_result*>(w->results);
    r[0].error = 0;
    r[0].reply_len = 5;
    r[1].error = -EINPROGRESS;
    w->done = 1;
    return 0;
  });
  char req[4] = "abc", reply[8];
  uint64_t call = 0;
  ASSERT_EQ(lite_rpc_call_async(ctx_, 9, req, 3, reply, sizeof(reply), 40,
                                LITE_RPC_NONBLOCK, &call),
            0);
  EXPECT_EQ(call, 77u);
  const struct lite_rpc_call sent =
      dev_.last<struct lite_rpc_call>(LITE_IOC_RPC_CALL);
  EXPECT_EQ(sent.flags,
            static_cast<uint32_t>(LITE_RPC_ASYNC | LITE_RPC_NONBLOCK));
  EXPECT_EQ(sent.reply, reinterpret_cast<uintptr_t>(reply));
  EXPECT_EQ(sent.timeout_ms, 40u);
  struct lite_rpc_result res[2] = {{77, 0, 0}, {78, 0, 0}};
  uint32_t done = 0;
  ASSERT_EQ(lite_rpc_wait(ctx_, res, 2, 100, LITE_RPC_WAIT_ALL, &done), 0);
  EXPECT_EQ(done, 1u);
  EXPECT_EQ(res[0].reply_len, 5u);
  EXPECT_EQ(res[1].error, -EINPROGRESS);
  const struct lite_rpc_wait w =
      dev_.last<struct lite_rpc_wait>(LITE_IOC_RPC_WAIT);
  EXPECT_EQ(w.count, 2u);
  EXPECT_EQ(w.timeout_ms, 100u);
  EXPECT_EQ(w.flags, static_cast<uint32_t>(LITE_RPC_WAIT_ALL));
  // Refused before the ioctl: no token place, ASYNC given twice, bad counts.
  const int calls = dev_.calls(LITE_IOC_RPC_CALL);
  const int waits = dev_.calls(LITE_IOC_RPC_WAIT);
  EXPECT_EQ(lite_rpc_call_async(ctx_, 9, req, 3, reply, 8, 0, 0, nullptr),
            -EINVAL);
  EXPECT_EQ(
      lite_rpc_call_async(ctx_, 9, req, 3, reply, 8, 0, LITE_RPC_ASYNC, &call),
      -EINVAL);
  EXPECT_EQ(lite_rpc_wait(ctx_, res, 0, 0, 0, &done), -EINVAL);
  EXPECT_EQ(lite_rpc_wait(ctx_, res, LITE_RPC_WAIT_MAX + 1, 0, 0, &done),
            -EINVAL);
  EXPECT_EQ(lite_rpc_wait(ctx_, res, 2, 0, 4, &done), -EINVAL);
  EXPECT_EQ(dev_.calls(LITE_IOC_RPC_CALL), calls);
  EXPECT_EQ(dev_.calls(LITE_IOC_RPC_WAIT), waits);
}

// A fake lite.ko with two credits: async calls past them are EAGAIN with
// LITE_RPC_NONBLOCK; WAIT answers each call with its request reversed,
// but refuses request "bad".
TEST(RpcCppTest, CallAllKeepsTheCreditsBusyAndMatchesEachReplyToItsCall) {
  FakeDevice dev;
  lite_ctx* ctx = nullptr;
  ASSERT_EQ(dev.Open(&ctx), 0);
  lite::Lite l = lite::Lite::Adopt(ctx);
  struct Call {
    std::string request;
    uint8_t* reply;
    uint32_t reply_max;
  };
  std::map<uint64_t, Call> inflight;
  uint64_t next_token = 100;
  size_t most_inflight = 0;
  dev.set_handler([&](unsigned long request, void* data) {
    if (request == LITE_IOC_RPC_OPEN) {
      static_cast<struct lite_rpc_open*>(data)->service = 12;
      return 0;
    }
    if (request == LITE_IOC_RPC_CALL) {
      auto* c = static_cast<struct lite_rpc_call*>(data);
      if (!(c->flags & LITE_RPC_ASYNC)) return -EINVAL;
      if (inflight.size() == 2)
        return (c->flags & LITE_RPC_NONBLOCK) ? -EAGAIN : -ETIMEDOUT;
      c->call = next_token++;
      inflight[c->call] = {
          std::string(reinterpret_cast<const char*>(c->request), c->req_len),
          reinterpret_cast<uint8_t*>(c->reply), c->reply_max};
      most_inflight = std::max(most_inflight, inflight.size());
      return 0;
    }
    if (request == LITE_IOC_RPC_WAIT) {
      auto* w = static_cast<struct lite_rpc_wait*>(data);
      auto* r = reinterpret_cast<struct lite_rpc_result*>(w->results);
      w->done = 0;
      for (uint32_t i = 0; i < w->count; ++i) {
        auto it = inflight.find(r[i].call);
        if (it == inflight.end()) return -EINVAL;
        if (it->second.request == "bad") {
          r[i].error = -ECONNREFUSED;
        } else {
          std::string rev(it->second.request.rbegin(),
                          it->second.request.rend());
          std::memcpy(it->second.reply, rev.data(),
                      std::min<size_t>(rev.size(), it->second.reply_max));
          r[i].error = 0;
          r[i].reply_len = static_cast<uint32_t>(rev.size());
        }
        inflight.erase(it);
        w->done++;
      }
      return 0;
    }
    return 0;
  });
  absl::StatusOr<lite::RpcClient> c = lite::RpcClient::Open(l, "echo");
  ASSERT_TRUE(c.ok()) << c.status();
  std::vector<std::string> texts = {"one", "two", "bad", "four", "five"};
  std::vector<std::vector<uint8_t>> bufs(texts.size(), std::vector<uint8_t>(8));
  std::vector<absl::Span<const uint8_t>> reqs;
  std::vector<absl::Span<uint8_t>> replies;
  for (size_t i = 0; i < texts.size(); ++i) {
    reqs.emplace_back(reinterpret_cast<const uint8_t*>(texts[i].data()),
                      texts[i].size());
    replies.push_back(absl::MakeSpan(bufs[i]));
  }
  std::vector<absl::StatusOr<size_t>> got = c->CallAll(reqs, replies, 500);
  ASSERT_EQ(got.size(), texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    if (texts[i] == "bad") {
      EXPECT_EQ(lite::StatusErrno(got[i].status()), ECONNREFUSED);
      continue;
    }
    ASSERT_TRUE(got[i].ok()) << i << ": " << got[i].status();
    std::string rev(texts[i].rbegin(), texts[i].rend());
    EXPECT_EQ(std::string(bufs[i].begin(), bufs[i].begin() + *got[i]), rev);
  }
  EXPECT_EQ(most_inflight, 2u);  // both credits used, none overrun
  EXPECT_TRUE(inflight.empty());
  EXPECT_EQ(dev.calls(LITE_IOC_RPC_CALL), 5 + dev.calls(LITE_IOC_RPC_WAIT) - 1)
      << "each wait after the first batch makes room for a retried submit";
}

TEST(RpcCppTest, ServeAnswersEachRequestWithItsHandlersReplyUntilStopped) {
  FakeDevice dev;
  lite_ctx* ctx = nullptr;
  ASSERT_EQ(dev.Open(&ctx), 0);
  lite::Lite l = lite::Lite::Adopt(ctx);
  std::atomic<int> handed{0};
  std::mutex mu;
  std::vector<uint64_t> replied;
  dev.set_handler([&](unsigned long request, void* data) {
    if (request == LITE_IOC_RPC_REGISTER) {
      static_cast<struct lite_rpc_register*>(data)->service = 11;
    } else if (request == LITE_IOC_RPC_RECV) {
      auto* r = static_cast<struct lite_rpc_recv*>(data);
      const int k = handed.fetch_add(1);
      if (k < 3) {  // three requests: ids 1..3, one a message
        auto* out = reinterpret_cast<lite_rpc_request*>(r->requests);
        out[0] = {.id = uint64_t(k + 1),
                  .flags = k == 2 ? uint32_t{LITE_RPC_REQ_ONEWAY} : 0u};
        r->count = 1;
      } else {
        r->count = 0;
      }
    } else if (request == LITE_IOC_RPC_REPLY) {
      auto* r = static_cast<struct lite_rpc_reply*>(data);
      std::lock_guard<std::mutex> lock(mu);
      replied.push_back(r->id * 10 + r->len +
                        ((r->flags & LITE_RPC_REPLY_RELEASE) ? 100 : 0));
    }
    return 0;
  });
  absl::StatusOr<lite::RpcService> svc = lite::RpcService::Register(l, "s", {});
  ASSERT_TRUE(svc.ok()) << svc.status();
  std::thread stopper([&] {
    while (handed.load() < 6) std::this_thread::yield();
    svc->Stop();
  });
  absl::Status served = svc->Serve(2, [](const lite::RpcRequest& r) {
    return absl::StatusOr<std::string>(std::string(r.id, 'x'));
  });
  stopper.join();
  EXPECT_TRUE(served.ok()) << served;
  std::sort(replied.begin(), replied.end());
  // id 1 -> 1 byte, id 2 -> 2 bytes, id 3 (a message) released.
  EXPECT_THAT(replied, ::testing::ElementsAre(11, 22, 130));
  EXPECT_FALSE(svc->Serve(0, nullptr).ok());
}

}  // namespace
}  // namespace lite::testing
