// grpc_echo: the gRPC side of tools/bench/rpc_compare. A unary echo over
// TCP with the project's own gRPC (Debian's), generic API (no proto):
//
//   grpc_echo serve ADDR:PORT                 echoes every call until killed
//   grpc_echo call ADDR:PORT SIZE COUNT       COUNT calls of SIZE bytes;
//                                             prints p50_us p99_us
//
// Plaintext on purpose: it measures gRPC's own cost beside LITE's, on the
// cluster's private network (a benchmark, never a deployment).
#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/support/byte_buffer.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace {

// Reads one request and writes it back; gRPC's unary call over the
// generic (bidi) handler.
class EchoReactor : public grpc::ServerGenericBidiReactor {
 public:
  EchoReactor() { StartRead(&buf_); }
  void OnReadDone(bool ok) override {
    if (!ok) {
      Finish(grpc::Status::OK);
      return;
    }
    StartWriteAndFinish(&buf_, grpc::WriteOptions(), grpc::Status::OK);
  }
  void OnDone() override { delete this; }

 private:
  grpc::ByteBuffer buf_;
};

class EchoService : public grpc::CallbackGenericService {
  grpc::ServerGenericBidiReactor* CreateReactor(
      grpc::GenericCallbackServerContext*) override {
    return new EchoReactor;
  }
};

int Serve(const std::string& addr) {
  EchoService service;
  grpc::ServerBuilder builder;
  builder.AddListeningPort(addr, grpc::InsecureServerCredentials());
  builder.RegisterCallbackGenericService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server) {
    std::fprintf(stderr, "grpc_echo: cannot listen on %s\n", addr.c_str());
    return 1;
  }
  std::printf("serving %s\n", addr.c_str());
  std::fflush(stdout);
  server->Wait();
  return 0;
}

int Call(const std::string& addr, size_t size, long count) {
  auto channel = grpc::CreateChannel(addr, grpc::InsecureChannelCredentials());
  grpc::GenericStub stub(channel);
  const std::string payload(size, 'x');
  std::vector<long> us;
  for (long i = 0; i < count; ++i) {
    grpc::Slice slice(payload);
    grpc::ByteBuffer req(&slice, 1), reply;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() +
                     std::chrono::seconds(20));
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    grpc::Status status;
    const auto start = std::chrono::steady_clock::now();
    stub.UnaryCall(&ctx, "/bench.Echo/Echo", grpc::StubOptions(), &req, &reply,
                   [&](grpc::Status s) {
                     std::lock_guard<std::mutex> lock(mu);
                     status = std::move(s);
                     done = true;
                     cv.notify_one();
                   });
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return done; });
    const auto end = std::chrono::steady_clock::now();
    if (!status.ok() || reply.Length() != size) {
      std::fprintf(stderr, "grpc_echo: call %ld: %s (reply %zu bytes)\n", i,
                   status.error_message().c_str(), reply.Length());
      return 1;
    }
    // The first call connects: not a round trip of a warm channel.
    if (i > 0) {
      us.push_back(
          std::chrono::duration_cast<std::chrono::microseconds>(end - start)
              .count());
    }
  }
  if (us.empty()) us.push_back(0);
  std::sort(us.begin(), us.end());
  std::printf("calls=%ld size=%zu p50_us=%ld p99_us=%ld\n", count, size,
              us[us.size() / 2],
              us[std::min(us.size() - 1, us.size() * 99 / 100)]);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "serve" && argc == 3) return Serve(argv[2]);
  if (mode == "call" && argc == 5) {
    return Call(argv[2], std::strtoul(argv[3], nullptr, 10),
                std::strtol(argv[4], nullptr, 10));
  }
  std::fprintf(stderr,
               "usage: grpc_echo serve ADDR:PORT\n"
               "       grpc_echo call ADDR:PORT SIZE COUNT\n");
  return 2;
}
