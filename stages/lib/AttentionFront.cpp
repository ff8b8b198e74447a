//===- AttentionFront.cpp - seam norm, wqkv and the q/kv norms ------------===//
//
// DSV41.md section 3 step 6 (seam norm) and section 4, front steps 1-2.
//
//===----------------------------------------------------------------------===//
#include "monodc/stages/AttentionFront.h"

using namespace monodc::dsl;
using namespace monodc::stages;

void monodc::stages::addSeamNorm(Launch &launch, const ModelConfig &config,
                                 const std::string &name, const SeamNormRegions &r) {
  const int64_t width = config.hidden;
  launch.stage(name, launch.options().rows, [&](Task &t) {
    Tile u = t.loadRow(r.u, t.id()).to(f32);
    Tile inverseRms = rsqrt(sum(u * u) / static_cast<float>(width) + config.normEps);
    Tile w = t.loadRow(r.weight, t.index(0)).to(f32);
    Tile y = (u * inverseRms * w).to(bf16);  // the one rounding
    t.store(r.y, t.id(), 0, y);
    Mxfp8Tile q = t.quantizeMxfp8(y.to(f32));
    t.store(r.codes, t.id(), 0, q.codes);
    t.store(r.scales, t.id(), 0, q.scales);
  });
}

void monodc::stages::addWqkvGemv(Launch &launch, const ModelConfig &config,
                                 const WqkvRegions &r) {
  const int64_t blocks = config.qkvWidth() / 32;
  launch.stage("front.wqkv", launch.options().rows * blocks, [&](Task &t) {
    Index token = t.id() / blocks;
    Index firstRow = (t.id() % blocks) * 32;
    Mxfp8Tile x{t.loadRow(r.codes, token), t.loadRow(r.scales, token)};
    Tile out = t.gemv(r.weight, r.weightScales, firstRow, 32, x);
    t.store(r.qkv, token, firstRow, out.to(bf16));
  });
}

void monodc::stages::addRowNorm(Launch &launch, const ModelConfig &config,
                                const std::string &name, const RowNormRegions &r) {
  launch.stage(name, launch.options().rows, [&](Task &t) {
    Tile x = t.load(r.source, t.id(), r.col, r.width).to(f32);
    Tile inverseRms = rsqrt(sum(x * x) / static_cast<float>(r.width) + config.normEps);
    Tile w = t.loadRow(r.weight, t.index(0)).to(f32);
    t.store(r.out, t.id(), 0, (x * inverseRms * w).to(bf16));
  });
}
