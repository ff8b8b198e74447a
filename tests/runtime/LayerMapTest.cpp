// The model's layer map against docs/numerics.md section 1, written out here.
#include "monodc/runtime/LayerMap.h"

#include <gtest/gtest.h>

#include <set>

using namespace monodc::runtime;

TEST(LayerMap, Dsv41HasThirtyFusedLayersAndTenFfnLaunches) {
  const auto layers = layerMap("dsv41");
  ASSERT_TRUE(layers) << layers.message();
  const std::vector<LayerPlan> &map = *layers;
  ASSERT_EQ(map.size(), 40u);
  const std::set<int64_t> ffn = {0, 1, 2, 8, 14, 20, 24, 28, 32, 36};
  std::vector<int64_t> ratio2, ratio1;
  for (const LayerPlan &p : map) {
    EXPECT_EQ(p.layer, &p - map.data());
    EXPECT_EQ(p.fusedWhole, !ffn.count(p.layer)) << "layer " << p.layer;
    EXPECT_EQ(p.ratio, p.layer < 2 ? 0 : (p.layer < 20 ? 2 : 1)) << "layer " << p.layer;
    EXPECT_EQ(p.launches(), p.fusedWhole ? std::vector<std::string>({"k1", "k2"})
                                         : std::vector<std::string>({"ffn"}));
    if (p.fusedWhole)
      (p.ratio == 2 ? ratio2 : ratio1).push_back(p.layer);
  }
  EXPECT_EQ(layerRanges(ratio2), "3-7, 9-13, 15-19");
  EXPECT_EQ(layerRanges(ratio1), "21-23, 25-27, 29-31, 33-35, 37-39");
}

TEST(LayerMap, RangesJoinOnlyConsecutiveLayers) {
  EXPECT_EQ(layerRanges({}), "");
  EXPECT_EQ(layerRanges({4}), "4");
  EXPECT_EQ(layerRanges({0, 1, 2, 8, 14, 15}), "0-2, 8, 14-15");
}

TEST(LayerMap, TheValidationConfigsHaveTheModelsMapAndOthersNone) {
  for (const char *model : {"tiny", "moe16"}) {
    const auto layers = layerMap(model);
    ASSERT_TRUE(layers) << model;
    EXPECT_EQ(layers->size(), 40u) << model;
  }
  const auto none = layerMap("llama");
  ASSERT_FALSE(none);
  EXPECT_EQ(none.message(), "no layer map for model 'llama' (known: dsv41, and its validation "
                            "configs tiny and moe16)");
}
