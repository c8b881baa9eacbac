#include "agent/grant_gate.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace lite::agent
