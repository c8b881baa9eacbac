// Host tests of the compat layer: its handler table, password checks,
// argument checks and what it asks of lite.ko, against MiniKernel, a small
// in-memory stand-in for lite.ko's LMR calls behind api/fake_device.h.
// The RPC, lock and barrier paths end to end run in the VM cluster
// (tests/vm/compat.sh).
#include <errno.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "api/compat/lite-lib.h"
#include "api/compat/v0_testing.h"
#include "api/fake_device.h"
#include "gtest/gtest.h"
#include "kmod/include/uapi/lite_rpc.h"
#include "kmod/include/uapi/lite_sync.h"

namespace {

using ::lite::testing::FakeDevice;

constexpr uint32_t kThisNode = 7;

// LMRs by name, handles by number, this node and two peers.
class MiniKernel {
 public:
  int Handle(unsigned long request, void* data) {
    std::lock_guard<std::mutex> lock(mu_);
    switch (request) {
      case LITE_IOC_NODE:
        return Node(static_cast<struct lite_node_info*>(data));
      case LITE_IOC_ALLOC: {
        auto* a = static_cast<struct lite_alloc*>(data);
        if (lmrs_.count(a->name)) return -EEXIST;
        lmrs_[a->name].assign(a->size_bytes, 0);
        homes_[a->name] = a->home_node_id;
        return 0;
      }
      case LITE_IOC_MAP: {
        auto* m = static_cast<struct lite_map*>(data);
        if (!lmrs_.count(m->name)) return -ENOENT;
        m->handle = next_handle_++;
        handles_[m->handle] = {m->name, m->access};
        m->size_bytes = lmrs_[m->name].size();
        m->home_node_id = homes_[m->name] ? homes_[m->name] : kThisNode;
        return 0;
      }
      case LITE_IOC_UNMAP:
        return handles_.erase(static_cast<struct lite_unmap*>(data)->handle)
                   ? 0
                   : -EBADF;
      case LITE_IOC_FREE:
        return lmrs_.erase(static_cast<struct lite_free*>(data)->name)
                   ? 0
                   : -ENOENT;
      case LITE_IOC_READ:
      case LITE_IOC_WRITE: {
        auto* rw = static_cast<struct lite_rw*>(data);
        last_priority = rw->priority;
        std::vector<char>* bytes;
        const bool write = request == LITE_IOC_WRITE;
        int err = Target(rw->handle, rw->offset, rw->length,
                         write ? LITE_ACCESS_WRITE : LITE_ACCESS_READ, &bytes);
        if (err) return err;
        auto* buf = reinterpret_cast<char*>(rw->buf);
        if (write)
          std::memcpy(bytes->data() + rw->offset, buf, rw->length);
        else
          std::memcpy(buf, bytes->data() + rw->offset, rw->length);
        return 0;
      }
      case LITE_IOC_MEMSET: {
        auto* m = static_cast<struct lite_memset*>(data);
        std::vector<char>* bytes;
        int err =
            Target(m->handle, m->offset, m->length, LITE_ACCESS_WRITE, &bytes);
        if (err) return err;
        std::memset(bytes->data() + m->offset, m->value, m->length);
        return 0;
      }
      case LITE_IOC_FAA:
      case LITE_IOC_CAS: {
        auto* a = static_cast<struct lite_atomic*>(data);
        std::vector<char>* bytes;
        int err = Target(a->handle, a->offset, 8,
                         LITE_ACCESS_READ | LITE_ACCESS_WRITE, &bytes);
        if (err) return err;
        uint64_t v;
        std::memcpy(&v, bytes->data() + a->offset, 8);
        a->result = v;
        if (request == LITE_IOC_FAA)
          v += a->operand;
        else if (v == a->operand)
          v = a->swap;
        std::memcpy(bytes->data() + a->offset, &v, 8);
        return 0;
      }
      case LITE_IOC_RPC_OPEN: {
        auto* o = static_cast<struct lite_rpc_open*>(data);
        auto it = services.find(o->name);
        if (it == services.end()) return -ENOENT;
        o->node_id = it->second;
        o->service = next_handle_++;
        return 0;
      }
      case LITE_IOC_RPC_CLOSE:
        return 0;
      default:
        return -ENOTTY;
    }
  }

