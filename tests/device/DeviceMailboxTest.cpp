// The device library's mailbox writes (generic.h) run as one block of host
// threads (HostArch.h): the flag a task publishes, and the flags a task that
// skips the rest of its stage publishes for the later tasks (mono.skip_unless
// rest): every one from the first with the stride, none before it or between;
// and a dynamic stage's loop as the emitter prints it, whose publishes hand
// the block its next task (mono_publish_and_claim).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

// clang-format off
#include "prelude.h"
#include "monodc/device/gemv_shape.h"
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
