// Test-only: the --fake_lmrs and --fake_maps flags of `liteagent_fake
// --module=fake`, which make the fake module's "applications" register and
// map LMRs at startup so that host tests can drive an agent from outside.
//
//   --fake_lmrs=NAME=SIZE[@MODE],...   e.g. buf=64M,shared/log=1G@0644
//   --fake_maps=NAME=ACCESS,...        ACCESS is r, w or rw
//   --fake_services=NAME=MODE,...      RPC services registered, MODE a
//                                      subset of 0777, e.g. echo=0711
//   --fake_opens=NAME,...              RPC services opened
//
// '=' and ',' cannot appear in LMR names, so the syntax is unambiguous.
#ifndef LITE_AGENT_FAKE_SPEC_H_
#define LITE_AGENT_FAKE_SPEC_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace lite::agent {

struct FakeLmrSpec {
  std::string name;
  uint64_t size_bytes = 0;
  uint32_t mode = 0600;
};

struct FakeMapSpec {
  std::string name;
  bool read = false;
  bool write = false;
};

// An RPC service the fake's "server" registers (port: the lowest free).
struct FakeServiceSpec {
  std::string name;
  uint32_t mode = 0;
};

// Empty text -> no entries.
absl::StatusOr<std::vector<FakeLmrSpec>> ParseFakeLmrs(absl::string_view text);
absl::StatusOr<std::vector<FakeMapSpec>> ParseFakeMaps(absl::string_view text);
absl::StatusOr<std::vector<FakeServiceSpec>> ParseFakeServices(
    absl::string_view text);
// Service names (the LMR name rules).
absl::StatusOr<std::vector<std::string>> ParseFakeOpens(absl::string_view text);

}  // namespace lite::agent

#endif  // LITE_AGENT_FAKE_SPEC_H_
