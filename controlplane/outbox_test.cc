#include "controlplane/outbox.h"

#include <gtest/gtest.h>

namespace lite::controlplane {
namespace {

OutMessagePtr Ack(uint64_t seq) {
  lite::v1::ManagerMessage message;
  message.mutable_heartbeat_ack()->set_heartbeat_seq(seq);
  return std::make_shared<const OutMessage>(message);
}

class CountingListener : public OutboxListener {
 public:
  void OnOutboxReady() override { ++calls; }
  int calls = 0;
};

TEST(OutboxTest, BoundedAndOrdered) {
  Outbox outbox(2);
  EXPECT_EQ(outbox.Push(Ack(1)), Outbox::PushResult::kQueued);  // No reader.
  EXPECT_EQ(outbox.Push(Ack(2)), Outbox::PushResult::kQueued);
  EXPECT_EQ(outbox.Push(Ack(3)), Outbox::PushResult::kFull);
  EXPECT_EQ(outbox.Pop().message->message().heartbeat_ack().heartbeat_seq(),
            1u);
  EXPECT_EQ(outbox.Pop().message->message().heartbeat_ack().heartbeat_seq(),
            2u);
  Outbox::Next empty = outbox.Pop();
  EXPECT_EQ(empty.message, nullptr);
  EXPECT_FALSE(empty.closed.has_value());
  EXPECT_EQ(outbox.high_water(), 2u);
}

TEST(OutboxTest, NotifiesOnlyWhenTheReaderMayBeIdle) {
  Outbox outbox(10);
  auto listener = std::make_shared<CountingListener>();
  outbox.SetListener(listener);
  EXPECT_EQ(outbox.Push(Ack(1)), Outbox::PushResult::kQueuedNotify);
  EXPECT_EQ(outbox.Push(Ack(2)), Outbox::PushResult::kQueued);
  outbox.NotifyReader();
  EXPECT_EQ(listener->calls, 1);
  outbox.Pop();
  outbox.Pop();
  EXPECT_EQ(outbox.Push(Ack(3)), Outbox::PushResult::kQueuedNotify);
}

TEST(OutboxTest, CloseWithDrainDeliversQueuedMessagesFirst) {
  Outbox outbox(10);
  auto listener = std::make_shared<CountingListener>();
  outbox.SetListener(listener);
  outbox.Push(Ack(1));
  outbox.Close(absl::FailedPreconditionError("over"), /*drain=*/true);
  EXPECT_EQ(listener->calls, 1);
  outbox.Close(absl::OkStatus(), true);  // The first close wins.
  EXPECT_EQ(outbox.Push(Ack(2)), Outbox::PushResult::kQueued);  // Ignored.
  EXPECT_NE(outbox.Pop().message, nullptr);
  Outbox::Next end = outbox.Pop();
  ASSERT_TRUE(end.closed.has_value());
  EXPECT_EQ(end.closed->code(), absl::StatusCode::kFailedPrecondition);
}

TEST(OutboxTest, CloseWithoutDrainDropsQueuedMessages) {
  Outbox outbox(10);
  outbox.Push(Ack(1));
  outbox.Close(absl::ResourceExhaustedError("slow"), /*drain=*/false);
  Outbox::Next end = outbox.Pop();
  EXPECT_EQ(end.message, nullptr);
  ASSERT_TRUE(end.closed.has_value());
  EXPECT_EQ(end.closed->code(), absl::StatusCode::kResourceExhausted);
}

TEST(OutMessageTest, WireFormsParseBack) {
  lite::v1::ManagerMessage message;
  message.mutable_event()->set_sequence(9);
  message.mutable_event()->mutable_member_left()->set_node_id(3);
  OutMessage out(message);
  lite::v1::ManagerMessage session;
  ASSERT_TRUE(session.ParseFromString(out.SessionWire()));
  EXPECT_EQ(session.event().sequence(), 9u);
  lite::v1::Event watch;
  ASSERT_TRUE(watch.ParseFromString(out.WatchWire()));
  EXPECT_EQ(watch.member_left().node_id(), 3u);
}

}  // namespace
}  // namespace lite::controlplane

