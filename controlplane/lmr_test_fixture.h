// The LMR tests' fixture: three nodes with open sessions and helpers to
// drive AllocLmr through the home's session (manager_lmr_test,
// manager_trust_test).
#ifndef LITE_CONTROLPLANE_LMR_TEST_FIXTURE_H_
#define LITE_CONTROLPLANE_LMR_TEST_FIXTURE_H_

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>

#include "controlplane/manager_test_util.h"

namespace lite::controlplane::testing {

class LmrTest : public ManagerTest {
 protected:
  void SetUp() override {
    a_ = JoinAndOpen("alpha", 1);
    b_ = JoinAndOpen("beta", 2);
    c_ = JoinAndOpen("gamma", 3);
    DrainAll();
  }
  void DrainAll() {
    for (TestNode* node : {&a_, &b_, &c_}) {
      if (node->outbox != nullptr) Drain(*node->outbox);
    }
  }

  lite::v1::AllocLmrRequest AllocRequest(const TestNode& caller, uint32_t home,
                                         const std::string& name) {
    lite::v1::AllocLmrRequest request;
    *request.mutable_caller() = caller.caller();
    *request.mutable_owner() = Creds(1000, 100);
    request.set_name(name);
    request.set_size_bytes(8192);
    request.set_mode(0640);
    request.set_home_node_id(home);
    return request;
  }

  // Starts an allocation; returns where its outcome will be stored.
  std::shared_ptr<std::optional<absl::StatusOr<lite::v1::AllocLmrResponse>>>
  StartAlloc(const lite::v1::AllocLmrRequest& request) {
    auto outcome = std::make_shared<
        std::optional<absl::StatusOr<lite::v1::AllocLmrResponse>>>();
    absl::Status started = state_->AllocLmr(
        request, [outcome](absl::StatusOr<lite::v1::AllocLmrResponse> r) {
          *outcome = std::move(r);
        });
    EXPECT_TRUE(started.ok()) << started;
    return outcome;
  }

  // The single NodeRequest queued for a node.
  lite::v1::NodeRequest TakeRequest(const TestNode& node) {
    std::optional<lite::v1::NodeRequest> found;
    for (const auto& message : Drain(*node.outbox)) {
      if (message.has_request()) {
        EXPECT_FALSE(found.has_value()) << "more than one request";
        found = message.request();
      }
    }
    EXPECT_TRUE(found.has_value()) << "no request queued for " << node.name;
    return found.value_or(lite::v1::NodeRequest());
  }

  static lite::v1::NodeRequestResult Allocated(uint64_t request_id,
                                               uint64_t size) {
    lite::v1::NodeRequestResult result;
    result.set_request_id(request_id);
    auto* memory = result.mutable_allocated_lmr_memory();
    auto* first = memory->add_chunks();
    first->set_address(0x1000);
    first->set_length_bytes(size / 2);
    auto* second = memory->add_chunks();
    second->set_address(0x9000);
    second->set_length_bytes(size - size / 2);
    memory->set_memory_key(77);
    return result;
  }

  TestNode a_, b_, c_;
};

}  // namespace lite::controlplane::testing

#endif  // LITE_CONTROLPLANE_LMR_TEST_FIXTURE_H_
