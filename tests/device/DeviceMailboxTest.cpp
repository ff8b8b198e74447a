// The device library's mailbox writes (generic.h) run as one block of host
// threads (HostArch.h): the flag a task publishes, and the flags a task that
// skips the rest of its stage publishes for the later tasks (mono.skip_unless
// rest): every one from the first with the stride, none before it or between;
// and a dynamic stage's loop as the emitter prints it, whose publishes hand
// the block its next task (mono_publish_and_claim); and the bounded polls,
// which give up past the rank's budget and write the wait-fault record.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <vector>

// clang-format off
#include "prelude.h"
#include "monodc/device/gemv_shape.h"
#include "monodc/device/epoch_shape.h"
#include "HostArch.h"
#include "generic.h"
// clang-format on

namespace {

constexpr mono_u32 kTag = 7;

mono_u64 flagOf(mono_i64 task) { return (mono_u64(kTag) << 32) | mono_u32(task); }

TEST(DeviceMailbox, APublishWritesItsTasksPairOnly) {
  std::vector<mono_u64> flags(8, 0);
  host_arch::runBlock([&] { mono_publish_flag(flags.data(), 5, kTag); });
  for (mono_i64 t = 0; t < 8; ++t)
    EXPECT_EQ(flags[t], t == 5 ? flagOf(5) : 0u) << "flag " << t;
}

TEST(DeviceMailbox, TheRestIsPublishedFromTheFirstAtItsStride) {
  // More later tasks than threads, so that threads take several each.
  constexpr mono_i64 kTasks = 3 * MONO_BLOCK + 17;
  for (mono_i64 stride : {1, 3}) {
    std::vector<mono_u64> flags(kTasks, 0);
    const mono_i64 first = 40;
    host_arch::runBlock(
        [&] { mono_publish_rest(flags.data(), first, kTasks, stride, kTag); });
    for (mono_i64 t = 0; t < kTasks; ++t) {
      const bool published = t >= first && (t - first) % stride == 0;
      EXPECT_EQ(flags[t], published ? flagOf(t) : 0u) << "stride " << stride << ", flag " << t;
    }
  }
}

TEST(DeviceMailbox, APublishThatClaimsHandsEveryThreadTheNextTaskInTurn) {
  // The emitted loop of a dynamic stage whose tasks end with a publish.
  constexpr mono_i64 kTasks = 9;
  std::vector<mono_u64> flags(kTasks + 4, 0);
  mono_u32 counter = 0, shared = 0;
  std::vector<std::vector<mono_i64>> ran(MONO_BLOCK);
  host_arch::runBlock([&] {
    mono_u32 ahead = 0;
    for (mono_i64 task = mono_claim_task(&counter, &shared, ahead, 1); task < kTasks;) {
      ran[mono_tid()].push_back(task);
      task = mono_publish_and_claim(flags.data(), task, kTag, &counter, &shared, ahead);
    }
  });
  // One block runs every task once, in order, each thread the same one.
  std::vector<mono_i64> inOrder(kTasks);
  for (mono_i64 t = 0; t < kTasks; ++t)
    inOrder[t] = t;
  for (int thread = 0; thread < MONO_BLOCK; ++thread)
    ASSERT_EQ(ran[thread], inOrder) << "thread " << thread;
  for (mono_i64 t = 0; t < (mono_i64)flags.size(); ++t)
    EXPECT_EQ(flags[t], t < kTasks ? flagOf(t) : 0u) << "flag " << t;
  // The first claim takes two tasks, each publish one more: the task held
  // ahead when the stage ends is the one past the end.
  EXPECT_EQ(counter, mono_u32(kTasks + 2));
}

} // namespace

// ---- bounded polls: a wait past the rank's budget gives up and says where ----

struct EpochBuffer {
  std::vector<mono_u32> words = std::vector<mono_u32>(mono_epoch_words(MONO_GRID), 0u);
  mono_u32 *record() { return words.data() + mono_epoch_fault_word(MONO_GRID); }
};

