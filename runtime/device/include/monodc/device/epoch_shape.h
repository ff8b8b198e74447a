// monodc device library: the layout of the epoch buffer, which every launch
// of a step sequence on one rank shares (4-byte words). The compiler's memory
// planning, the simulator, the HIP printer and the runtime's launcher include
// this file too, so they place and read the words where the device does.
// Constant expressions only: no device code.
//
//   [0]                      the epoch e (the step's tags are 2e + 1, 2e + 2)
//   [1]                      arrivals at the step's end
//   [2, 2 + grid)            one mark per CTA
//   [2 + grid, + 256)        a ring of task counters of the dynamic stages
//   [2 + grid + 256, + 8)    the wait-fault record (below)
#ifndef MONO_EPOCH_SHAPE_H
#define MONO_EPOCH_SHAPE_H

#ifndef MONO_SHAPE
#if defined(__CUDACC__)
#define MONO_SHAPE __host__ __device__ constexpr
#else
#define MONO_SHAPE constexpr
#endif
#endif

#define MONO_EPOCH_WORD 0
#define MONO_EPOCH_ARRIVALS 1
#define MONO_EPOCH_MARKS 2
#define MONO_EPOCH_COUNTER_SLOTS 256

// The wait-fault record: a poll that waited past its budget gives up, and
// the first to give up on a rank writes the record; from then on every poll
// of that rank gives up at once, so the launch runs to its end instead of
// hanging. The runtime reads the record after the launch.
#define MONO_FAULT_STATE 0    // 0: no fault; 1: a poll gave up
#define MONO_FAULT_BUDGET_US 1 // the budget in microseconds, set by the host; 0: the default
#define MONO_FAULT_RANK 2
#define MONO_FAULT_CTA 3
#define MONO_FAULT_SITE 4     // the wait site (the manifest's `wait` lines)
#define MONO_FAULT_FLAG 5     // the flag (task) that did not get the tag
#define MONO_FAULT_EXPECTED 6 // the step's tag
#define MONO_FAULT_SEEN 7     // the tag the flag held
#define MONO_FAULT_WORDS 8
// Five seconds: no wait of a healthy step comes near it (a layer step takes
// milliseconds), and a lost rank is reported well before a serving engine's
// own watchdog.
#define MONO_DEFAULT_WAIT_BUDGET_US 5000000u

MONO_SHAPE long long mono_epoch_counters_word(long long grid) { return MONO_EPOCH_MARKS + grid; }
MONO_SHAPE long long mono_epoch_fault_word(long long grid) {
  return mono_epoch_counters_word(grid) + MONO_EPOCH_COUNTER_SLOTS;
}
MONO_SHAPE long long mono_epoch_words(long long grid) {
  return mono_epoch_fault_word(grid) + MONO_FAULT_WORDS;
}

#endif // MONO_EPOCH_SHAPE_H
