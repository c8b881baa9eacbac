// The lock home's rules on what reaches it (kmod/sync/lite_sync_rules.h, shared
// with lite.ko), tried as the attacker of review H2 would: frames lite.ko
// never sends, a holder named by a guessed file id or token, and one user's
// LOCKs taking every wait a node has at a home.
#include "kmod/sync/lite_sync_rules.h"

#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace {

lite_sync_fields Good(uint16_t op) {
  lite_sync_fields f = {};
  f.version = LITE_SYNC_WIRE_VERSION;
  f.op = op;
  f.lmr_id = 0x100000001ULL;
  f.token = 0x5eed5eed5eedULL;
  f.file_id = 0xf11ef11ef11eULL;
  if (op == LITE_SYNC_REQ_BARRIER) f.count = 12;
  if (op == LITE_SYNC_REQ_DIED) f.lmr_id = f.token = 0;
  return f;
}

constexpr uint16_t kOps[] = {LITE_SYNC_REQ_LOCK,   LITE_SYNC_REQ_TRYLOCK,
                             LITE_SYNC_REQ_UNLOCK, LITE_SYNC_REQ_BARRIER,
                             LITE_SYNC_REQ_CANCEL, LITE_SYNC_REQ_DIED};

int Check(const lite_sync_fields& f) { return lite_sync_req_check(&f); }

TEST(SyncRulesTest, WhatLiteKoSendsIsAccepted) {
  for (uint16_t op : kOps) EXPECT_EQ(Check(Good(op)), 0) << "op " << op;
  lite_sync_fields f = Good(LITE_SYNC_REQ_BARRIER);
  f.count = 1;
  EXPECT_EQ(Check(f), 0);
  f.count = LITE_SYNC_COUNT_MAX;
  EXPECT_EQ(Check(f), 0);
}

TEST(SyncRulesTest, ForgedFramesAreRefused) {
  for (uint16_t op : kOps) {
    lite_sync_fields f = Good(op);
    f.version = 2;
    EXPECT_EQ(Check(f), -EPROTO) << "version, op " << op;
    f = Good(op);
    f.version = 0;
    EXPECT_EQ(Check(f), -EPROTO) << "version 0, op " << op;
    // The review's forged DIED with file id 0 ("every file of the node").
    f = Good(op);
    f.file_id = 0;
    EXPECT_EQ(Check(f), -EPROTO) << "file id 0, op " << op;
  }
  for (uint16_t op : {LITE_SYNC_REQ_LOCK, LITE_SYNC_REQ_TRYLOCK,
                      LITE_SYNC_REQ_UNLOCK, LITE_SYNC_REQ_CANCEL}) {
    lite_sync_fields f = Good(op);
    f.count = 1;
    EXPECT_EQ(Check(f), -EPROTO) << "a count, op " << op;
    f = Good(op);
    f.lmr_id = 0;
    EXPECT_EQ(Check(f), -EPROTO) << "LMR 0, op " << op;
    f = Good(op);
    f.token = 0;
    EXPECT_EQ(Check(f), -EPROTO) << "token 0, op " << op;
  }
  // The review's first arrival with a count no real one gives.
  lite_sync_fields f = Good(LITE_SYNC_REQ_BARRIER);
  f.count = LITE_SYNC_COUNT_MAX + 1;
  EXPECT_EQ(Check(f), -EPROTO);
  f.count = 0;
  EXPECT_EQ(Check(f), -EPROTO);
  f.count = UINT32_MAX;
  EXPECT_EQ(Check(f), -EPROTO);
  f = Good(LITE_SYNC_REQ_BARRIER);
  f.token = 0;
  EXPECT_EQ(Check(f), -EPROTO);
  f = Good(LITE_SYNC_REQ_DIED);
  f.lmr_id = 7;
  EXPECT_EQ(Check(f), -EPROTO);
  f = Good(LITE_SYNC_REQ_DIED);
  f.token = 7;
  EXPECT_EQ(Check(f), -EPROTO);
  f = Good(LITE_SYNC_REQ_DIED);
  f.count = 7;
  EXPECT_EQ(Check(f), -EPROTO);
  for (uint16_t op : {0, 7, 0xff, 0xffff}) {
    f = Good(LITE_SYNC_REQ_LOCK);
    f.op = op;
    EXPECT_EQ(Check(f), -EPROTO) << "op " << op;
  }
}

// The home releases a lock (UNLOCK, CANCEL) only for the exact hold: the
// holder's node, its file's random id and the LOCK's random token. Any
// other value of either, one bit off or guessed, names nothing: the review's
// "UNLOCK with file_id = k for k = 1..N" now needs 2^64 file ids times 2^63
// tokens.
TEST(SyncRulesTest, OnlyTheExactHoldIsReleased) {
  const lite_sync_hold h = {2, 0x9e3779b97f4a7c15ULL, 0x2545f4914f6cdd1dULL};
  EXPECT_TRUE(lite_sync_hold_is(&h, 2, h.file_id, h.token));
  EXPECT_FALSE(lite_sync_hold_is(&h, 3, h.file_id, h.token));
  for (int bit = 0; bit < 64; bit++) {
    EXPECT_FALSE(lite_sync_hold_is(&h, 2, h.file_id ^ (1ULL << bit), h.token))
        << "file id bit " << bit;
    EXPECT_FALSE(lite_sync_hold_is(&h, 2, h.file_id, h.token ^ (1ULL << bit)))
        << "token bit " << bit;
  }
  // The old ids: small counters. None of them names the hold.
  for (uint64_t k = 1; k <= 100000; k++) {
    ASSERT_FALSE(lite_sync_hold_is(&h, 2, k, h.token));
    ASSERT_FALSE(lite_sync_hold_is(&h, 2, h.file_id, k));
    ASSERT_FALSE(lite_sync_hold_is(&h, 2, k, k));
  }
}

