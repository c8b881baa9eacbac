#include "cmd/litedev/litedev.h"

#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace lite::litedev {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

lite_device_info Rxe0() {
  lite_device_info d{};
  std::strncpy(d.name, "rxe0", sizeof(d.name) - 1);
  d.node_guid = 0x5054'00ff'fe00'0001ULL;
  d.port = 1;
  d.port_state = LITE_PORT_ACTIVE;
  d.link_layer = LITE_LINK_LAYER_ETHERNET;
  d.active_mtu_bytes = 1024;
  d.flags = LITE_DEVICE_GLOBAL_KEY_READY;
  return d;
}

struct Outcome {
  int rc;
  std::string out;
  std::string err;
  std::string path;  // what the tool asked to query
};

Outcome RunWith(const std::vector<std::string>& args, QueryResult answer,
                absl::Status status = absl::OkStatus()) {
  Outcome o;
  std::ostringstream out, err;
  o.rc =
      RunLitedev(args, out, err, [&](const std::string& path, QueryResult* r) {
        o.path = path;
        if (!status.ok()) return status;
        *r = answer;
        return absl::OkStatus();
      });
  o.out = out.str();
  o.err = err.str();
  return o;
}

QueryResult OneDevice() {
  QueryResult r;
  r.abi_version = LITE_ABI_VERSION;
  r.devices.push_back(Rxe0());
  lite_device_info broken = Rxe0();
  std::strncpy(broken.name, "mlx5_0", sizeof(broken.name) - 1);
  broken.port_state = LITE_PORT_DOWN;
  broken.flags = 0;
  broken.global_key_errno = -95;  // EOPNOTSUPP, as the kernel reports it
  r.devices.push_back(broken);
  return r;
}

TEST(Litedev, TableNamesEveryDevice) {
  Outcome o = RunWith({}, OneDevice());
  EXPECT_EQ(o.rc, 0) << o.err;
  EXPECT_EQ(o.path, LITE_DEVICE_PATH);
  EXPECT_THAT(o.out, StartsWith(absl::StrFormat(
                         "lite.ko ABI version %u, 2 RDMA device(s)\n",
                         LITE_ABI_VERSION)));
  EXPECT_THAT(o.out, HasSubstr("rxe0"));
  EXPECT_THAT(o.out, HasSubstr("ACTIVE"));
  EXPECT_THAT(o.out, HasSubstr("ready"));
  EXPECT_THAT(o.out, HasSubstr("failed: Operation not supported"));
}

TEST(Litedev, JsonIsOneLineWithEveryField) {
  Outcome o = RunWith({"-o", "json", "--device", "/dev/other"}, OneDevice());
  ASSERT_EQ(o.rc, 0) << o.err;
  EXPECT_EQ(o.path, "/dev/other");
  EXPECT_EQ(o.out.find('\n'), o.out.size() - 1);
  EXPECT_THAT(o.out, HasSubstr(absl::StrFormat("{\"abi_version\": %u, ",
                                               LITE_ABI_VERSION)));
  EXPECT_THAT(o.out, HasSubstr("\"name\": \"rxe0\", \"node_guid\": "
                               "\"505400fffe000001\", \"port\": 1, "
                               "\"port_state\": \"ACTIVE\", \"link_layer\": "
                               "\"Ethernet\", \"active_mtu_bytes\": 1024, "
                               "\"global_key_ready\": true, "
                               "\"global_key_errno\": 0}"));
  EXPECT_THAT(o.out, HasSubstr("\"global_key_ready\": false, "
                               "\"global_key_errno\": 95}"));
}

TEST(Litedev, NoDevicesIsNotAnError) {
  QueryResult r;
  r.abi_version = LITE_ABI_VERSION;
  Outcome o = RunWith({}, r);
  EXPECT_EQ(o.rc, 0);
  EXPECT_EQ(o.out, absl::StrFormat("lite.ko ABI version %u, 0 RDMA device(s)\n",
                                   LITE_ABI_VERSION));
}

TEST(Litedev, OtherAbiFailsWithBothVersions) {
  QueryResult r = OneDevice();
  r.abi_version = LITE_ABI_VERSION + 1;
  Outcome o = RunWith({}, r);
  EXPECT_EQ(o.rc, 1);
  EXPECT_EQ(o.out, "");
  EXPECT_THAT(o.err, HasSubstr(absl::StrFormat(
                         "ABI version %u, this tool was built for %u",
                         LITE_ABI_VERSION + 1, LITE_ABI_VERSION)));
}

TEST(Litedev, QueryFailureIsOneLineExitOne) {
  Outcome o = RunWith({}, {}, absl::UnavailableError("cannot open /dev/lite"));
  EXPECT_EQ(o.rc, 1);
  EXPECT_EQ(o.err, "litedev: cannot open /dev/lite\n");
}

TEST(Litedev, BadUsageExitsTwoWithoutQuerying) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{
           {"-o", "xml"},
           {"--devices", "/dev/lite"},
           {"extra"},
           {"--device"},
           {"--device", "a", "--device", "b"}}) {
    Outcome o = RunWith(args, OneDevice());
    EXPECT_EQ(o.rc, 2) << args[0];
    EXPECT_EQ(o.path, "") << args[0];
    EXPECT_THAT(o.err, StartsWith("litedev: ")) << args[0];
  }
}

TEST(Litedev, HelpExitsZero) {
  Outcome o = RunWith({"--help"}, OneDevice());
  EXPECT_EQ(o.rc, 0);
  EXPECT_THAT(o.out, HasSubstr("usage: litedev [--device PATH]"));
  EXPECT_EQ(o.path, "");
}

TEST(QueryDevice, MissingDeviceAsksWhetherTheModuleIsLoaded) {
  QueryResult r;
  absl::Status s = QueryDevice("/nonexistent/lite", &r);
  EXPECT_TRUE(absl::IsUnavailable(s));
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("cannot open /nonexistent/lite: No such file or "
                        "directory (is lite.ko loaded?)"));
}

TEST(QueryDevice, NotALiteDeviceNamesTheIoctl) {
  QueryResult r;
  absl::Status s = QueryDevice("/dev/null", &r);
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("LITE_IOC_QUERY on /dev/null"));
}

}  // namespace
}  // namespace lite::litedev
