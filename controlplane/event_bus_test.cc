#include "controlplane/event_bus.h"

#include <gtest/gtest.h>

#include "controlplane/memory_store.h"

namespace lite::controlplane {
namespace {

lite::v1::Event Joined(uint32_t node_id) {
  lite::v1::Event event;
  event.mutable_member_joined()->mutable_member()->set_node_id(node_id);
  return event;
}

uint64_t NextSequence(Outbox& outbox) {
  Outbox::Next next = outbox.Pop();
  return next.message == nullptr ? 0
                                 : next.message->message().event().sequence();
}

class EventBusTest : public ::testing::Test {
 protected:
  EventBusTest() { options_.session_queue_limit = 3; }
  ManagerOptions options_;
  FakeClock clock_;
  MemoryStore store_;
  EventBus bus_{options_, &clock_, &store_};
};

TEST_F(EventBusTest, EveryOutboxGetsEveryEventInSequence) {
  auto session = bus_.AddSession(1);
  auto watch = bus_.OpenWatch(0);
  ASSERT_TRUE(watch.ok());
  bus_.Emit(Joined(1));
  bus_.Emit(Joined(2));
  EXPECT_EQ(NextSequence(*session), 1u);
  EXPECT_EQ(NextSequence(*session), 2u);
  EXPECT_EQ(NextSequence(**watch), 1u);
  EXPECT_EQ(NextSequence(**watch), 2u);
  EXPECT_EQ(bus_.events_emitted(), 2u);
  EXPECT_EQ(store_.LastEventSequence(), 2u);
}

TEST_F(EventBusTest, CompactSessionsGetTheCompactVariantWithTheSameNumber) {
  auto full = bus_.AddSession(1);
  auto compact = bus_.AddSession(2);
  bus_.SetCompact(2, true);
  lite::v1::Event event;
  event.mutable_recovery_complete()->add_members()->set_node_id(1);
  lite::v1::Event small;
  small.mutable_recovery_complete();
  bus_.Emit(event, nullptr, &small);
  // Keep the messages: an event is read through the message that holds it.
  const OutMessagePtr full_message = full->Pop().message;
  const OutMessagePtr compact_message = compact->Pop().message;
  const lite::v1::Event& f = full_message->message().event();
  const lite::v1::Event& c = compact_message->message().event();
  EXPECT_EQ(f.recovery_complete().members_size(), 1);
  EXPECT_EQ(c.recovery_complete().members_size(), 0);
  EXPECT_EQ(f.sequence(), c.sequence());
}

TEST_F(EventBusTest, AWatchResumesFromItsRevision) {
  for (uint32_t i = 1; i <= 2; ++i) bus_.Emit(Joined(i));
  auto watch = bus_.OpenWatch(1);
  ASSERT_TRUE(watch.ok());
  EXPECT_EQ(NextSequence(**watch), 2u);
  EXPECT_EQ(bus_.OpenWatch(3).status().code(),
            absl::StatusCode::kInvalidArgument);  // Past the last event.
}

TEST_F(EventBusTest, OverflowClosesAWatchAndHandsBackASession) {
  auto session = bus_.AddSession(7);
  auto watch = bus_.OpenWatch(0);
  ASSERT_TRUE(watch.ok());
  for (uint32_t i = 1; i <= 5; ++i) bus_.Emit(Joined(i));
  EXPECT_EQ(bus_.TakeOverflowedSessions(), std::vector<uint32_t>{7});
  EXPECT_TRUE((*watch)->closed());
  EXPECT_EQ(bus_.watchers(), 0u);
  EXPECT_FALSE(session->closed());  // The caller ends it, with the reason.
  bus_.EndSession(7, absl::ResourceExhaustedError("behind"), false);
  EXPECT_TRUE(session->closed());
  EXPECT_TRUE(bus_.TakeOverflowedSessions().empty());
}

TEST_F(EventBusTest, RequestsGoToOneNodeOnly) {
  auto one = bus_.AddSession(1);
  auto two = bus_.AddSession(2);
  lite::v1::ManagerMessage ack;
  ack.mutable_heartbeat_ack()->set_heartbeat_seq(9);
  bus_.SendTo(2, ack);
  EXPECT_EQ(one->size(), 0u);
  EXPECT_EQ(two->size(), 1u);
  EXPECT_EQ(bus_.TakeToNotify().size(), 0u);  // No reader registered yet.
}

}  // namespace
}  // namespace lite::controlplane
