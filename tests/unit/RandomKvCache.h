// A window or compressed KV cache whose every slot holds the fp8_ds_mla
// record of a random bf16 key, built by the reference: the attention tests'
// starting cache.
#ifndef MONODC_TESTS_RANDOMKVCACHE_H
#define MONODC_TESTS_RANDOMKVCACHE_H

#include "RandomValues.h"

#include "monodc/reference/Attention.h"
#include "monodc/stages/ModelConfig.h"

#include <numeric>

namespace monodc::testing {

inline reference::KvCache randomKvCache(const stages::ModelConfig &c, std::mt19937 &rng) {
  reference::KvCache cache = reference::makeKvCache(
      {int(c.kvNope()), int(c.ropeDim), int(c.kKvPageTokens)}, int(c.kvCachePages));
  const int slots = int(c.kvCachePages * c.kKvPageTokens);
  std::vector<int> all(slots);
  std::iota(all.begin(), all.end(), 0);
  reference::insertKv(cache, normalValues(rng, size_t(slots) * c.kvDim, 0.0f, 1.0f, true), slots,
                      all);
  return cache;
}

} // namespace monodc::testing

#endif
