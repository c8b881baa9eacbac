// hello_lite: the smallest complete libLITE program (C++ layer).
//
//   hello_lite NAME [HOME_NODE]
//
// Creates a 1 MiB LMR NAME on HOME_NODE (default: this node), maps it
// read-write, writes a greeting, reads it back, bumps a counter with
// fetch-and-add, and frees the LMR. Exits non-zero with the reason on any
// error. Needs lite.ko, liteagent and litemgr running.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "api/lite.hpp"

namespace {

absl::Status Hello(const std::string& name, uint32_t home) {
  absl::StatusOr<lite::Lite> session = lite::Lite::Open();
  if (!session.ok()) return session.status();

  absl::StatusOr<lite::NodeInfo> node = session->Node();
  if (!node.ok()) return node.status();
  absl::PrintF("node %u (incarnation %u), %zu member(s)\n", node->node_id,
               node->incarnation, node->members.size());

  absl::StatusOr<uint64_t> id =
      session->Alloc(name, 1 << 20, {.mode = 0600, .home_node_id = home});
  if (!id.ok()) return id.status();

  absl::Status result = [&]() -> absl::Status {
    // The Lmr unmaps itself when it goes out of scope.
    absl::StatusOr<lite::Lmr> lmr = session->Map(name, lite::kReadWrite);
    if (!lmr.ok()) return lmr.status();
    absl::PrintF("mapped %s: lmr %u, %u bytes on node %u\n", name,
                 lmr->lmr_id(), lmr->size(), lmr->home_node_id());

    const std::string greeting = "hello, LITE";
    if (absl::Status s = lmr->Write(0, greeting); !s.ok()) return s;
    std::vector<uint8_t> back(greeting.size());
    if (absl::Status s = lmr->Read(0, absl::MakeSpan(back)); !s.ok()) return s;
    absl::PrintF("read back: %s\n", std::string(back.begin(), back.end()));

    // An 8-byte counter at offset 4096 (atomics need 8-byte alignment).
    for (int i = 0; i < 3; ++i) {
      absl::StatusOr<uint64_t> old = lmr->FetchAdd(4096, 1);
      if (!old.ok()) return old.status();
      absl::PrintF("counter was %u\n", *old);
    }
    return absl::OkStatus();
  }();

  absl::Status freed = session->Free(name);
  return result.ok() ? freed : result;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3 || std::string(argv[1]) == "--help" ||
      std::string(argv[1]) == "-h") {
    std::fputs(
        "usage: hello_lite NAME [HOME_NODE]\n"
        "Creates LMR NAME (1 MiB) on HOME_NODE (default: this node), writes,\n"
        "reads and atomically increments it, then frees it.\n",
        argc == 2 ? stdout : stderr);
    return argc == 2 ? 0 : 2;
  }
  uint32_t home = 0;
  if (argc == 3 && !absl::SimpleAtoi(argv[2], &home)) {
    absl::FPrintF(stderr, "hello_lite: HOME_NODE must be a number, not '%s'\n",
                  argv[2]);
    return 2;
  }
  absl::Status s = Hello(argv[1], home);
  if (!s.ok()) {
    absl::FPrintF(stderr, "hello_lite: %s\n", s.message());
    return 1;
  }
  return 0;
}
