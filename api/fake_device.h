// A scripted stand-in for lite.ko behind lite_open_fake(), for unit tests:
// it records every ioctl (request and a copy of its struct) and answers with
// a handler the test sets; LITE_IOC_QUERY, and LITE_IOC_NODE_LOOKUP once a
// node table is set, it answers itself with lite.ko's rules. Thread-safe.
#ifndef LITE_API_FAKE_DEVICE_H_
#define LITE_API_FAKE_DEVICE_H_

#include <sys/ioctl.h>

#include <algorithm>
#include <cerrno>
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

  // Node id -> name ("" for a node its agent gave no name): this node and
  // its peers, for LITE_IOC_NODE_LOOKUP, answered as lite.ko does — by name
  // if name[0] != 0, else by id; EINVAL for flags or a name without its
  // NUL, ENOENT for an unknown name or id (0 included), ENOTCONN while
  // `identity_set` is false. Until this is called the handler gets the
  // ioctl like any other.
  void set_nodes(std::map<uint32_t, std::string> nodes,
                 bool identity_set = true) {
    std::lock_guard<std::mutex> lock(mu_);
    nodes_ = std::move(nodes);
    has_nodes_ = true;
    identity_set_ = identity_set;
  }

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
      if (request == LITE_IOC_NODE_LOOKUP && self->has_nodes_) {
        return self->LookupLocked(static_cast<struct lite_node_lookup*>(data));
      }
    }
    if (request == LITE_IOC_QUERY) {
      static_cast<lite_query*>(data)->abi_version = self->abi_version_;
      return 0;
    }
    return handler ? handler(request, data) : -ENOTTY;
  }

  int LookupLocked(struct lite_node_lookup* req) {
    if (req->flags != 0) return -EINVAL;
    if (!identity_set_) return -ENOTCONN;
    if (req->name[0] != '\0') {
      const size_t len = strnlen(req->name, sizeof(req->name));
      if (len == sizeof(req->name)) return -EINVAL;
      for (const auto& [id, name] : nodes_) {
        if (!name.empty() && name == std::string(req->name, len)) {
          req->node_id = id;
          return 0;
        }
      }
      return -ENOENT;
    }
    auto it = nodes_.find(req->node_id);
    if (req->node_id == 0 || it == nodes_.end()) return -ENOENT;
    std::memset(req->name, 0, sizeof(req->name));
    std::memcpy(req->name, it->second.data(),
                std::min(it->second.size(), sizeof(req->name) - 1));
    return 0;
  }

  std::mutex mu_;
  Handler handler_;
  std::map<uint32_t, std::string> nodes_;
  bool has_nodes_ = false;
  bool identity_set_ = true;
  uint32_t abi_version_ = LITE_ABI_VERSION;
  std::map<unsigned long, int> counts_;
  std::map<unsigned long, std::string> last_;
};

}  // namespace lite::testing

#endif  // LITE_API_FAKE_DEVICE_H_
