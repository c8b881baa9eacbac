// What the compat layer adds to an operation, on the host: the same 8-byte
// read and fetch-and-add through libLITE and through the original API, with
// lite.ko replaced by a fake ioctl that returns at once (api/fake_device.h),
// so only the libraries' own work is timed. 5 interleaved rounds; prints
// each round and the median of the per-round differences.
//
//   bazel run -c opt //api/compat:v0_overhead
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "api/compat/lite-lib.h"
#include "api/compat/v0_testing.h"
#include "api/fake_device.h"

namespace {

constexpr int kOps = 2000000;
constexpr int kRounds = 5;

double NsPerOp(auto&& op) {
  timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (int i = 0; i < kOps; i++) op();
  clock_gettime(CLOCK_MONOTONIC, &b);
  return ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / kOps;
}

}  // namespace

int main() {
  lite::testing::FakeDevice dev;
  dev.set_handler([](unsigned long request, void* data) {
    if (request == LITE_IOC_MAP)
      static_cast<struct lite_map*>(data)->handle = 1;
    return 0;
  });
  lite_ctx* ctx;
  if (dev.Open(&ctx) != 0) return 1;
  lite_v0_use_context(ctx);
  const int h = userspace_liteapi_alloc_remote_mem(2, 4096, true, 1234);
  if (h < 1) return 1;

  uint64_t word = 0, old = 0;
  unsigned long long v0_old = 0;
  std::vector<double> read_diff, faa_diff;
  for (int r = 0; r < kRounds; r++) {
    const double lr = NsPerOp([&] { lite_read(ctx, 1, 0, &word, 8); });
    const double vr =
        NsPerOp([&] { userspace_liteapi_rdma_read(h, &word, 8, 0, 1234); });
    const double lf = NsPerOp([&] { lite_faa(ctx, 1, 0, 1, &old); });
    const double vf =
        NsPerOp([&] { userspace_liteapi_fetch_add(h, &v0_old, 1); });
    std::printf(
        "round %d: read libLITE %.1f ns, compat %.1f ns; faa libLITE %.1f ns, "
        "compat %.1f ns\n",
        r + 1, lr, vr, lf, vf);
    read_diff.push_back(vr - lr);
    faa_diff.push_back(vf - lf);
  }
  std::sort(read_diff.begin(), read_diff.end());
  std::sort(faa_diff.begin(), faa_diff.end());
  std::printf(
      "compat adds (median of %d rounds): read %+.1f ns, faa %+.1f ns per "
      "operation (range %+.1f .. %+.1f, %+.1f .. %+.1f)\n",
      kRounds, read_diff[kRounds / 2], faa_diff[kRounds / 2], read_diff.front(),
      read_diff.back(), faa_diff.front(), faa_diff.back());
  lite_v0_use_context(nullptr);
  lite_close(ctx);
  return 0;
}
