// liteop in-process against the fake device (api/fake_device.h): what each
// command sends to lite.ko, its key=value and JSON output, exit codes.
// liteop_test.sh covers the binary on a host without lite.ko.
#include "tools/liteop/liteop.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <sstream>

#include "api/fake_device.h"

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

}  // namespace
}  // namespace lite::liteop
