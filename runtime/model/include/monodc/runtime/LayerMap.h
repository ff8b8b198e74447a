//===- LayerMap.h - which launches each decoder layer runs ------*- C++ -*-===//
// The model's decoder layers as the fused decode path runs them
// (docs/numerics.md section 1): each layer is either a whole fused layer,
// K1 then K2, with the compress ratio of its attention, or the FFN launch
// alone (its attention runs outside the fused scope). LLVM-free: the
// compiler, the CLI and a serving engine's eligibility check read the same
// map.
#ifndef MONODC_RUNTIME_LAYERMAP_H
#define MONODC_RUNTIME_LAYERMAP_H

#include "monodc/runtime/Result.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace monodc::runtime {

struct LayerPlan {
  int64_t layer = 0;
  /// K1 + K2 (the whole layer fused) or the FFN launch alone.
  bool fusedWhole = false;
  /// The compress ratio of the layer's attention (0: window keys only).
  int64_t ratio = 0;
  /// The launches that serve it: {"k1", "k2"} or {"ffn"}.
  std::vector<std::string> launches() const;
};

/// Every layer of `model` in order: DSV41's, which its validation configs
/// (tiny, moe16) stand for; an error naming the known models otherwise.
Result<std::vector<LayerPlan>> layerMap(std::string_view model);

/// The most positions `model`'s kernels serve, 0 .. limit - 1: the RoPE
/// table's rows and the block tables' pages a row are given at launch, up
/// to 2^24 positions (they stay exact in the kernels' f32).
Result<int64_t> positionLimit(std::string_view model);

/// Whether `launch`'s code depends on the compress ratio: K2 and the
/// attention back read compressed keys; every other launch is one build key
/// (ratio 0) at every ratio, and a request's ratio is not asked of it.
bool readsCompressedKeys(std::string_view launch);

/// "3-7, 9-13": consecutive layers joined into ranges.
std::string layerRanges(const std::vector<int64_t> &layers);

} // namespace monodc::runtime

#endif // MONODC_RUNTIME_LAYERMAP_H