namespace lite::controlplane {
namespace {

OutMessagePtr EventWithSequence(uint64_t sequence) {
  lite::v1::ManagerMessage message;
  message.mutable_event()->set_sequence(sequence);
  message.mutable_event()->mutable_member_left()->set_node_id(
      static_cast<uint32_t>(sequence));
  return std::make_shared<const OutMessage>(message);
}

TEST(OutboxBatchTest, PopEventsTakesConsecutiveEventsOnly) {
  Outbox outbox(100);
  outbox.Push(EventWithSequence(1));
  outbox.Push(EventWithSequence(2));
  outbox.Push(EventWithSequence(3));
  outbox.Push(Ack(9));
  outbox.Push(EventWithSequence(4));
  Outbox::Batch first = outbox.PopEvents(2, 1 << 20);
  ASSERT_EQ(first.messages.size(), 2u);  // Capped by count.
  Outbox::Batch second = outbox.PopEvents(10, 1 << 20);
  ASSERT_EQ(second.messages.size(), 1u);  // Stops before the ack.
  EXPECT_EQ(second.messages[0]->message().event().sequence(), 3u);
  Outbox::Batch ack = outbox.PopEvents(10, 1 << 20);
  ASSERT_EQ(ack.messages.size(), 1u);  // An ack is never batched.
  EXPECT_TRUE(ack.messages[0]->message().has_heartbeat_ack());
  EXPECT_EQ(outbox.PopEvents(10, 1).messages.size(), 1u);  // Byte cap.
  outbox.Close(absl::OkStatus(), true);
  EXPECT_TRUE(outbox.PopEvents(10, 1 << 20).closed.has_value());
}

TEST(OutboxBatchTest, ByteCapNeverExceededPastTheFirstEvent) {
  Outbox outbox(100);
  for (uint64_t i = 1; i <= 3; ++i) outbox.Push(EventWithSequence(i));
  const size_t one = EventWithSequence(1)->BatchEntryWire().size();
  // Room for two entries and a bit: two are taken, not three.
  EXPECT_EQ(outbox.PopEvents(10, 2 * one + one / 2).messages.size(), 2u);
  EXPECT_EQ(outbox.PopEvents(10, 1).messages.size(), 1u);
}

TEST(OutboxBatchTest, EventBatchWireParsesAsTheSameEventsInOrder) {
  std::vector<OutMessagePtr> events;
  for (uint64_t i = 1; i <= 300; ++i) events.push_back(EventWithSequence(i));
  lite::v1::ManagerMessage parsed;
  ASSERT_TRUE(parsed.ParseFromString(EventBatchWire(events)));
  ASSERT_TRUE(parsed.has_event_batch());
  ASSERT_EQ(parsed.event_batch().events_size(), 300);
  for (int i = 0; i < 300; ++i) {
    EXPECT_EQ(parsed.event_batch().events(i).sequence(), i + 1u);
    EXPECT_EQ(parsed.event_batch().events(i).member_left().node_id(), i + 1u);
  }
}

TEST(PeerSecretWireTest, EncodesWhatProtobufWould) {
  for (const PairEnd peer :
       {PairEnd{1, 1}, PairEnd{0xffffffffu, 0xffffffffffffffffull},
        PairEnd{300, 1ull << 40}}) {
    const std::string secret(32, '\x7f');
    lite::v1::ManagerMessage want;
    lite::v1::PeerSecret* s = want.add_peer_secrets();
    s->set_node_id(peer.node_id);
    s->set_incarnation(peer.incarnation);
    s->set_secret(secret);
    std::string wire;
    AppendPeerSecretField(
        &wire, lite::v1::ManagerMessage::kPeerSecretsFieldNumber, peer, secret);
    EXPECT_EQ(wire, want.SerializeAsString()) << peer.node_id;
  }
}

}  // namespace
}  // namespace lite::controlplane
