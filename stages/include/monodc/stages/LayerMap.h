//===- LayerMap.h - which launches each decoder layer runs ------*- C++ -*-===//
// The model's decoder layers as the fused decode path runs them
// (docs/numerics.md section 1): each layer is either a whole fused layer,
// K1 then K2, with the compress ratio of its attention, or the FFN launch
// alone (its attention runs outside the fused scope).
#ifndef MONODC_STAGES_LAYERMAP_H
#define MONODC_STAGES_LAYERMAP_H

#include "monodc/stages/ModelConfig.h"

#include <string>
#include <vector>

namespace monodc::stages {

struct LayerPlan {
  int64_t layer = 0;
  /// K1 + K2 (the whole layer fused) or the FFN launch alone.
  bool fusedWhole = false;
  /// The compress ratio of the layer's attention (0: window keys only).
  int64_t ratio = 0;
  /// The launches that serve it: {"k1", "k2"} or {"ffn"}.
  std::vector<std::string> launches() const;
};

/// Every layer of the model in order. The validation configs (tiny, moe16)
/// stand for the same model and have its map.
std::vector<LayerPlan> layerMap(const ModelConfig &config);

/// "3-7, 9-13": consecutive layers joined into ranges.
std::string layerRanges(const std::vector<int64_t> &layers);

} // namespace monodc::stages

#endif
