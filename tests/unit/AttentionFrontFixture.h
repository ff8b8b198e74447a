// Shared by the attention-front tests: random inputs in the real formats,
// loading them into a launch's memory, and the CPU reference chain.
#ifndef MONODC_TESTS_ATTENTIONFRONTFIXTURE_H
#define MONODC_TESTS_ATTENTIONFRONTFIXTURE_H

#include "monodc/Simulator/Simulator.h"
#include "monodc/reference/Reference.h"
#include "monodc/stages/ModelConfig.h"

#include <vector>

namespace monodc::testing {

struct FrontInputs {
  std::vector<float> u, attnNorm, qNorm, kvNorm, positions, cosSin;
  reference::BlockScaledE4m3 wqkv;
  /// Distinct cache slots (page boundaries crossed, one pad -1 when rows > 2)
  /// and the cache before the step: random bytes, so a skipped pad and every
  /// byte a record must not touch are checked too.
  std::vector<float> slots;
  std::vector<uint8_t> cacheBefore;
};

struct FrontOutputs {
  std::vector<float> y, qkv, qn, kn, k;
  std::vector<uint8_t> xq, xs, cache;
};

FrontInputs makeFrontInputs(const stages::ModelConfig &c, int rows, unsigned seed);
/// Writes the inputs and weights into a launch's memory.
void loadFrontInputs(sim::LaunchMemory &memory, const FrontInputs &in);
FrontOutputs readFrontOutputs(const sim::LaunchMemory &memory);
/// Builds the attention front (for `built`, else `c`), runs the fusion
/// passes, simulates it with a cache of c.kvCachePages pages (the engine's).
FrontOutputs simulateFront(const stages::ModelConfig &c, int rows, const FrontInputs &in,
                           const sim::Schedule &schedule = {},
                           const stages::ModelConfig *built = nullptr);
/// The cache after the reference inserts keys k at the input's slots.
std::vector<uint8_t> referenceCache(const stages::ModelConfig &c, int rows, const FrontInputs &in,
                                    const std::vector<float> &k);
/// The reference chain, from docs/numerics.md, on the reference's own intermediates.
FrontOutputs referenceFront(const stages::ModelConfig &c, int rows, const FrontInputs &in);

} // namespace monodc::testing

#endif
