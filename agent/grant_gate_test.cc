#include "agent/grant_gate.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "agent/fake_module.h"

namespace lite::agent {
namespace {

lite::v1::Grant G(uint64_t id, uint32_t holder, uint64_t inc) {
  lite::v1::Grant g;
  g.set_grant_id(id);
  g.set_holder_node_id(holder);
  g.set_holder_incarnation(inc);
  return g;
}

// Installs g through a map upcall, as the dispatcher does.
absl::Status InstallVia(FakeModule& module, GrantGate& gate,
                        const lite::v1::Grant& g) {
  lite::v1::Credentials c;
  c.set_uid(1);
  c.set_gid(1);
  c.set_pid(1);
  uint64_t id = module.InjectUpcall(c, MapUpcall{.name = "x", .read = true});
  return gate.Install(
      g, [&] { return module.CompleteUpcall({.upcall_id = id, .grant = g}); });
}

TEST(GrantGateTest, ARevocationBeforeTheInstallWins) {
  FakeModule module;
  GrantGate gate(&module);
  ASSERT_TRUE(gate.SetHolder(1, 1).ok());
  EXPECT_FALSE(*gate.Revoke(7));  // Not held yet: remembered.
  EXPECT_TRUE(absl::IsAborted(InstallVia(module, gate, G(7, 1, 1))));
  EXPECT_TRUE(module.ListGrants()->empty());
  ASSERT_TRUE(InstallVia(module, gate, G(8, 1, 1)).ok());
  EXPECT_TRUE(*gate.Revoke(8));
  EXPECT_TRUE(module.ListGrants()->empty());
}

TEST(GrantGateTest, ANewIncarnationRevokesTheOldGrants) {
  FakeModule module;
  GrantGate gate(&module);
  ASSERT_TRUE(gate.SetHolder(1, 1).ok());
  ASSERT_TRUE(InstallVia(module, gate, G(7, 1, 1)).ok());
  EXPECT_EQ(*gate.SetHolder(1, 1), 0);  // Same incarnation keeps them.
  EXPECT_EQ(*gate.SetHolder(1, 2), 1);
  EXPECT_TRUE(module.ListGrants()->empty());
  // A grant made for the old incarnation is refused.
  EXPECT_TRUE(absl::IsAborted(InstallVia(module, gate, G(9, 1, 1))));
}

// LmrRemoved with revokes_grants: a MapLmr answer into that LMR still on
// its way to lite.ko is refused, and handed to the sink (the revoker), with
// the ack the manager's fence waits for.
TEST(GrantGateTest, AGrantIntoARemovedLmrIsRefusedAndHandedToTheSink) {
  FakeModule module;
  GrantGate gate(&module);
  std::vector<std::pair<uint64_t, bool>> refused;
  gate.SetRefusalSink([&](const lite::v1::Grant& g, bool ack) {
    refused.emplace_back(g.grant_id(), ack);
  });
  ASSERT_TRUE(gate.SetHolder(1, 1).ok());
  lite::v1::Grant into = G(7, 1, 1);
  into.set_lmr_id(0x200000001);
  lite::v1::Grant elsewhere = G(8, 1, 1);
  elsewhere.set_lmr_id(0x200000002);
  gate.MarkLmr(0x200000001, /*ack=*/true);
  EXPECT_TRUE(absl::IsAborted(InstallVia(module, gate, into)));
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_EQ(refused[0], std::make_pair(uint64_t{7}, true));
  EXPECT_TRUE(InstallVia(module, gate, elsewhere).ok());
  EXPECT_EQ(module.ListGrants()->size(), 1u);
  gate.SetRefusalSink(nullptr);
}

}  // namespace
}  // namespace lite::agent
