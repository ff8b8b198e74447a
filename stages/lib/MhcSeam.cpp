//===- MhcSeam.cpp - the mHC seam between sublayers -----------------------===//
#include "monodc/stages/MhcSeam.h"

#include "monodc/stages/GemvStage.h"
#include "monodc/stages/PadRows.h"

using namespace monodc::dsl;
using namespace monodc::stages;

SeamRegions monodc::stages::declareSeamRegions(Launch &l, const ModelConfig &c,
                                               const std::string &p, const Region *x) {
  const int64_t rows = l.options().rows, h = c.hidden, flat = ModelConfig::kStreams * h;
  SeamRegions r;
  r.residual = l.input(p + "residual", bf16, {rows, flat});
  r.x = x ? *x : l.input(p + "x", bf16, {rows, h});
  r.postIn = l.input(p + "post_in", f32, {rows, 4});
  r.combIn = l.input(p + "comb_in", f32, {rows, 16});
  r.preIn = l.input(p + "pre_in", f32, {rows, 4});
  r.fn = l.weight(p + "hc_fn", f32, {ModelConfig::kMixes, flat});
  r.base = l.weight(p + "hc_base", f32, {ModelConfig::kMixes});
  r.scale = l.weight(p + "hc_scale", f32, {3});
  r.residualOut = l.output(p + "residual_out", bf16, {rows, flat});
  r.preOut = l.output(p + "pre", f32, {rows, 4});
  r.postOut = l.output(p + "post", f32, {rows, 4});
  r.combOut = l.output(p + "comb", f32, {rows, 16});
  r.u = l.scratch(p + "u", bf16, {rows, h});
  r.sumsOfSquares = l.scratch(p + "hc_ss", f32, {rows, c.seamSlices()});
  r.mixes = l.scratch(p + "hc_mixes", f32, {rows, ModelConfig::kMixes});
  return r;
}

namespace {

/// Steps 1-2 and the sums of squares of step 3, for one column slice of one
/// token: R'[o] = bf16(px + s) with px = f32(post[o] x), s = f32(comb[0][o] R0)
/// then s = fma(comb[h][o], Rh, s) for h = 1, 2, 3 (vLLM's torch mHC order);
/// u = bf16(sum_o pre[o] R'[o]).
void addFold(Launch &l, const ModelConfig &c, const std::string &name, const SeamRegions &r) {
  const int64_t slices = c.seamSlices(), width = c.seamSlice, h = c.hidden;
  l.stage(name, l.options().rows * slices, [&](Task &t) {
    Index token = t.id() / slices;
    if (!r.slotMapping.name().empty())
      skipPadRow(t, r.slotMapping, token);
    Index col = (t.id() % slices) * width;
    Tile post = t.load(r.postIn, token, 0, 4), comb = t.load(r.combIn, token, 0, 16);
    Tile pre = t.load(r.preIn, token, 0, 4);
    Tile x = t.load(r.x, token, col, width).to(f32);
    Tile streams[4];
    for (int s = 0; s < 4; ++s)
      streams[s] = t.load(r.residual, token, col + t.index(s * h), width).to(f32);
    Tile u, ss;
    for (int o = 0; o < 4; ++o) {
      Tile mixed = comb.at(o) * streams[0];
      for (int s = 1; s < 4; ++s)
        mixed = fma(comb.at(s * 4 + o), streams[s], mixed);
      Tile folded = (post.at(o) * x + mixed).to(bf16);
      t.store(r.residualOut, token, col + t.index(o * h), folded);
      Tile value = folded.to(f32);
      Tile term = pre.at(o) * value;
      u = o == 0 ? term : u + term;
      Tile squares = sum(value * value);
      ss = o == 0 ? squares : ss + squares;
    }
    t.store(r.u, token, col, u.to(bf16));
    t.store(r.sumsOfSquares, token, t.id() % slices, ss);
  });
}

/// The 24 mixes m_j = fn[j] . R'flat, one mix a task for a token group: the
/// mixes are long (4H) and few, so more tasks, not more rows a task, keep
/// them off the critical path (several mixes a task leave most CTAs idle
/// while a few run long tasks).
void addMix(Launch &l, const std::string &name, const SeamRegions &r, bool dynamic) {
  GemvStage mix{name, r.fn, {}, r.residualOut, {}, r.mixes, /*rowsPerTask=*/1, f32};
  mix.dynamic = dynamic;
  addGemvStage(l, mix);
}

/// Steps 3-5 for one token: v = m * rsqrt(ss / 4H + eps), the gates, and
/// Sinkhorn on the 4 x 4 comb.
void addGate(Launch &l, const ModelConfig &c, const std::string &name, const SeamRegions &r) {
  const float flat = static_cast<float>(ModelConfig::kStreams * c.hidden);
  const float eps = ModelConfig::kHcEps;
  l.stage(name, l.options().rows, [&](Task &t) {
    Index token = t.id();
    if (!r.slotMapping.name().empty())
      skipPadRow(t, r.slotMapping, token);
    Tile ss = sum(t.load(r.sumsOfSquares, token, 0, c.seamSlices()));
    Tile v = t.load(r.mixes, token, 0, ModelConfig::kMixes) * rsqrt(ss / flat + c.normEps);
    Tile scale = t.load(r.scale, t.index(0), 0, 3);
    Tile base = t.load(r.base, t.index(0), 0, ModelConfig::kMixes);
    t.store(r.preOut, token, 0, sigmoid(v.slice(0, 4) * scale.at(0) + base.slice(0, 4)) + eps);
    t.store(r.postOut, token, 0,
            ModelConfig::kPostMultiplier * sigmoid(v.slice(4, 4) * scale.at(1) + base.slice(4, 4)));
    Tile comb = v.slice(8, 16) * scale.at(2) + base.slice(8, 16);
    // Softmax along each row, + eps; then columns once; then rows and columns.
    Tile e = exp(comb - expand(maxAlong(comb, 4, 4, 1), 4, 4, 1));
    comb = e / expand(sumAlong(e, 4, 4, 1), 4, 4, 1) + eps;
    // (expand(s) + eps is expand(s + eps) value for value; the emitter
    // prints an expand of a sum as one pass through shared memory.)
    comb = comb / (expand(sumAlong(comb, 4, 4, 0), 4, 4, 0) + eps);
    for (int64_t i = 1; i < ModelConfig::kSinkhornIterations; ++i) {
      comb = comb / (expand(sumAlong(comb, 4, 4, 1), 4, 4, 1) + eps);
      comb = comb / (expand(sumAlong(comb, 4, 4, 0), 4, 4, 0) + eps);
    }
    t.store(r.combOut, token, 0, comb);
  });
}

} // namespace

void monodc::stages::addSeamFold(Launch &l, const ModelConfig &c, const std::string &prefix,
                                 const SeamRegions &r) {
  addFold(l, c, prefix + ".fold", r);
}

void monodc::stages::addSeamMixes(Launch &l, const ModelConfig &c, const std::string &prefix,
                                  const SeamRegions &r, bool dynamicMix) {
  addMix(l, prefix + ".mix", r, dynamicMix);
  addGate(l, c, prefix + ".gate", r);
}
