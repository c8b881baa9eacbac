// Unit tests of libLITE's C API: no lite.ko needed. A missing or wrong
// device file, the client-side checks, and (through the fake device) what
// each call puts in its uapi struct and how it reports lite.ko's answers.
#include <pthread.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <set>
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
using ::testing::StrEq;

TEST(OpenTest, MissingDeviceSaysLoadTheModule) {
  lite_ctx* ctx = nullptr;
  EXPECT_EQ(lite_open("/nonexistent/lite-test/dev/lite", &ctx), -ENOENT);
  EXPECT_EQ(ctx, nullptr);
  EXPECT_THAT(lite_message(), HasSubstr("is lite.ko loaded?"));
  EXPECT_THAT(lite_message(), HasSubstr("/nonexistent/lite-test/dev/lite"));
}

TEST(OpenTest, FileThatIsNotALiteDeviceIsENOTTY) {
  lite_ctx* ctx = nullptr;
  EXPECT_EQ(lite_open("/dev/null", &ctx), -ENOTTY);
  EXPECT_EQ(ctx, nullptr);
  EXPECT_THAT(lite_message(), HasSubstr("not a LITE device"));
  EXPECT_THAT(lite_message(), HasSubstr("/dev/null"));
}

TEST(OpenTest, NullOutPointerIsEINVAL) {
  EXPECT_EQ(lite_open("/dev/null", nullptr), -EINVAL);
}

TEST(OpenTest, OtherAbiVersionIsEPROTO) {
  FakeDevice dev;
  dev.set_abi_version(LITE_ABI_VERSION + 1);
  lite_ctx* ctx = nullptr;
  EXPECT_EQ(dev.Open(&ctx), -EPROTO);
  EXPECT_EQ(ctx, nullptr);
  EXPECT_THAT(lite_message(),
              HasSubstr("version " + std::to_string(LITE_ABI_VERSION + 1)));
}

class CApiTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(dev_.Open(&ctx_), 0) << lite_message(); }
  void TearDown() override { lite_close(ctx_); }

  FakeDevice dev_;
  lite_ctx* ctx_ = nullptr;
};

TEST_F(CApiTest, OpenQueriesTheAbiOnceWithZeroedStruct) {
  EXPECT_EQ(dev_.calls(LITE_IOC_QUERY), 1);
  lite_query q = dev_.last<lite_query>(LITE_IOC_QUERY);
  EXPECT_EQ(q.flags, 0u);
  EXPECT_EQ(q.max_devices, 0u);
  EXPECT_EQ(q.reserved, 0u);
  EXPECT_EQ(lite_fd(ctx_), -1);
}

TEST(NameTest, AcceptsWhatTheAbiAllows) {
  EXPECT_EQ(lite_check_name("kv-store"), 0);
  EXPECT_EQ(lite_check_name("a"), 0);
  EXPECT_EQ(lite_check_name("9tables/part.1:x_y-z"), 0);
  EXPECT_EQ(lite_check_name(std::string(LITE_NAME_MAX, 'n').c_str()), 0);
}

TEST(NameTest, RejectsWithAReason) {
  EXPECT_EQ(lite_check_name(nullptr), -EINVAL);
  EXPECT_EQ(lite_check_name(""), -EINVAL);
  EXPECT_THAT(lite_message(), HasSubstr("empty"));
  EXPECT_EQ(lite_check_name(std::string(LITE_NAME_MAX + 1, 'n').c_str()),
            -EINVAL);
  EXPECT_THAT(lite_message(), HasSubstr("the limit is 128"));
  EXPECT_EQ(lite_check_name("-lead"), -EINVAL);
  EXPECT_THAT(lite_message(), HasSubstr("start with a letter or digit"));
  EXPECT_EQ(lite_check_name("a b"), -EINVAL);
  EXPECT_THAT(lite_message(), HasSubstr("0x20 at offset 1"));
  EXPECT_EQ(lite_check_name("ab\n"), -EINVAL);
  EXPECT_THAT(lite_message(), HasSubstr("0x0a at offset 2"));
}

