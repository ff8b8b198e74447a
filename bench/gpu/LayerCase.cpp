// The host side of the GPU layer check (see LayerCase.h).
#include "LayerCase.h"

#include "monodc/reference/LaunchInputs.h"
#include "monodc/reference/LayerComparison.h"
#include "monodc/reference/LayerData.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <stdexcept>

namespace gpu {
namespace {

const monodc::runtime::RegionSpec &arg(const Manifest &m, const std::string &name) {
  const monodc::runtime::RegionSpec *r = m.argument(name);
  if (!r)
    throw std::runtime_error("manifest of " + m.kernelName + " has no argument " + name);
  return *r;
}

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

OutputCheck stageCheck(const std::string &region, const ref::Comparison &c) {
  return {region,          "stage: rel <= 1e-2, cos >= 0.9999",
          c.relativeError, c.cosine,
          c.nonFinite,     ref::withinStageBounds(c)};
}

} // namespace

ref::LayerDims layerDims(const Manifest &k1, const Manifest &k2) {
  ref::LayerDims d;
  d.hidden = int(arg(k1, "x").cols);
  d.tp = int(k2.ranks);
  d.headDim = int(arg(k1, "kv_norm").cols);
  d.headsPerRank = int(arg(k1, "q").cols) / d.headDim;
  d.ropeDim = int(arg(k1, "cos_sin").cols);
  d.ropePositions = int(arg(k1, "cos_sin").rows);
  d.qRank = int(arg(k1, "q_norm").cols);
  d.headsPerGroup = int(arg(k2, "wo_a").cols) / d.headDim;
  d.groupRank = int(arg(k2, "wo_a").rows) / (d.headsPerRank / d.headsPerGroup);
  // The window's split-K state has a column a 64-key chunk.
  for (const monodc::runtime::RegionSpec &r : k2.scratch)
    if (r.name == "window_max")
      d.windowKeys = int(r.cols) * 64;
  if (d.windowKeys == 0)
    throw std::runtime_error("manifest of " + k2.kernelName + " has no window_max scratch");
  d.compressedKeys = int(arg(k2, "index_topk").cols);
  d.experts = int(arg(k2, "gate").rows);
  d.topK = int(arg(k2, "topk_indices").cols);
  d.sharedPerRank = int(arg(k2, "shared_down").cols);
  d.routedPerRank = int(arg(k2, "w2").cols);
  d.cachePages = int(arg(k1, "kv_cache").rows);
  if (arg(k1, "kv_cache").cols != d.kvLayout().pageBytes() ||
      arg(k2, "compressed_cache").rows != d.cachePages)
    throw std::runtime_error("the caches are not pages of 32 fp8_ds_mla records");
  return d;
}

LayerCase makeLayerCase(const Manifest &k1, const Manifest &k2, int rows, unsigned seed,
                        int padRows) {
  if (k1.rows != rows || k2.rows != rows)
    throw std::runtime_error("the manifests are not for " + std::to_string(rows) + " rows");
  if (padRows < 0 || padRows >= rows)
    throw std::runtime_error("a step of " + std::to_string(rows) + " rows cannot have " +
                             std::to_string(padRows) + " pad rows");
  LayerCase c;
  c.dims = layerDims(k1, k2);
  auto start = std::chrono::steady_clock::now();
  c.weights = ref::randomLayerWeights(c.dims, seed);
  c.experts = ref::randomExperts(c.dims, seed);
  const int real = rows - padRows;
  const ref::StepInputs realStep = ref::randomStep(c.dims, real, seed + 1000u + unsigned(rows));
  std::vector<int> padAt;
  for (int r = real; r < rows; ++r)
    padAt.push_back(r);
  c.step = padRows == 0 ? realStep
                        : ref::padStep(realStep, padAt, std::numeric_limits<float>::quiet_NaN());
  const double inputSeconds = secondsSince(start);
  start = std::chrono::steady_clock::now();
  c.want = ref::referenceLayer(c.dims, c.weights, c.experts, realStep);
  const double referenceSeconds = secondsSince(start);
  start = std::chrono::steady_clock::now();
  const ref::LayerDims off = offDims(c.dims);
  const ref::MhcOutputs &seam = c.want.attnSeam;
  c.wantOff = ref::referenceFfnHalf(off, c.weights, c.experts, real, seam.residual, c.want.attnOut,
                                    seam.post, seam.comb, seam.pre);
  c.wantOff.attnSeam = c.want.attnSeam;
  c.wantOff.attnOut = c.want.attnOut;
  const double offSeconds = secondsSince(start);
  const std::vector<bool> &ties = c.want.nearTie;
  std::printf("rows %d: host weights and step %.1f s, reference layer %.1f s, FFN half with the "
              "routed scaling off %.1f s; %zu of %d experts selected, %td near-ties; caches of "
              "%d pages, a RoPE table of %d positions and block tables of %d pages a row (given "
              "at launch); positions up to %.0f\n",
              rows, inputSeconds, referenceSeconds, offSeconds,
              ref::selectedExperts(c.want.routing).size(), c.dims.experts,
              std::count(ties.begin(), ties.end(), true), c.dims.cachePages, c.dims.ropePositions,
              c.dims.tablePages(),
              *std::max_element(c.step.positions.begin(), c.step.positions.end()));
  std::fflush(stdout);
  return c;
}

StretchLayer makeStretchLayer(const ref::LayerDims &dims, const ref::StepInputs &streams,
                              bool ffnLaunch, int ratio, unsigned seed) {
  StretchLayer l;
  auto start = std::chrono::steady_clock::now();
  l.weights = ref::randomLayerWeights(dims, seed);
  l.experts = ref::randomExperts(dims, seed);
  l.step = streams;
  std::mt19937 rng(seed * 7919u + 17u);
  l.step.window = ref::randomKvCache(dims.kvLayout(), dims.cachePages, rng);
  l.step.compressed = ref::randomKvCache(dims.kvLayout(), dims.cachePages, rng);
  ref::randomCompressedKeys(dims, l.step, ratio, rng);
  const double inputSeconds = secondsSince(start);
  start = std::chrono::steady_clock::now();
  if (ffnLaunch) {
    ref::AttentionHalf attention = ref::referenceAttentionHalf(dims, l.weights, l.step);
    const ref::MhcOutputs &seam = attention.seam;
    l.want = ref::referenceFfnHalf(dims, l.weights, l.experts, l.step.rows, seam.residual,
                                   attention.attnOut, seam.post, seam.comb, seam.pre);
    l.want.attnSeam = std::move(attention.seam);
    l.want.attnOut = std::move(attention.attnOut);
    l.partials = std::move(attention.partials);
  } else {
    l.want = ref::referenceLayer(dims, l.weights, l.experts, l.step);
  }
  const std::vector<bool> &ties = l.want.nearTie;
  std::printf("rows %d: host weights and caches %.1f s, reference layer %.1f s; %zu of %d "
              "experts selected, %td near-ties\n",
              l.step.rows, inputSeconds, secondsSince(start),
              ref::selectedExperts(l.want.routing).size(), dims.experts,
              std::count(ties.begin(), ties.end(), true));
  std::fflush(stdout);
  return l;
}

ref::StepInputs withStreamsOf(ref::StepInputs in, const ref::StepInputs &from) {
  in.residual = from.residual;
  in.x = from.x;
  in.post = from.post;
  in.comb = from.comb;
  in.pre = from.pre;
  return in;
}

ref::LayerDims offDims(ref::LayerDims dims) {
  dims.routedScaling *= kOffRoutedScaling;
  return dims;
}

RegionOutputs referenceRegions(const ref::LayerOutputs &want) {
  const std::vector<int> &indices = want.routing.indices;
  return {{"residual_out", want.attnSeam.residual},
          {"pre", want.attnSeam.pre},
          {"post", want.attnSeam.post},
          {"comb", want.attnSeam.comb},
          {"attn_out", want.attnOut},
          {"ffn_residual_out", want.residual},
          {"ffn_pre", want.pre},
          {"ffn_post", want.post},
          {"ffn_comb", want.comb},
          {"ffn_y", want.y},
          {"topk_indices", std::vector<float>(indices.begin(), indices.end())},
          {"topk_weights", want.routing.weights},
          {"x_out", want.x}};
}

bool LayerVerdict::pass() const {
  for (const OutputCheck &c : checks)
    if (!c.pass)
      return false;
  return true;
}

namespace {

/// The checks of the FFN half (K2's after its attention, or the FFN
/// launch's) from the reduced attention output on, into `v`.
void checkFfnHalf(LayerVerdict &v, const ref::LayerDims &dims, const ref::LayerWeights &weights,
                  const RegionOutputs &got, const ref::LayerOutputs &want) {
  const ref::LayerOutputs layer =
      ref::layerOutputs([&](const std::string &name) { return got.at(name); });
  const ref::LayerComparison l = ref::compareLayer(layer, want, dims.hidden);
  v.checks.push_back(stageCheck("ffn_residual_out", l.residual));
  v.checks.push_back(stageCheck("ffn_pre", l.pre));
  v.checks.push_back(stageCheck("ffn_post", l.post));
  v.checks.push_back(stageCheck("ffn_comb", l.comb));
  v.checks.push_back(stageCheck("ffn_y", ref::compare(got.at("ffn_y"), want.y)));
  // The routing as a stage on its own input, the GPU's ffn_y: indices exact
  // but for its near-ties, weights within the stage bounds. (Against the
  // reference layer's routing, the attention's differences of about 1e-3
  // reorder scores that are close but not near-ties.)
  const size_t k = size_t(dims.topK);
  const int rows = int(want.nearTie.size());
  const ref::Routing own =
      ref::route(ref::routerLogits(got.at("ffn_y"), weights.gate, rows, dims.hidden, dims.experts),
                 weights.bias, rows, dims.experts, dims.topK, dims.routedScaling);
  const std::vector<float> &gotIndices = got.at("topk_indices"),
                           &gotWeights = got.at("topk_weights");
  std::vector<float> gotCompared, wantCompared;
  size_t wrongIndices = 0, ownTies = 0;
  for (size_t t = 0; t < own.nearTie.size(); ++t) {
    if (own.nearTie[t]) {
      ++ownTies;
      continue;
    }
    for (size_t i = t * k; i < (t + 1) * k; ++i) {
      wrongIndices += gotIndices[i] != float(own.indices[i]);
      gotCompared.push_back(gotWeights[i]);
      wantCompared.push_back(own.weights[i]);
    }
  }
  v.checks.push_back({"topk_indices", "exact on own ffn_y (" + std::to_string(wrongIndices) +
                                          " differ, " + std::to_string(ownTies) + " ties)",
                      wrongIndices ? 1.0 : 0.0, wrongIndices ? 0.0 : 1.0, false,
                      wrongIndices == 0});
  v.checks.push_back(stageCheck("topk_weights", ref::compare(gotCompared, wantCompared)));
  v.checks.push_back({"x_out", "every token cos >= 0.999", l.x.relativeError, l.minCosine(),
                      l.x.nonFinite, l.xPasses()});
  v.tokens = int(want.nearTie.size());
  v.excluded = l.excludedCount();
}

} // namespace

LayerVerdict checkLayer(const ref::LayerDims &dims, const ref::LayerWeights &weights,
                        const RegionOutputs &got, const ref::LayerOutputs &want) {
  LayerVerdict v;
  const RegionOutputs expected = referenceRegions(want);
  for (const char *region : {"residual_out", "pre", "post", "comb", "attn_out"})
    v.checks.push_back(stageCheck(region, ref::compare(got.at(region), expected.at(region))));
  checkFfnHalf(v, dims, weights, got, want);
  return v;
}

LayerVerdict checkFfnLaunch(const ref::LayerDims &dims, const ref::LayerWeights &weights,
                            const RegionOutputs &got, const ref::LayerOutputs &want) {
  LayerVerdict v;
  v.checks.push_back(stageCheck("attn_out", ref::compare(got.at("attn_out"), want.attnOut)));
  checkFfnHalf(v, dims, weights, got, want);
  return v;
}

const std::vector<std::string> &ffnLaunchOutputs() {
  static const std::vector<std::string> names = {
      "attn_out", "ffn_residual_out", "ffn_pre",      "ffn_post", "ffn_comb",
      "ffn_y",    "topk_indices",     "topk_weights", "x_out"};
  return names;
}

void printVerdict(const LayerVerdict &verdict, int rows, const char *title) {
  std::printf("rows %d, %s: %d tokens, %d excluded (routing near-ties)\n", rows, title,
              verdict.tokens, verdict.excluded);
  std::printf("  %-18s %-40s %10s %10s %s\n", "region", "bound", "rel err", "cosine", "result");
  for (const OutputCheck &c : verdict.checks)
    std::printf("  %-18s %-40s %10.2e %10.6f %s%s\n", c.region.c_str(), c.bound.c_str(),
                c.relativeError, c.cosine, c.pass ? "PASS" : "FAIL",
                c.nonFinite ? " (values not finite)" : "");
  std::fflush(stdout);
}

} // namespace gpu
