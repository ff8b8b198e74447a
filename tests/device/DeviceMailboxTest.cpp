// The device library's mailbox writes (generic.h) run as one block of host
// threads (HostArch.h): the flag a task publishes, and the flags a task that
// skips the rest of its stage publishes for the later tasks (mono.skip_unless
// rest): every one from the first with the stride, none before it or between.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

// clang-format off
#include "prelude.h"
#include "gemv_shape.h"
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

} // namespace