TEST_F(CApiTest, AllocFillsTheStructAndReturnsTheId) {
  dev_.set_handler([](unsigned long req, void* data) {
    EXPECT_EQ(req, LITE_IOC_ALLOC);
    static_cast<struct lite_alloc*>(data)->lmr_id = 42;
    return 0;
  });
  uint64_t id = 0;
  ASSERT_EQ(lite_alloc(ctx_, "kv", 64 << 20, 0640, 3, &id), 0);
  EXPECT_EQ(id, 42u);
  EXPECT_STREQ(lite_message(), "");
  struct lite_alloc a = dev_.last<struct lite_alloc>(LITE_IOC_ALLOC);
  EXPECT_STREQ(a.name, "kv");
  EXPECT_EQ(a.size_bytes, 64u << 20);
  EXPECT_EQ(a.mode, 0640u);
  EXPECT_EQ(a.home_node_id, 3u);
  EXPECT_EQ(a.flags, 0u);
  EXPECT_EQ(a.reserved, 0u);
  // The rest of the name buffer is zero, not stack garbage.
  for (size_t i = 2; i < sizeof(a.name); ++i) ASSERT_EQ(a.name[i], 0) << i;
}

TEST_F(CApiTest, AllocReportsTheKernelErrnoAndMessage) {
  dev_.set_handler([](unsigned long, void* data) {
    std::strcpy(static_cast<struct lite_alloc*>(data)->message,
                "node 2 has 12 MiB of its 64 MiB quota left");
    return -ENOSPC;
  });
  uint64_t id = 7;
  EXPECT_EQ(lite_alloc(ctx_, "big", 1 << 30, 0600, 2, &id), -ENOSPC);
  EXPECT_EQ(id, 7u);  // untouched on failure
  EXPECT_THAT(lite_message(),
              StrEq("node 2 has 12 MiB of its 64 MiB quota left"));
}

TEST_F(CApiTest, AllocRejectsBadArgumentsBeforeTheIoctl) {
  EXPECT_EQ(lite_alloc(ctx_, "bad name", 4096, 0600, 0, nullptr), -EINVAL);
  EXPECT_EQ(lite_alloc(ctx_, "kv", 0, 0600, 0, nullptr), -EINVAL);
  EXPECT_THAT(lite_message(), HasSubstr("size cannot be 0"));
  EXPECT_EQ(lite_alloc(ctx_, "kv", LITE_LMR_SIZE_MAX + 1, 0600, 0, nullptr),
            -EINVAL);
  EXPECT_THAT(lite_message(), HasSubstr("LITE_LMR_SIZE_MAX"));
  EXPECT_EQ(lite_alloc(ctx_, "kv", 4096, 0755, 0, nullptr), -EINVAL);
  EXPECT_THAT(lite_message(), HasSubstr("0755"));
  EXPECT_EQ(lite_alloc(nullptr, "kv", 4096, 0600, 0, nullptr), -EINVAL);
  EXPECT_EQ(dev_.calls(LITE_IOC_ALLOC), 0);
}

TEST_F(CApiTest, KernelMessageWithoutNulIsCutNotOverrun) {
  dev_.set_handler([](unsigned long, void* data) {
    auto* f = static_cast<struct lite_free*>(data);
    std::memset(f->message, 'x', sizeof(f->message));
    return -EACCES;
  });
  EXPECT_EQ(lite_free(ctx_, "kv"), -EACCES);
  EXPECT_EQ(std::strlen(lite_message()), LITE_MESSAGE_BUF - 1);
}

TEST_F(CApiTest, MapReturnsHandleAndInfo) {
  dev_.set_handler([](unsigned long req, void* data) {
    auto* m = static_cast<struct lite_map*>(data);
    m->handle = 0x1234;
    m->lmr_id = 9;
    m->size_bytes = 4096;
    m->home_node_id = 2;
    return 0;
  });
  lite_handle_t h = 0;
  lite_lmr_info info{};
  ASSERT_EQ(lite_map(ctx_, "kv", LITE_ACCESS_READ, &h, &info), 0);
  EXPECT_EQ(h, 0x1234u);
  EXPECT_EQ(info.lmr_id, 9u);
  EXPECT_EQ(info.size_bytes, 4096u);
  EXPECT_EQ(info.home_node_id, 2u);
  EXPECT_EQ(info.access, static_cast<uint32_t>(LITE_ACCESS_READ));
  struct lite_map m = dev_.last<struct lite_map>(LITE_IOC_MAP);
  EXPECT_STREQ(m.name, "kv");
  EXPECT_EQ(m.access, static_cast<uint32_t>(LITE_ACCESS_READ));
  EXPECT_EQ(m.flags, 0u);
  EXPECT_EQ(m.reserved, 0u);
}