/// Runs `wait` on one block and returns the seconds it took.
double timedBlock(const std::function<void()> &wait) {
  const auto start = std::chrono::steady_clock::now();
  host_arch::runBlock(wait);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

TEST(DeviceMailbox, FlagsThatHoldTheTagAreWaitedForWithoutAFault) {
  std::vector<mono_u64> flags(300);
  for (mono_i64 t = 0; t < 300; ++t)
    flags[t] = flagOf(t);
  EpochBuffer epoch;
  epoch.record()[MONO_FAULT_BUDGET_US] = 1000;
  timedBlock([&] { mono_wait_flags(flags.data(), 0, 300, kTag, epoch.words.data(), 0, 2); });
  timedBlock([&] { mono_wait_peer_flags(flags.data(), 0, 300, kTag, epoch.words.data(), 0, 3); });
  EXPECT_EQ(epoch.record()[MONO_FAULT_STATE], 0u);
}

TEST(DeviceMailbox, AWaitPastItsBudgetGivesUpAndRecordsWhere) {
  // Two flags never get the tag: whichever poll gives up first writes the
  // record, whole, and the block leaves the wait instead of hanging.
  std::vector<mono_u64> flags(300);
  for (mono_i64 t = 0; t < 300; ++t)
    flags[t] = flagOf(t);
  flags[263] = (mono_u64(5) << 32) | 263u;
  flags[9] = (mono_u64(3) << 32) | 9u;
  for (int peer : {0, 1}) {
    EpochBuffer epoch;
    epoch.record()[MONO_FAULT_BUDGET_US] = 2000;
    const double seconds = timedBlock([&] {
      if (peer)
        mono_wait_peer_flags(flags.data(), 0, 300, kTag, epoch.words.data(), 1, 4);
      else
        mono_wait_flags(flags.data(), 0, 300, kTag, epoch.words.data(), 1, 4);
    });
    const mono_u32 *record = epoch.record();
    EXPECT_GE(seconds, 0.002) << "peer " << peer;
    EXPECT_LT(seconds, 2.0) << "peer " << peer;
    EXPECT_EQ(record[MONO_FAULT_STATE], 1u);
    EXPECT_EQ(record[MONO_FAULT_RANK], 1u);
    EXPECT_EQ(record[MONO_FAULT_CTA], 0u);
    EXPECT_EQ(record[MONO_FAULT_SITE], 4u);
    EXPECT_EQ(record[MONO_FAULT_EXPECTED], kTag);
    ASSERT_TRUE(record[MONO_FAULT_FLAG] == 263u || record[MONO_FAULT_FLAG] == 9u)
        << record[MONO_FAULT_FLAG];
    EXPECT_EQ(record[MONO_FAULT_SEEN], record[MONO_FAULT_FLAG] == 263u ? 5u : 3u);
    EXPECT_EQ(record[MONO_FAULT_BUDGET_US], 2000u) << "the budget is the host's to set";
  }
}

TEST(DeviceMailbox, OnceARankGaveUpEveryMissGivesUpAtOnceAndTheFirstRecordStays) {
  // Another CTA of the rank already gave up: a miss here does not wait out
  // its own (long) budget, and does not overwrite what the record says.
  std::vector<mono_u64> flags(4, 0);
  EpochBuffer epoch;
  mono_u32 *record = epoch.record();
  record[MONO_FAULT_BUDGET_US] = 60u * 1000u * 1000u;
  record[MONO_FAULT_STATE] = 1;
  record[MONO_FAULT_SITE] = 11;
  record[MONO_FAULT_FLAG] = 42;
  const double seconds =
      timedBlock([&] { mono_wait_flags(flags.data(), 0, 4, kTag, epoch.words.data(), 0, 2); });
  EXPECT_LT(seconds, 10.0);
  EXPECT_EQ(record[MONO_FAULT_SITE], 11u);
  EXPECT_EQ(record[MONO_FAULT_FLAG], 42u);
}

TEST(DeviceMailbox, TheBudgetDefaultsWhenTheHostSetsNone) {
  // A poll that began 1 ms ago: within the default budget (word 0) it goes
  // on polling; with a budget of 500 us set it gives up.
  EpochBuffer epoch;
  const mono_u64 start = mono_clock_ns() - 1000000ull;
  EXPECT_FALSE(mono_poll_gives_up(epoch.words.data(), start, 0, 1, 3, kTag, 0));
  EXPECT_EQ(epoch.record()[MONO_FAULT_STATE], 0u);
  epoch.record()[MONO_FAULT_BUDGET_US] = 500;
  EXPECT_TRUE(mono_poll_gives_up(epoch.words.data(), start, 0, 1, 3, kTag, 0));
  EXPECT_EQ(epoch.record()[MONO_FAULT_STATE], 1u);
  EXPECT_EQ(MONO_DEFAULT_WAIT_BUDGET_US, 5000000u);
}
