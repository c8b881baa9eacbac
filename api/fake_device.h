// A scripted stand-in for lite.ko behind lite_open_fake(), for unit tests:
// it records every ioctl (request and a copy of its struct) and answers with
// a handler the test sets. Thread-safe.
#ifndef LITE_API_FAKE_DEVICE_H_
#define LITE_API_FAKE_DEVICE_H_

#include <sys/ioctl.h>

#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "api/lite.h"
#include "api/lite_testing.h"

namespace lite::testing {

class FakeDevice {
 public:
  // Returns 0 or a negative errno; may change *data (the "kernel" answer).
  using Handler = std::function<int(unsigned long request, void* data)>;

  FakeDevice() = default;
  FakeDevice(const FakeDevice&) = delete;
  FakeDevice& operator=(const FakeDevice&) = delete;

  void set_handler(Handler h) {
    std::lock_guard<std::mutex> lock(mu_);
    handler_ = std::move(h);
  }
  void set_abi_version(uint32_t v) { abi_version_ = v; }

  // lite_open_fake() against this device.
  int Open(lite_ctx** ctx) { return lite_open_fake(&Dispatch, this, ctx); }

  int calls(unsigned long request) {
    std::lock_guard<std::mutex> lock(mu_);
    return counts_[request];
  }
  // The struct the last call with `request` passed in, as the library
  // filled it (before the handler ran).
  template <typename T>
  T last(unsigned long request) {
    std::lock_guard<std::mutex> lock(mu_);
    T t{};
    const std::string& raw = last_[request];
    if (raw.size() == sizeof(T)) std::memcpy(&t, raw.data(), sizeof(T));
    return t;
  }

 private:
  static int Dispatch(void* arg, unsigned long request, void* data) {
    auto* self = static_cast<FakeDevice*>(arg);
    Handler handler;
    {
      std::lock_guard<std::mutex> lock(self->mu_);
      self->counts_[request]++;
      self->last_[request].assign(static_cast<const char*>(data),
                                  _IOC_SIZE(request));
      handler = self->handler_;
    }
    if (request == LITE_IOC_QUERY) {
      static_cast<lite_query*>(data)->abi_version = self->abi_version_;
      return 0;
    }
    return handler ? handler(request, data) : -ENOTTY;
  }

  std::mutex mu_;
  Handler handler_;
  uint32_t abi_version_ = LITE_ABI_VERSION;
  std::map<unsigned long, int> counts_;
  std::map<unsigned long, std::string> last_;
};

}  // namespace lite::testing

#endif  // LITE_API_FAKE_DEVICE_H_
