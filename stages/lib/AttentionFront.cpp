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
  // One task per 16 weight rows for all the step's tokens: the weights are
  // read once per step, and 1792 rows give 112 tasks to spread over the grid.
  constexpr int64_t rowsPerTask = 16;
  const int64_t tokens = launch.options().rows;
  launch.stage("front.wqkv", config.qkvWidth() / rowsPerTask, [&](Task &t) {
    Index firstRow = t.id() * rowsPerTask;
    Tile out = t.gemvRows(r.weight, r.weightScales, firstRow, rowsPerTask, r.codes, r.scales,
                          t.index(0), tokens);
    t.storeRows(r.qkv, t.index(0), firstRow, tokens, out.to(bf16));
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

void monodc::stages::addKeyRope(Launch &launch, const ModelConfig &config,
                                const KeyRopeRegions &r) {
  const int64_t nope = config.kvDim - config.ropeDim, pairs = config.ropeDim / 2;
  launch.stage("front.k_rope", launch.options().rows, [&](Task &t) {
    Tile kn = t.loadRow(r.kn, t.id());
    t.store(r.k, t.id(), 0, kn.slice(0, nope));
    Tile rope = kn.slice(nope, config.ropeDim).to(f32);
    Tile even = rope.slice(0, pairs, 2), odd = rope.slice(1, pairs, 2);
    Index position = t.toIndex(t.load(r.positions, t.id(), 0, 1));
    Tile c = t.load(r.cosSin, position, 0, pairs), s = t.load(r.cosSin, position, pairs, pairs);
    Tile rotated = interleave(even * c - odd * s, even * s + odd * c);
    t.store(r.k, t.id(), nope, rotated.to(bf16));
  });
}