TEST_F(CApiTest, MapChecksAccessAndOutPointer) {
  lite_handle_t h = 0;
  EXPECT_EQ(lite_map(ctx_, "kv", 0, &h, nullptr), -EINVAL);
  EXPECT_EQ(lite_map(ctx_, "kv", 4, &h, nullptr), -EINVAL);
  EXPECT_THAT(lite_message(), HasSubstr("LITE_ACCESS_READ"));
  EXPECT_EQ(lite_map(ctx_, "kv", LITE_ACCESS_READ, nullptr, nullptr), -EINVAL);
  EXPECT_EQ(dev_.calls(LITE_IOC_MAP), 0);
}

TEST_F(CApiTest, MapDeniedKeepsHandleAndGivesMessage) {
  dev_.set_handler([](unsigned long, void* data) {
    auto* m = static_cast<struct lite_map*>(data);
    m->handle = 99;  // a kernel would not, but the library must not use it
    std::strcpy(m->message, "uid 1000 may not write kv (mode 0640)");
    return -EACCES;
  });
  lite_handle_t h = 5;
  EXPECT_EQ(lite_map(ctx_, "kv", LITE_ACCESS_WRITE, &h, nullptr), -EACCES);
  EXPECT_EQ(h, 5u);
  EXPECT_STREQ(lite_message(), "uid 1000 may not write kv (mode 0640)");
}

TEST_F(CApiTest, OperationsFillTheirStructs) {
  std::atomic<uint64_t> word{100};
  dev_.set_handler([&](unsigned long req, void* data) {
    if (req == LITE_IOC_FAA) {
      auto* a = static_cast<lite_atomic*>(data);
      a->result = word.fetch_add(a->operand);
    } else if (req == LITE_IOC_CAS) {
      auto* a = static_cast<lite_atomic*>(data);
      uint64_t expected = a->operand;
      word.compare_exchange_strong(expected, a->swap);
      a->result = expected;
    } else if (req == LITE_IOC_READ) {
      auto* rw = static_cast<lite_rw*>(data);
      std::memset(reinterpret_cast<void*>(rw->buf), 0xab, rw->length);
    }
    return 0;
  });
  char buf[16] = {};
  ASSERT_EQ(lite_read(ctx_, 7, 64, buf, sizeof(buf)), 0);
  EXPECT_EQ(static_cast<unsigned char>(buf[15]), 0xab);
  lite_rw rw = dev_.last<lite_rw>(LITE_IOC_READ);
  EXPECT_EQ(rw.handle, 7u);
  EXPECT_EQ(rw.offset, 64u);
  EXPECT_EQ(rw.buf, reinterpret_cast<uintptr_t>(buf));
  EXPECT_EQ(rw.length, sizeof(buf));
  EXPECT_EQ(rw.flags, 0u);
  EXPECT_EQ(rw.priority, 0u);

  ASSERT_EQ(lite_write(ctx_, 8, 128, buf, 3), 0);
  rw = dev_.last<lite_rw>(LITE_IOC_WRITE);
  EXPECT_EQ(rw.handle, 8u);
  EXPECT_EQ(rw.offset, 128u);
  EXPECT_EQ(rw.length, 3u);

  ASSERT_EQ(lite_memset(ctx_, 7, 8, 0xfe, 1000), 0);
  struct lite_memset ms = dev_.last<struct lite_memset>(LITE_IOC_MEMSET);
  EXPECT_EQ(ms.value, 0xfeu);
  EXPECT_EQ(ms.length, 1000u);
  EXPECT_EQ(ms.offset, 8u);
  EXPECT_EQ(ms.reserved, 0u);

  ASSERT_EQ(lite_memcpy(ctx_, 1, 10, 2, 20, 30), 0);
  struct lite_memcpy mc = dev_.last<struct lite_memcpy>(LITE_IOC_MEMCPY);
  EXPECT_EQ(mc.dst_handle, 1u);
  EXPECT_EQ(mc.dst_offset, 10u);
  EXPECT_EQ(mc.src_handle, 2u);
  EXPECT_EQ(mc.src_offset, 20u);
  EXPECT_EQ(mc.length, 30u);

  uint64_t old = 0;
  ASSERT_EQ(lite_faa(ctx_, 7, 16, 5, &old), 0);
  EXPECT_EQ(old, 100u);
  lite_atomic at = dev_.last<lite_atomic>(LITE_IOC_FAA);
  EXPECT_EQ(at.offset, 16u);
  EXPECT_EQ(at.operand, 5u);
  EXPECT_EQ(at.swap, 0u);  // FAA: must be 0

  ASSERT_EQ(lite_cas(ctx_, 7, 16, 1, 2, &old), 0);  // no swap
  EXPECT_EQ(old, 105u);
  ASSERT_EQ(lite_cas(ctx_, 7, 16, 105, 7, &old), 0);  // swap
  EXPECT_EQ(old, 105u);
  EXPECT_EQ(word.load(), 7u);
  at = dev_.last<lite_atomic>(LITE_IOC_CAS);
  EXPECT_EQ(at.operand, 105u);
  EXPECT_EQ(at.swap, 7u);
}