constexpr uint32_t kAttacker = 1001, kAlice = 1000, kRoot = 0;

TEST(SyncRulesTest, OneUserCannotTakeEveryWait) {
  lite_sync_budget b = {};
  const uint32_t share = LITE_SYNC_WAITS_PER_UID_DEFAULT;
  for (uint32_t i = 0; i < share; i++)
    ASSERT_EQ(lite_sync_budget_take(&b, kAttacker, share), 0) << i;
  // At its share: refused at once, not queued behind its own waits.
  EXPECT_EQ(lite_sync_budget_take(&b, kAttacker, share), -EDQUOT);
  EXPECT_EQ(b.waits, share);
  // Everybody else still gets waits.
  EXPECT_EQ(lite_sync_budget_take(&b, kAlice, share), 0);
  EXPECT_EQ(lite_sync_budget_take(&b, kRoot, share), 0);
  // One of its waits ends: one more for it, and no more.
  lite_sync_budget_put(&b, kAttacker);
  EXPECT_EQ(lite_sync_budget_take(&b, kAttacker, share), 0);
  EXPECT_EQ(lite_sync_budget_take(&b, kAttacker, share), -EDQUOT);
  EXPECT_EQ(b.waits, share + 2);
}

TEST(SyncRulesTest, TheNodeBudgetIsKeptAndFreedWaitsAreReused) {
  lite_sync_budget b = {};
  const uint32_t share = LITE_SYNC_WAITS_PER_UID_DEFAULT;
  static_assert(LITE_SYNC_WAIT_BUDGET % LITE_SYNC_WAITS_PER_UID_DEFAULT == 0,
                "three full shares fill the budget");
  uint32_t users = LITE_SYNC_WAIT_BUDGET / share;
  for (uint32_t u = 0; u < users; u++)
    for (uint32_t i = 0; i < share; i++)
      ASSERT_EQ(lite_sync_budget_take(&b, 2000 + u, share), 0);
  EXPECT_EQ(b.waits, static_cast<uint32_t>(LITE_SYNC_WAIT_BUDGET));
  // Full: a user with waits left in its share waits (EAGAIN), one at its
  // share is refused.
  EXPECT_EQ(lite_sync_budget_take(&b, kAlice, share), -EAGAIN);
  EXPECT_EQ(lite_sync_budget_take(&b, 2000, share), -EDQUOT);
  lite_sync_budget_put(&b, 2001);
  EXPECT_EQ(lite_sync_budget_take(&b, kAlice, share), 0);
  // A uid that puts what it does not have changes nothing.
  lite_sync_budget_put(&b, 4242);
  EXPECT_EQ(b.waits, static_cast<uint32_t>(LITE_SYNC_WAIT_BUDGET));
}

TEST(SyncRulesTest, ShareOfOneAndOfAll) {
  lite_sync_budget b = {};
  EXPECT_EQ(lite_sync_budget_take(&b, kAlice, 1), 0);
  EXPECT_EQ(lite_sync_budget_take(&b, kAlice, 1), -EDQUOT);
  lite_sync_budget_put(&b, kAlice);
  for (int i = 0; i < LITE_SYNC_WAIT_BUDGET; i++)
    ASSERT_EQ(lite_sync_budget_take(&b, kAlice, LITE_SYNC_WAIT_BUDGET), 0);
  EXPECT_EQ(lite_sync_budget_take(&b, kAlice, LITE_SYNC_WAIT_BUDGET), -EDQUOT);
  EXPECT_EQ(lite_sync_budget_take(&b, kRoot, LITE_SYNC_WAIT_BUDGET), -EAGAIN);
}

// Many users taking and giving back in any order: the counts always match
// a plain model, no user ever exceeds its share, the node never its budget.
TEST(SyncRulesTest, RandomTakesAndPutsMatchAModel) {
  std::mt19937 rng(31);
  lite_sync_budget b = {};
  const uint32_t share = 5;
  std::vector<uint32_t> model(70, 0);
  uint32_t total = 0;
  for (int step = 0; step < 200000; step++) {
    uint32_t uid = rng() % model.size();
    if (rng() % 2) {
      int want = model[uid] >= share                ? -EDQUOT
                 : total >= LITE_SYNC_WAIT_BUDGET ? -EAGAIN
                                                    : 0;
      ASSERT_EQ(lite_sync_budget_take(&b, uid, share), want) << step;
      if (!want) {
        model[uid]++;
        total++;
      }
    } else if (model[uid]) {
      lite_sync_budget_put(&b, uid);
      model[uid]--;
      total--;
    }
    ASSERT_EQ(b.waits, total);
  }
}

}  // namespace