  bool Has(const std::string& name) {
    std::lock_guard<std::mutex> lock(mu_);
    return lmrs_.count(name) != 0;
  }
  std::vector<char> Bytes(const std::string& name) {
    std::lock_guard<std::mutex> lock(mu_);
    return lmrs_[name];
  }
  size_t MapsHeld() {
    std::lock_guard<std::mutex> lock(mu_);
    return handles_.size();
  }
  uint32_t HomeOf(const std::string& name) {
    std::lock_guard<std::mutex> lock(mu_);
    return homes_[name];
  }
  // The LMR names starting with `prefix`.
  std::vector<std::string> Named(const std::string& prefix) {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<std::string> out;
    for (const auto& [name, bytes] : lmrs_)
      if (name.rfind(prefix, 0) == 0) out.push_back(name);
    return out;
  }
  // Makes an LMR as another user on `home` would (not through the layer).
  void Put(const std::string& name, std::vector<char> bytes, uint32_t home) {
    std::lock_guard<std::mutex> lock(mu_);
    lmrs_[name] = std::move(bytes);
    homes_[name] = home;
  }
  uint32_t last_priority = 0;
  bool identity = true;
  std::map<std::string, uint32_t> services;  // name -> its server's node

 private:
  int Node(lite_node_info* n) {
    if (!identity) return -ENOTCONN;
    n->node_id = kThisNode;
    const lite_member members[] = {{kThisNode, LITE_PEER_CONNECTED, 1},
                                   {3, LITE_PEER_CONNECTED, 1},
                                   {9, LITE_PEER_CONNECTING, 1}};
    n->num_members = 3;
    auto* out = reinterpret_cast<lite_member*>(n->members);
    for (uint32_t i = 0; i < 3 && i < n->max_members; i++) out[i] = members[i];
    return 0;
  }
  int Target(uint64_t handle, uint64_t offset, uint64_t length, uint32_t need,
             std::vector<char>** bytes) {
    auto it = handles_.find(handle);
    if (it == handles_.end()) return -EBADF;
    if ((it->second.access & need) != need) return -EACCES;
    auto lmr = lmrs_.find(it->second.name);
    if (lmr == lmrs_.end()) return -ESTALE;
    if (length == 0 || offset + length > lmr->second.size()) return -EINVAL;
    *bytes = &lmr->second;
    return 0;
  }

  struct Mapped {
    std::string name;
    uint32_t access;
  };
  std::mutex mu_;
  std::map<std::string, std::vector<char>> lmrs_;
  std::map<std::string, uint32_t> homes_;
  std::map<uint64_t, Mapped> handles_;
  uint64_t next_handle_ = 100;
};

class V0Test : public ::testing::Test {
 protected:
  void SetUp() override {
    dev_.set_handler([this](unsigned long request, void* data) {
      return kernel_.Handle(request, data);
    });
    ASSERT_EQ(dev_.Open(&ctx_), 0);
    lite_v0_use_context(ctx_);
  }
  void TearDown() override {
    lite_v0_use_context(nullptr);
    lite_close(ctx_);
  }
  // The call failed the original way: -1, errno, a message naming why.
  static void ExpectFailed(int rc, int err, const char* part) {
    EXPECT_EQ(rc, -1);
    EXPECT_EQ(errno, err) << strerror(errno);
    EXPECT_NE(std::string(lite_v0_message()).find(part), std::string::npos)
        << lite_v0_message();
  }

