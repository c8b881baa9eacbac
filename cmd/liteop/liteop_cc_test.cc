// liteop in-process against the fake device (api/fake_device.h): what each
// command sends to lite.ko, its key=value and JSON output, exit codes.
// liteop_test.sh covers the binary on a host without lite.ko.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <sstream>

#include "api/fake_device.h"
#include "cmd/liteop/liteop.h"

namespace lite::liteop {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

class LiteopTest : public ::testing::Test {
 protected:
  int Run(std::vector<std::string> args) {
    out_.str("");
    err_.str("");
    return RunLiteop(args, out_, err_, [this](const std::string& path) {
      opened_ = path;
      lite_ctx* ctx = nullptr;
      const int e = dev_.Open(&ctx);
      if (e != 0) return absl::StatusOr<lite::Lite>(ErrnoToStatus(e, "open"));
      return absl::StatusOr<lite::Lite>(lite::Lite::Adopt(ctx));
    });
  }

  testing::FakeDevice dev_;
  std::string opened_;
  std::ostringstream out_, err_;
};

TEST_F(LiteopTest, AllocSendsSizeModeAndHome) {
  dev_.set_handler([](unsigned long request, void* data) {
    if (request != LITE_IOC_ALLOC) return -ENOTTY;
    static_cast<struct lite_alloc*>(data)->lmr_id = (uint64_t{2} << 32) | 1;
    return 0;
  });
  ASSERT_EQ(Run({"alloc", "kv", "64k", "--home", "2", "--mode=0644", "--device",
                 "/dev/x"}),
            0)
      << err_.str();
  EXPECT_EQ(out_.str(), "lmr_id=8589934593 name=kv size=65536\n");
  EXPECT_EQ(opened_, "/dev/x");
  const auto sent = dev_.last<struct lite_alloc>(LITE_IOC_ALLOC);
  EXPECT_STREQ(sent.name, "kv");
  EXPECT_EQ(sent.size_bytes, 65536u);
  EXPECT_EQ(sent.mode, 0644u);
  EXPECT_EQ(sent.home_node_id, 2u);
  ASSERT_EQ(Run({"-o", "json", "alloc", "kv", "1M"}), 0) << err_.str();
  EXPECT_EQ(out_.str(),
            "{\"lmr_id\": 8589934593, \"name\": \"kv\", \"size\": 1048576}\n");
  EXPECT_EQ(opened_, LITE_DEVICE_PATH);
}

TEST_F(LiteopTest, UsageErrorsComeBeforeTheDevice) {
  EXPECT_EQ(Run({"alloc", "kv", "12Q"}), 2);
  EXPECT_EQ(err_.str(),
            "liteop: SIZE: '12Q' is not a size (a number with an optional K, "
            "M, G or T, e.g. 4096, 64K, 1GiB; or 0x hex) (see 'liteop alloc "
            "--help')\n");
  EXPECT_EQ(Run({"faa", "kv", "0", "1", "--threads", "0"}), 2);
  EXPECT_THAT(err_.str(), HasSubstr("--threads: 1..256, not 0"));
  EXPECT_EQ(Run({"read", "kv", "0", "8", "-o", "json"}), 2);
  EXPECT_THAT(err_.str(), HasSubstr("raw bytes have no JSON form"));
  EXPECT_EQ(Run({"write", "kv", "0", "--data", "x", "--hex"}), 2);
  EXPECT_THAT(err_.str(), HasSubstr("--hex does not apply to 'write'"));
  EXPECT_EQ(Run({"alloc", "bad name", "4K"}), 2);
  EXPECT_THAT(err_.str(), HasSubstr("NAME \"bad name\" has character 0x20"));
  EXPECT_EQ(dev_.calls(LITE_IOC_QUERY), 0);
}

TEST_F(LiteopTest, KernelEinvalExitsOneNotTwo) {
  dev_.set_handler([](unsigned long request, void* data) {
    if (request != LITE_IOC_ALLOC) return -ENOTTY;
    std::strcpy(static_cast<struct lite_alloc*>(data)->message, "size 0");
    return -EINVAL;
  });
  EXPECT_EQ(Run({"alloc", "kv", "0"}), 1);
  EXPECT_THAT(err_.str(), StartsWith("liteop: alloc \"kv\": Invalid argument "
                                     "(EINVAL)"));
}

TEST_F(LiteopTest, CasAndChecksumRecords) {
  dev_.set_handler([](unsigned long request, void* data) {
    if (request == LITE_IOC_MAP) {
      auto* m = static_cast<struct lite_map*>(data);
      m->handle = 7;
      m->size_bytes = 4096;
      m->home_node_id = 2;
      return 0;
    }
    if (request == LITE_IOC_CAS) {
      static_cast<struct lite_atomic*>(data)->result = 5;
      return 0;
    }
    return request == LITE_IOC_UNMAP ? 0 : -ENOTTY;
  });
  ASSERT_EQ(Run({"cas", "kv", "0", "5", "9"}), 0) << err_.str();
  EXPECT_EQ(out_.str(), "old=5 swapped=yes\n");
  ASSERT_EQ(Run({"cas", "kv", "0", "4", "9", "-o", "json"}), 0) << err_.str();
  EXPECT_EQ(out_.str(), "{\"old\": 5, \"swapped\": false}\n");
  ASSERT_EQ(Run({"checksum", "--data", "hello"}), 0);
  EXPECT_EQ(out_.str(), "length=5 fnv1a64=a430d84680aabd0b\n");
}

TEST_F(LiteopTest, HomeByNameOrId) {
  dev_.set_nodes({{1, "node1"}, {3, "node2"}});
  dev_.set_handler([](unsigned long request, void* data) {
    if (request != LITE_IOC_ALLOC) return -ENOTTY;
    static_cast<struct lite_alloc*>(data)->lmr_id = 9;
    return 0;
  });
  ASSERT_EQ(Run({"alloc", "kv", "1M", "--home", "node2"}), 0) << err_.str();
  EXPECT_EQ(dev_.last<struct lite_alloc>(LITE_IOC_ALLOC).home_node_id, 3u);
  ASSERT_EQ(Run({"alloc", "kv", "1M", "--home", "1"}), 0) << err_.str();
  EXPECT_EQ(dev_.last<struct lite_alloc>(LITE_IOC_ALLOC).home_node_id, 1u);
  EXPECT_EQ(dev_.calls(LITE_IOC_NODE_LOOKUP), 1);  // an id needs no lookup

  EXPECT_EQ(Run({"alloc", "kv", "1M", "--home", "node9"}), 1);
  EXPECT_EQ(err_.str(),
            "liteop: node \"node9\": No such file or directory (ENOENT): "
            "neither this node nor any peer is named \"node9\"\n");
  EXPECT_EQ(Run({"alloc", "kv", "1M", "--home", "a/b"}), 1);
  EXPECT_THAT(err_.str(), HasSubstr("(EINVAL): the node name \"a/b\""));
  EXPECT_EQ(Run({"alloc", "kv", "1M", "--home", "99999999999"}), 2);
  EXPECT_THAT(err_.str(), HasSubstr("--home: node id '99999999999' is more"));
}

TEST_F(LiteopTest, NodeAndMapShowNamesFirst) {
  dev_.set_nodes({{1, "node1"}, {3, "node2"}, {4, ""}});
  dev_.set_handler([](unsigned long request, void* data) {
    if (request == LITE_IOC_NODE) {
      auto* n = static_cast<struct lite_node_info*>(data);
      n->node_id = 1;
      n->incarnation = 7;
      n->num_members = 3;
      auto* m = reinterpret_cast<lite_member*>(n->members);
      const uint32_t ids[] = {1, 3, 4};
      for (uint32_t i = 0; i < n->max_members && i < 3; ++i) {
        m[i] = lite_member{ids[i], LITE_PEER_CONNECTED, 7};
      }
      return 0;
    }
    if (request == LITE_IOC_MAP) {
      auto* m = static_cast<struct lite_map*>(data);
      m->handle = 5;
      m->lmr_id = 6;
      m->size_bytes = 4096;
      m->home_node_id = 3;
      return 0;
    }
    return request == LITE_IOC_UNMAP ? 0 : -ENOTTY;
  });
  ASSERT_EQ(Run({"node"}), 0) << err_.str();
  EXPECT_EQ(out_.str(),
            "name=node1 node_id=1 incarnation=7 members=3\n"
            "member name=node1 node_id=1 incarnation=7 state=connected\n"
            "member name=node2 node_id=3 incarnation=7 state=connected\n"
            "member node_id=4 incarnation=7 state=connected\n");
  ASSERT_EQ(Run({"node", "-o", "json"}), 0) << err_.str();
  EXPECT_THAT(out_.str(),
              StartsWith("{\"name\": \"node1\", \"node_id\": 1, "
                         "\"incarnation\": 7, \"members\": [{\"name\": "
                         "\"node1\", \"node_id\": 1,"));
  EXPECT_THAT(out_.str(), HasSubstr("{\"name\": \"\", \"node_id\": 4,"));
  ASSERT_EQ(Run({"map", "kv"}), 0) << err_.str();
  EXPECT_EQ(out_.str(),
            "handle=5 lmr_id=6 size=4096 home_name=node2 home=3 access=rw\n");
}

}  // namespace
}  // namespace lite::liteop