TEST_F(CApiTest, OperationErrorsPassThroughWithAnEmptyMessage) {
  dev_.set_handler([](unsigned long, void*) { return -ESTALE; });
  lite_check_name("");  // leaves a message behind
  ASSERT_STRNE(lite_message(), "");
  uint64_t old = 77;
  EXPECT_EQ(lite_faa(ctx_, 1, 0, 1, &old), -ESTALE);
  EXPECT_EQ(old, 77u);
  EXPECT_STREQ(lite_message(), "");
  char b;
  EXPECT_EQ(lite_read(ctx_, 1, 0, &b, 1), -ESTALE);
  EXPECT_EQ(lite_unmap(ctx_, 1), -ESTALE);
  EXPECT_EQ(lite_read(nullptr, 1, 0, &b, 1), -EINVAL);
}

TEST_F(CApiTest, PrioritySetsAndReads) {
  dev_.set_handler([](unsigned long, void* data) {
    auto* a = static_cast<lite_priority_args*>(data);
    if (a->priority == 0) a->priority = LITE_PRIO_LOW;
    a->high_allowed = 1;
    return 0;
  });
  ASSERT_EQ(lite_set_priority(ctx_, LITE_PRIO_HIGH), 0);
  lite_priority_args a = dev_.last<lite_priority_args>(LITE_IOC_PRIORITY);
  EXPECT_EQ(a.priority, static_cast<uint32_t>(LITE_PRIO_HIGH));
  EXPECT_EQ(a.flags | a.reserved | a.high_allowed, 0u);
  uint32_t prio = 0;
  int high = 0;
  ASSERT_EQ(lite_get_priority(ctx_, &prio, &high), 0);
  EXPECT_EQ(dev_.last<lite_priority_args>(LITE_IOC_PRIORITY).priority, 0u)
      << "reading asks with 0, which changes nothing";
  EXPECT_EQ(prio, static_cast<uint32_t>(LITE_PRIO_LOW));
  EXPECT_EQ(high, 1);
  EXPECT_EQ(lite_get_priority(ctx_, nullptr, nullptr), 0);
}

TEST_F(CApiTest, PriorityRefusesNonPrioritiesBeforeTheIoctl) {
  for (uint32_t p : {0u, 3u, 0xffffffffu}) {
    EXPECT_EQ(lite_set_priority(ctx_, p), -EINVAL) << p;
    EXPECT_THAT(lite_message(), HasSubstr("LITE_PRIO_HIGH"));
  }
  EXPECT_EQ(dev_.calls(LITE_IOC_PRIORITY), 0);
}

TEST_F(CApiTest, HighPriorityRefusedSaysWhoMayHaveIt) {
  dev_.set_handler([](unsigned long, void*) { return -EPERM; });
  EXPECT_EQ(lite_set_priority(ctx_, LITE_PRIO_HIGH), -EPERM);
  EXPECT_THAT(lite_message(), HasSubstr("CAP_SYS_NICE"));
}

TEST_F(CApiTest, UnmapPassesTheHandle) {
  dev_.set_handler([](unsigned long, void*) { return 0; });
  ASSERT_EQ(lite_unmap(ctx_, 0xabcdef), 0);
  struct lite_unmap u = dev_.last<struct lite_unmap>(LITE_IOC_UNMAP);
  EXPECT_EQ(u.handle, 0xabcdefu);
  EXPECT_EQ(u.flags, 0u);
  EXPECT_EQ(u.reserved, 0u);
}

