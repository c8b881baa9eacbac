// The C++ side of tests/pkg/app.c: a C++20 program using libLITE's C API
// from the installed headers,
//   c++ -std=c++20 app.cc $(pkg-config --cflags --libs lite)
// with RAII of its own. Exit 0 when the write, read and free worked.
//   app_cc NAME HOME
#include <lite/lite.h>
#include <lite/lite_sync.h>

#include <cstdio>
#include <memory>
#include <string>

namespace {

struct CloseContext {
  void operator()(lite_ctx* ctx) const { lite_close(ctx); }
};
using Context = std::unique_ptr<lite_ctx, CloseContext>;

int Fail(const char* what, int rc) {
  std::fprintf(stderr, "app_cc: %s: %s (%s)\n", what, lite_errno_name(rc),
               lite_message());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: app_cc NAME HOME_NODE_NAME\n");
    return 2;
  }
  const std::string name = argv[1];
  lite_ctx* raw = nullptr;
  if (int rc = lite_open(nullptr, &raw); rc != 0) return Fail("open", rc);
  Context ctx(raw);
  uint32_t home = 0;
  if (int rc = lite_node_lookup(ctx.get(), argv[2], &home); rc != 0)
    return Fail("node_lookup", rc);
  if (int rc = lite_sync_create(ctx.get(), name.c_str(), 0600, home); rc != 0)
    return Fail("sync_create", rc);
  lite_handle_t lock = 0;
  if (int rc = lite_sync_open(ctx.get(), name.c_str(), &lock); rc != 0)
    return Fail("sync_open", rc);
  if (int rc = lite_lock(ctx.get(), lock, 10000); rc != 0)
    return Fail("lock", rc);
  const std::string text = "from C++";
  if (int rc = lite_write(ctx.get(), lock, 128, text.data(), text.size());
      rc != 0)
    return Fail("write", rc);
  std::string back(text.size(), '\0');
  if (int rc = lite_read(ctx.get(), lock, 128, back.data(), back.size());
      rc != 0)
    return Fail("read", rc);
  if (int rc = lite_unlock(ctx.get(), lock); rc != 0) return Fail("unlock", rc);
  std::printf("C++ app: locked, read back \"%s\", unlocked, on %s\n",
              back.c_str(), argv[2]);
  lite_unmap(ctx.get(), lock);
  if (int rc = lite_free(ctx.get(), name.c_str()); rc != 0)
    return Fail("free", rc);
  return back == text ? 0 : 1;
}
