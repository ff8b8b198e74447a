// A window or compressed KV cache whose every slot holds the fp8_ds_mla
// record of a random bf16 key, built by the reference: the attention tests'
// starting cache.
#ifndef MONODC_TESTS_RANDOMKVCACHE_H
#define MONODC_TESTS_RANDOMKVCACHE_H

#include "monodc/reference/LayerData.h"
#include "monodc/stages/ModelConfig.h"

namespace monodc::testing {

inline reference::KvCache randomKvCache(const stages::ModelConfig &c, std::mt19937 &rng) {
  return reference::randomKvCache({int(c.kvNope()), int(c.ropeDim), int(c.kKvPageTokens)},
                                  int(c.kvCachePages), rng);
}

} // namespace monodc::testing

#endif