TEST_F(CApiTest, MembersChecksAndFills) {
  dev_.set_handler([](unsigned long, void* data) {
    auto* n = static_cast<lite_node_info*>(data);
    n->node_id = 3;
    n->incarnation = 11;
    n->num_members = 3;
    auto* m = reinterpret_cast<lite_member*>(n->members);
    for (uint32_t i = 0; i < n->max_members && i < 3; ++i) {
      m[i] = lite_member{i + 1, LITE_PEER_CONNECTED, 10 + i};
    }
    return 0;
  });
  uint32_t id = 0;
  uint64_t inc = 0;
  ASSERT_EQ(lite_node_id(ctx_, &id, &inc), 0);
  EXPECT_EQ(id, 3u);
  EXPECT_EQ(inc, 11u);
  EXPECT_EQ(dev_.last<lite_node_info>(LITE_IOC_NODE).max_members, 0u);

  lite_member m[2] = {};
  uint32_t num = 0;
  ASSERT_EQ(lite_members(ctx_, m, 2, &num), 0);
  EXPECT_EQ(num, 3u);  // more than fit: the caller retries
  EXPECT_EQ(m[1].incarnation, 11u);

  int before = dev_.calls(LITE_IOC_NODE);
  EXPECT_EQ(lite_members(ctx_, nullptr, 2, &num), -EINVAL);
  EXPECT_EQ(lite_members(ctx_, m, LITE_MEMBERS_MAX + 1, &num), -EINVAL);
  EXPECT_EQ(lite_members(ctx_, m, 2, nullptr), -EINVAL);
  EXPECT_EQ(dev_.calls(LITE_IOC_NODE), before);
}

TEST_F(CApiTest, NodeLookupByNameSendsTheNameAndNoFlags) {
  dev_.set_nodes({{1, "node1"}, {3, "node2"}, {4, ""}});
  uint32_t id = 0;
  ASSERT_EQ(lite_node_lookup(ctx_, "node2", &id), 0) << lite_message();
  EXPECT_EQ(id, 3u);
  EXPECT_STREQ(lite_message(), "");
  const auto sent = dev_.last<struct lite_node_lookup>(LITE_IOC_NODE_LOOKUP);
  EXPECT_STREQ(sent.name, "node2");
  EXPECT_EQ(sent.node_id, 0u);
  EXPECT_EQ(sent.flags, 0u);
  // The rest of the name field is zero: nothing of the stack goes to lite.ko.
  for (size_t i = 5; i < sizeof(sent.name); ++i) EXPECT_EQ(sent.name[i], 0);

  id = 99;
  EXPECT_EQ(lite_node_lookup(ctx_, "node9", &id), -ENOENT);
  EXPECT_EQ(id, 99u);  // untouched on failure
  EXPECT_THAT(lite_message(),
              HasSubstr("neither this node nor any peer is named \"node9\""));
}

TEST_F(CApiTest, NodeLookupRejectsBadNamesBeforeTheIoctl) {
  dev_.set_nodes({{1, "node1"}});
  uint32_t id = 0;
  const std::string too_long(LITE_NODE_NAME_MAX + 1, 'a');
  for (const char* bad : {"", "-x", "a/b", "a:b", too_long.c_str()}) {
    EXPECT_EQ(lite_node_lookup(ctx_, bad, &id), -EINVAL) << bad;
    EXPECT_THAT(lite_message(), HasSubstr("the node name")) << bad;
  }
  EXPECT_EQ(lite_node_lookup(ctx_, nullptr, &id), -EINVAL);
  EXPECT_EQ(lite_node_lookup(ctx_, "node1", nullptr), -EINVAL);
  EXPECT_EQ(lite_node_lookup(nullptr, "node1", &id), -EINVAL);
  EXPECT_EQ(dev_.calls(LITE_IOC_NODE_LOOKUP), 0);
  const std::string longest(LITE_NODE_NAME_MAX, 'a');
  EXPECT_EQ(lite_node_lookup(ctx_, longest.c_str(), &id), -ENOENT);
}