  MiniKernel kernel_;
  FakeDevice dev_;
  lite_ctx* ctx_ = nullptr;
};

TEST_F(V0Test, JoinAndMembershipAreThisNodesIdentity) {
  EXPECT_EQ(userspace_liteapi_join(const_cast<char*>("10.0.0.1"), 0, 1),
            static_cast<int>(kThisNode));
  EXPECT_EQ(userspace_liteapi_get_node_id(), static_cast<int>(kThisNode));
  // This node and node 3; node 9 is still connecting.
  EXPECT_EQ(userspace_liteapi_get_total_node(), 2);
  kernel_.identity = false;
  ExpectFailed(userspace_liteapi_join(const_cast<char*>("x"), 0, 1), ENOTCONN,
               "no identity");
}

TEST_F(V0Test, AllocReadWriteThroughHandlersWithPasswords) {
  int h = userspace_liteapi_alloc_remote_mem(3, 4096, false, 1234);
  ASSERT_GE(h, 1) << lite_v0_message();
  auto names = kernel_.Named("v0/3/lmr/");
  ASSERT_EQ(names.size(), 1u);
  EXPECT_EQ(kernel_.HomeOf(names[0]), 3u);

  char out[6] = "hello", in[6] = {};
  EXPECT_EQ(userspace_liteapi_rdma_write(h, out, 5, 100, 1234), 0);
  EXPECT_EQ(kernel_.last_priority, 0u);
  EXPECT_EQ(userspace_liteapi_rdma_read_high(h, in, 5, 100, 1234), 0);
  EXPECT_EQ(kernel_.last_priority, static_cast<uint32_t>(LITE_PRIO_HIGH));
  EXPECT_STREQ(in, "hello");
  EXPECT_EQ(userspace_liteapi_rdma_write_low(h, out, 5, 0, 1234), 0);
  EXPECT_EQ(kernel_.last_priority, static_cast<uint32_t>(LITE_PRIO_LOW));

  // A wrong password, a handler never given, bounds from lite.ko.
  ExpectFailed(userspace_liteapi_rdma_read(h, in, 5, 0, 1235), EACCES,
               "wrong password");
  ExpectFailed(userspace_liteapi_rdma_read(h + 1000, in, 5, 0, 1234), EBADF,
               "not one this process");
  ExpectFailed(userspace_liteapi_rdma_read(0, in, 5, 0, 1234), EBADF,
               "handler 0");
  ExpectFailed(userspace_liteapi_rdma_read(h, in, 5, 4094, 1234), EINVAL,
               "rdma_read");
}

TEST_F(V0Test, HandlersAreDistinctAndIncreasing) {
  int a = userspace_liteapi_alloc_remote_mem(3, 64, false, 1);
  int b = userspace_liteapi_alloc_remote_mem(3, 64, false, 2);
  ASSERT_GE(a, 1);
  EXPECT_EQ(b, a + 1);
  EXPECT_EQ(kernel_.Named("v0/3/lmr/").size(), 2u);
  ExpectFailed(userspace_liteapi_alloc_remote_mem(3, 0, false, 1), EINVAL,
               "size 0");
}

TEST_F(V0Test, AtomicsAndMemset) {
  int h = userspace_liteapi_alloc_remote_mem(3, 64, true, 0);
  ASSERT_GE(h, 1);
  unsigned long long old = 99;
  EXPECT_EQ(userspace_liteapi_fetch_add(h, &old, 5), 0);
  EXPECT_EQ(old, 0u);
  EXPECT_EQ(userspace_liteapi_fetch_add(h, &old, 5), 0);
  EXPECT_EQ(old, 5u);
  // CAS: 0 when it swapped, 1 when not; the old value either way.
  EXPECT_EQ(userspace_liteapi_compare_swp(h, &old, 10, 42), 0);
  EXPECT_EQ(old, 10u);
  EXPECT_EQ(userspace_liteapi_compare_swp(h, &old, 10, 43), 1);
  EXPECT_EQ(old, 42u);
  EXPECT_EQ(userspace_liteapi_remote_memset(h, 0, 8), 0);
  EXPECT_EQ(userspace_liteapi_fetch_add(h, &old, 0), 0);
  EXPECT_EQ(old, 0u);
  ExpectFailed(userspace_liteapi_memset(h, -1, 8), EINVAL, "offset -1");
  ExpectFailed(userspace_liteapi_fetch_add(1UL << 40, &old, 1), EBADF,
               "not a handler");
}

TEST_F(V0Test, AskTableRefusesWrongPasswordAndPermission) {
  char data[32] = "shared bytes";
  int h = userspace_liteapi_wrap_alloc(data, sizeof(data), 77, 4321);
  ASSERT_GE(h, 1) << lite_v0_message();
  // The record is on this node and holds no password in clear.
  ASSERT_TRUE(kernel_.Has("v0/7/id/77"));
  std::vector<char> rec = kernel_.Bytes("v0/7/id/77");
  int pw = 4321;
  EXPECT_EQ(std::search(rec.begin(), rec.end(), reinterpret_cast<char*>(&pw),
                        reinterpret_cast<char*>(&pw) + sizeof(pw)),
            rec.end());

  int got = userspace_liteapi_ask_lmr(kThisNode, 77, MR_READ_FLAG, 4321);
  ASSERT_GE(got, 1) << lite_v0_message();
  char in[32] = {};
  EXPECT_EQ(userspace_liteapi_rdma_read(got, in, sizeof(in), 0, 4321), 0);
  EXPECT_STREQ(in, "shared bytes");
  // Asked for reading: writing is lite.ko's EACCES.
  ExpectFailed(userspace_liteapi_rdma_write(got, in, 4, 0, 4321), EACCES,
               "rdma_write");

  ExpectFailed(userspace_liteapi_ask_lmr(kThisNode, 77, MR_READ_FLAG, 1),
               EACCES, "MR_ASK_REFUSE");
  ExpectFailed(userspace_liteapi_ask_lmr(kThisNode, 78, MR_READ_FLAG, 4321),
               ENOENT, "MR_ASK_UNKNOWN");
  ExpectFailed(userspace_liteapi_ask_lmr(kThisNode, 77, 0x100, 4321), EINVAL,
               "permission");
  ExpectFailed(userspace_liteapi_ask_lmr(0, 77, MR_READ_FLAG, 4321), EINVAL,
               "node 0");
}

TEST_F(V0Test, AskTableNarrowerPermissionIsUnpermitted) {
  int h = userspace_liteapi_alloc_remote_mem(kThisNode, 64, false, 5);
  ASSERT_GE(h, 1);
  ASSERT_EQ(userspace_liteapi_add_ask_mr_table(9, h, MR_READ_FLAG, 5), 0)
      << lite_v0_message();
  ExpectFailed(userspace_liteapi_ask_lmr(kThisNode, 9, MR_WRITE_FLAG, 5), EPERM,
               "MR_ASK_UNPERMITTED");
  // A live owner keeps its identifier.
  ExpectFailed(userspace_liteapi_add_ask_mr_table(9, h, MR_READ_FLAG, 5),
               EEXIST, "registered by process");
  ExpectFailed(userspace_liteapi_add_ask_mr_table(10, h + 100, MR_READ_FLAG, 5),
               EBADF, "not a handler");
}

TEST_F(V0Test, WrapAllocLeavesNothingWhenTheIdentifierIsTaken) {
  char data[8] = "x";
  ASSERT_GE(userspace_liteapi_wrap_alloc(data, sizeof(data), 5, 1), 1);
  const size_t before = kernel_.Named("v0/7/lmr/").size();
  ExpectFailed(userspace_liteapi_wrap_alloc(data, sizeof(data), 5, 1), EEXIST,
               "registered by process");
  EXPECT_EQ(kernel_.Named("v0/7/lmr/").size(), before);
  ExpectFailed(userspace_liteapi_wrap_alloc(nullptr, 8, 6, 1), EINVAL,
               "needs data");
}

// Review cp-2026-11-28 M5: the names are first-come, so someone else may
// have made "v0/3/..." on another node first. The layer uses a name only
// where the original's (node, ...) could be: on that node.
TEST_F(V0Test, NamesMadeOnAnotherNodeAreRefused) {
  // A squatter's service "node 3, port 4", served by node 9.
  kernel_.services["v0/3/port/4"] = 9;
  ExpectFailed(userspace_liteapi_query_port(3, 4), EACCES,
               "served by node 9, not node 3");
  char buf[8] = "abc";
  ExpectFailed(userspace_liteapi_send_reply_imm(3, 4, buf, 4, buf, 8), EACCES,
               "served by node 9");
  EXPECT_EQ(dev_.calls(LITE_IOC_RPC_CALL), 0);
  // Node 3's own is used.
  kernel_.services["v0/3/port/5"] = 3;
  EXPECT_EQ(userspace_liteapi_query_port(3, 5), 0) << lite_v0_message();

  // Lock 0 of node 3, made on node 9; node 3's lock counter, made on 9.
  remote_spinlock_t lock;
  kernel_.Put("v0/3/lock/0", std::vector<char>(4096), 9);
  ExpectFailed(userspace_liteapi_ask_lock(3, 0, &lock), EACCES,
               "v0/3/lock/0 is on node 9, not node 3");
  kernel_.Put("v0/3/lock-count", std::vector<char>(4096), 9);
  ExpectFailed(userspace_liteapi_create_lock(3, &lock), EACCES,
               "create_lock: v0/3/lock-count is on node 9");
  // The barrier belongs on node 3 (the lowest connected id), made on 9.
  kernel_.Put("v0/barrier", std::vector<char>(4096), 9);
  ExpectFailed(userspace_liteapi_dist_barrier(2), EACCES,
               "dist_barrier: v0/barrier is on node 9, not node 3");
  EXPECT_EQ(dev_.calls(LITE_IOC_SYNC), 0);
  EXPECT_EQ(kernel_.MapsHeld(), 0u);
}

TEST_F(V0Test, AskTableRefusesRecordsOffTheirNodeOrPointingElsewhere) {
  char data[32] = "the squatter's bytes";
  // A genuine record of this node, copied to the name of node 3's
  // identifier 77 on node 9: everything in it checks out but its home.
  ASSERT_GE(userspace_liteapi_wrap_alloc(data, sizeof(data), 77, 4321), 1);
  std::vector<char> rec = kernel_.Bytes("v0/7/id/77");
  kernel_.Put("v0/3/id/77", rec, 9);
  ExpectFailed(userspace_liteapi_ask_lmr(3, 77, MR_READ_FLAG, 4321), EACCES,
               "ask_lmr: v0/3/id/77 is on node 9, not node 3");
  // On node 3, but naming an LMR that is not a region of the layer (the
  // record's name field follows its eight 64-bit fields).
  std::vector<char> other = rec;
  std::memset(other.data() + 64, 0, LITE_NAME_MAX + 1);
  std::strcpy(other.data() + 64, "kvstore");
  kernel_.Put("kvstore", std::vector<char>(64), 3);
  kernel_.Put("v0/3/id/78", other, 3);
  ExpectFailed(userspace_liteapi_ask_lmr(3, 78, MR_READ_FLAG, 4321), EACCES,
               "names \"kvstore\", not a region of this layer");
  // A region name whose LMR is on another node than the name says.
  std::strcpy(other.data() + 64, "v0/3/lmr/1.2.3");
  kernel_.Put("v0/3/lmr/1.2.3", std::vector<char>(64), 9);
  kernel_.Put("v0/3/id/79", other, 3);
  ExpectFailed(userspace_liteapi_ask_lmr(3, 79, MR_READ_FLAG, 4321), EACCES,
               "v0/3/lmr/1.2.3 is on node 9, not node 3");
  // The same record on its node, naming a region on its node: mapped.
  kernel_.Put("v0/3/lmr/1.2.3", std::vector<char>(64), 3);
  EXPECT_GE(userspace_liteapi_ask_lmr(3, 79, MR_READ_FLAG, 4321), 1)
      << lite_v0_message();
}

TEST_F(V0Test, RpcArgumentsAreCheckedBeforeAnythingIsSent) {
  char buf[16] = {};
  uintptr_t d = 0;
  ExpectFailed(userspace_liteapi_register_application(64, 128, 4, nullptr, 0),
               EINVAL, "port 64");
  ExpectFailed(userspace_liteapi_register_application(1, 0, 4, nullptr, 0),
               EINVAL, "max_size_per_message 0");
  ExpectFailed(userspace_liteapi_receive_message(5, buf, 16, &d, 1), EINVAL,
               "not registered");
  ExpectFailed(userspace_liteapi_reply_message(buf, 4, 12345), EINVAL,
               "not a call waiting");
  ExpectFailed(userspace_liteapi_send_reply_imm(3, 1, buf, LIMITATION, buf, 16),
               EMSGSIZE, "size");
  ExpectFailed(userspace_liteapi_send_reply_imm(3, 1, buf, 4, buf, -1),
               EMSGSIZE, "max_ret_size");
  ExpectFailed(userspace_liteapi_send(3, 64, buf, 4), EINVAL, "port 64");
  // No application on node 3's port 1 (lite.ko's ENOENT, said in words).
  ExpectFailed(userspace_liteapi_query_port(3, 1), ENOENT,
               "no application on port 1");
  EXPECT_EQ(dev_.calls(LITE_IOC_RPC_CALL), 0);
}

TEST_F(V0Test, LockAndBarrierArguments) {
  remote_spinlock_t lock;
  ExpectFailed(userspace_liteapi_create_lock(0, &lock), EINVAL, "node id");
  ExpectFailed(userspace_liteapi_ask_lock(3, -1, &lock), EINVAL, "index");
  ExpectFailed(userspace_liteapi_lock(nullptr), EINVAL, "no lock");
  ExpectFailed(userspace_liteapi_dist_barrier(0), EINVAL, "1 ..");
  EXPECT_EQ(dev_.calls(LITE_IOC_SYNC), 0);
}

TEST_F(V0Test, OtherCalls) {
  ExpectFailed(userspace_syscall_test(), ENOSYS, "no such call");
  void* p = userspace_liteapi_alloc_memory(5000);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 4096, 0u);
  EXPECT_EQ(static_cast<char*>(p)[4999], 0);
  munmap(p, 8192);
  EXPECT_EQ(userspace_liteapi_alloc_memory(0), nullptr);
  EXPECT_EQ(stick_this_thread_to_core(-1), EINVAL);
  EXPECT_EQ(stick_this_thread_to_core(0), 0);
}

}  // namespace
