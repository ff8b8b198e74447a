//===- LayerMap.cpp - which launches each decoder layer runs --------------===//
#include "monodc/runtime/LayerMap.h"

#include <algorithm>

using namespace monodc::runtime;

namespace {
// DeepSeek-V4.1-Flash (docs/numerics.md section 1): 40 layers; compress
// ratio 0 for layers 0-1, 2 for 2-19, 1 for 20-39; the FFN launch alone on
// the layers without a fused attention (0-2, and those that own a
// compressor or an indexer: 8, 14, 20, 24, 28, 32, 36).
constexpr int64_t kLayers = 40;
constexpr int64_t kFfnOnly[] = {0, 1, 2, 8, 14, 20, 24, 28, 32, 36};
int64_t compressRatio(int64_t layer) { return layer < 2 ? 0 : (layer < 20 ? 2 : 1); }
} // namespace

std::vector<std::string> LayerPlan::launches() const {
  if (fusedWhole)
    return {"k1", "k2"};
  return {"ffn"};
}

Result<std::vector<LayerPlan>> monodc::runtime::layerMap(std::string_view model) {
  if (model != "dsv41" && model != "tiny" && model != "moe16")
    return makeError("no layer map for model '" + std::string(model) +
                     "' (known: dsv41, and its validation configs tiny and moe16)");
  std::vector<LayerPlan> map;
  for (int64_t layer = 0; layer < kLayers; ++layer) {
    const bool ffnOnly = std::find(std::begin(kFfnOnly), std::end(kFfnOnly), layer) !=
                         std::end(kFfnOnly);
    map.push_back({layer, !ffnOnly, compressRatio(layer)});
  }
  return map;
}

std::string monodc::runtime::layerRanges(const std::vector<int64_t> &layers) {
  std::string text;
  for (size_t i = 0; i < layers.size();) {
    size_t j = i;
    while (j + 1 < layers.size() && layers[j + 1] == layers[j] + 1)
      ++j;
    // Appended piece by piece: GCC 12 takes `"-" + std::to_string(...)` for
    // an overlapping copy (-Wrestrict).
    if (!text.empty())
      text += ", ";
    text += std::to_string(layers[i]);
    if (j > i) {
      text += '-';
      text += std::to_string(layers[j]);
    }
    i = j + 1;
  }
  return text;
}

Result<int64_t> monodc::runtime::positionLimit(std::string_view model) {
  if (Result<std::vector<LayerPlan>> map = layerMap(model); !map)
    return map.error();
  return int64_t(1) << 24;
}

bool monodc::runtime::readsCompressedKeys(std::string_view launch) {
  return launch == "k2" || launch == "attention_back";
}
