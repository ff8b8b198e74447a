// The cos/sin table the RoPE stages read, shared by the numerics tests.
#ifndef MONODC_TESTS_ROPETABLE_H
#define MONODC_TESTS_ROPETABLE_H

#include "monodc/reference/LayerData.h"
#include "monodc/stages/ModelConfig.h"

#include <vector>

namespace monodc::testing {

/// f32 [positions, ropeDim] (reference::ropeTable) of a config.
inline std::vector<float> ropeTable(const stages::ModelConfig &c) {
  return reference::ropeTable(int(c.ropeDim), int(c.ropePositions));
}

} // namespace monodc::testing

#endif
