// Test fixture for ManagerState: a fake clock, nodes that join and open
// sessions, helpers to read what the manager queued for a session, and a
// snapshot of all visible state to prove that rejected calls change nothing.
#ifndef LITE_CONTROLPLANE_MANAGER_TEST_UTIL_H_
#define LITE_CONTROLPLANE_MANAGER_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "controlplane/clock.h"
#include "controlplane/manager_state.h"
#include "controlplane/memory_store.h"
#include "lite/v1/manager.pb.h"

namespace lite::controlplane::testing {

// A joined node with its session open.
struct TestNode {
  uint32_t id = 0;
  uint64_t incarnation = 0;
  std::string name;
  std::shared_ptr<Outbox> outbox;
  // What Join answered (members, pair secrets).
  lite::v1::JoinResponse join;
  lite::v1::NodeCaller caller() const;
  SessionBinding binding() const { return {id, incarnation}; }
};

lite::v1::Credentials Creds(uint32_t uid, uint32_t gid, uint32_t pid = 100);
lite::v1::Access Access(bool read, bool write);

class ManagerTest : public ::testing::Test {
 protected:
  ManagerTest();

  // Options for tests: 1 s lease, no recovery window (a fresh cluster),
  // the same cluster key at every Restart (as with --pair_key_file).
  static ManagerOptions TestOptions();
  // A new manager (a restart: empty store, or `store`) with `options`.
  void Restart(ManagerOptions options, std::unique_ptr<Store> store = nullptr);

  lite::v1::JoinRequest JoinRequestFor(const std::string& name,
                                       int address_index) const;
  // A rejoin with `restore` = (id, incarnation) and the identity token this
  // manager's cluster key gives them for `name` (what an agent that kept
  // the token of its Join sends).
  lite::v1::JoinRequest RestoreRequestFor(const std::string& name,
                                          int address_index, uint32_t id,
                                          uint64_t incarnation) const;
  // Joins and opens the session; fails the test on error.
  TestNode JoinAndOpen(const std::string& name, int address_index);
  // Joins without opening a session.
  lite::v1::JoinResponse JoinOnly(const std::string& name, int address_index);

  // Registers an LMR of `size` bytes homed on `home`, owned by `owner`.
  lite::v1::Lmr Register(const TestNode& home, const std::string& name,
                         uint32_t mode, const lite::v1::Credentials& owner,
                         uint64_t size = 4096);
  // The chunk and key Register sends (its answer carries neither), for
  // re-registrations of an LMR Register made.
  static void AddRegisteredMemory(lite::v1::RegisterLmrRequest* request,
                                  uint64_t size);
  lite::v1::Grant Map(const TestNode& holder, const std::string& name,
                      const lite::v1::Credentials& requester, bool read,
                      bool write);

  // Sends a heartbeat for `node` (keeps its lease).
  void Beat(const TestNode& node);

  // Pops every message queued for an outbox.
  static std::vector<lite::v1::ManagerMessage> Drain(Outbox& outbox);
  static std::vector<lite::v1::Event> DrainEvents(Outbox& outbox);
  // Pops every message queued for `node`'s session and returns them as the
  // agent receives them: completed with its pair secrets the way the
  // session's StreamPump writes them, one message per write, or batched
  // (an agent that set accept_event_batches).
  std::vector<lite::v1::ManagerMessage> DrainSession(const TestNode& node,
                                                     bool batched = false);
  // The close status once everything queued is popped; nullopt if open.
  static std::optional<absl::Status> CloseStatus(Outbox& outbox);

  // Every node, LMR and grant, the event sequence and the non-heartbeat
  // counters, as text.
  std::string Snapshot() const;

  FakeClock clock_;
  std::unique_ptr<ManagerState> state_;
};

}  // namespace lite::controlplane::testing

#endif  // LITE_CONTROLPLANE_MANAGER_TEST_UTIL_H_