TEST_F(CApiTest, NodeNameByIdFitsOrSaysERANGE) {
  dev_.set_nodes({{1, "node1"}, {3, "node2"}, {4, ""}});
  char buf[LITE_NODE_NAME_BUF];
  ASSERT_EQ(lite_node_name(ctx_, 3, buf, sizeof(buf)), 0) << lite_message();
  EXPECT_STREQ(buf, "node2");
  const auto sent = dev_.last<struct lite_node_lookup>(LITE_IOC_NODE_LOOKUP);
  EXPECT_EQ(sent.name[0], 0);  // by id
  EXPECT_EQ(sent.node_id, 3u);
  EXPECT_EQ(sent.flags, 0u);

  ASSERT_EQ(lite_node_name(ctx_, 4, buf, sizeof(buf)), 0);
  EXPECT_STREQ(buf, "");  // unnamed
  char small[5];
  EXPECT_EQ(lite_node_name(ctx_, 3, small, sizeof(small)), -ERANGE);
  EXPECT_STREQ(small, "");
  EXPECT_THAT(lite_message(), HasSubstr("needs 6 bytes; the buffer has 5"));
  char exact[6];
  EXPECT_EQ(lite_node_name(ctx_, 3, exact, sizeof(exact)), 0);
  EXPECT_STREQ(exact, "node2");

  EXPECT_EQ(lite_node_name(ctx_, 0, buf, sizeof(buf)), -ENOENT);
  EXPECT_EQ(lite_node_name(ctx_, 7, buf, sizeof(buf)), -ENOENT);
  EXPECT_THAT(lite_message(), HasSubstr("node 7"));
  const int before = dev_.calls(LITE_IOC_NODE_LOOKUP);
  EXPECT_EQ(lite_node_name(ctx_, 3, nullptr, 8), -EINVAL);
  EXPECT_EQ(lite_node_name(ctx_, 3, buf, 0), -EINVAL);
  EXPECT_EQ(dev_.calls(LITE_IOC_NODE_LOOKUP), before);
}

TEST_F(CApiTest, NodeLookupBeforeTheIdentityOrOnAnOldModule) {
  dev_.set_nodes({{1, "node1"}}, /*identity_set=*/false);
  uint32_t id = 0;
  char buf[LITE_NODE_NAME_BUF];
  EXPECT_EQ(lite_node_lookup(ctx_, "node1", &id), -ENOTCONN);
  EXPECT_THAT(lite_message(), HasSubstr("identity is not set"));
  EXPECT_EQ(lite_node_name(ctx_, 1, buf, sizeof(buf)), -ENOTCONN);

  // A lite.ko older than node names has no such ioctl.
  FakeDevice old;
  lite_ctx* ctx = nullptr;
  ASSERT_EQ(old.Open(&ctx), 0);
  EXPECT_EQ(lite_node_lookup(ctx, "node1", &id), -ENOTTY);
  EXPECT_THAT(lite_message(), HasSubstr("predates node names"));
  lite_close(ctx);
}

TEST_F(CApiTest, ManyThreadsShareOneContext) {
  std::atomic<uint64_t> word{0};
  dev_.set_handler([&](unsigned long, void* data) {
    auto* a = static_cast<lite_atomic*>(data);
    a->result = word.fetch_add(a->operand);
    return 0;
  });
  constexpr int kThreads = 4, kCount = 2000;
  std::vector<std::vector<uint64_t>> olds(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCount; ++i) {
        uint64_t old = ~0ull;
        ASSERT_EQ(lite_faa(ctx_, 1, 0, 1, &old), 0);
        olds[t].push_back(old);
      }
    });
  }
  for (auto& th : threads) th.join();
  std::set<uint64_t> all;
  for (auto& v : olds) all.insert(v.begin(), v.end());
  EXPECT_EQ(all.size(), size_t{kThreads * kCount});
  EXPECT_EQ(*all.rbegin(), uint64_t{kThreads * kCount - 1});
}

TEST(MessageTest, IsPerThread) {
  lite_check_name("");
  std::string other;
  std::thread([&] {
    lite_check_name("a b");
    other = lite_message();
  }).join();
  EXPECT_THAT(lite_message(), HasSubstr("empty"));
  EXPECT_THAT(other, HasSubstr("0x20 at offset 1"));
}

TEST(ErrnoNameTest, NamesPositiveAndNegative) {
  EXPECT_STREQ(lite_errno_name(EACCES), "EACCES");
  EXPECT_STREQ(lite_errno_name(-ESTALE), "ESTALE");
  EXPECT_STREQ(lite_errno_name(-EHOSTDOWN), "EHOSTDOWN");
  EXPECT_STREQ(lite_errno_name(-EDQUOT), "EDQUOT");
  EXPECT_STREQ(lite_errno_name(0), "OK");
  EXPECT_STREQ(lite_errno_name(4000), "E?");
}

}  // namespace
}  // namespace lite::testing
