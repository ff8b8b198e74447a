// A whole decode layer on the GPU against the CPU reference layer at the dims
// of the emitted launches: one step of K1 then K2 on every TP rank, the ranks
// concurrently on their own streams with their peer buffers in the same
// memory (as LayerBench), on random weights and inputs in the real formats
// (LayerCase.h). Outputs are poisoned before the step. What the step writes
// is compared with the reference (docs/numerics.md section 6: the seams, the reduced
// attention output and the routing weights as stages, the top-6 exactly,
// every token's x_out cosine >= 0.999, routing near-ties excluded and
// counted); the compared outputs must be bit-identical on every rank and in a
// second step on the same inputs, and the same comparison against a
// reference with the routed scaling 3% high must fail.
//
// The routed experts are gigabytes a rank at full size: only those that the
// reference's routing selects are made and uploaded; the rest of w13 and w2
// holds zero codes under unit scales (finite, and never read unless a token
// routes elsewhere than the reference).
//
//   layer_check DIR CONFIG TP WIDTH...
//   layer_check DIR CONFIG TP --pad P WIDTH...
//   layer_check DIR CONFIG TP --ffn WIDTH...
//   layer_check DIR CONFIG TP --layers FIRST-LAST WIDTH...
//
// reads DIR/{k1,k2}.CONFIG.sm_90.r<W>.tp<TP>.grid<132/TP>.{hip,manifest} (emit.sh layer).
//
// --pad P: the last P rows of each width's step are pad rows (slot_mapping
// and position -1, NaN in every stream, block tables and top-k lists naming
// real pages and rows); the real rows must meet the bounds of the reference
// of the real rows alone, as an unpadded step (docs/numerics.md section 7).
//
// --ffn: the FFN launch (the FFN half alone, DIR/ffn.*, emit.sh layer with
// LAYER_FFN=1; the layer's dims from the K1 and K2 manifests beside it). Each
// rank's attention partial is a random share of the reference layer's
// reduced attention output (bf16), the seam's streams and gates those of
// its attention seam; the reference FFN half runs on the partials reduced
// as the all-reduce does (f32 in rank order, one bf16 rounding). Then the
// same checks as the layer's FFN half, and the launch timed: fused against
// its stage kernels, every rank at once, CUDA graphs over FFN_LAYERS
// (default 4) copies of the weights so that they come from HBM.
//
// --layers FIRST-LAST: one step through those consecutive layers of the
// model's layer map (runtime/model: K1 + K2 with the K2 of the layer's
// compress ratio, DIR/k2.*.c<r>.* for a ratio other than 2, or the FFN launch
// alone; emit.sh layers), as tests/unit/MultiLayerTest.cpp does on the
// simulator. Each layer has its own random weights (seeded by its index) and
// caches; the streams the GPU wrote (residual, x, post, comb, pre) are the
// next layer's inputs, and each layer's outputs are checked against the
// reference layer on those same inputs, with the layer check's bounds (a
// layer the FFN launch serves takes each rank's attention partial from the
// reference, as its attention runs outside the fused path). Every launch of a
// rank shares one epoch buffer, and each launch its scratch and peer buffers,
// across the layers; each layer's weights are freed before the next. The
// ranks must agree, every rank's epoch must count one step a layer, and
// the first K1 + K2 layer after the first, checked against the reference fed
// the previous layer's inputs instead of its outputs, must fail.
#include "CudaSupport.h"
#include "LayerCase.h"
#include "LayerDevice.h"

#include "monodc/reference/LaunchInputs.h"
#include "monodc/reference/LayerData.h"
#include "monodc/runtime/LayerMap.h"

#include "monodc/formats/NumberFormats.h"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <map>
#include <optional>
#include <random>

using gpu::check;
using gpu::CompiledLaunch;
using gpu::die;
using gpu::Manifest;
namespace ref = monodc::reference;
namespace runtime = monodc::runtime;

namespace {

constexpr unsigned kSeed = 1;

std::vector<std::string> regionNames(const gpu::RegionOutputs &regions) {
  std::vector<std::string> names;
  for (const auto &[name, values] : regions)
    names.push_back(name);
  return names;
}

/// Prints the checks beside a width's verdict: every rank bit-identical, a
/// second step bit-identical, the reference with the routed scaling 3% high
/// rejected; true when all three hold.
bool reportStepChecks(bool ranksAgree, bool repeatAgrees, bool offPasses) {
  std::printf("  (ranks)  %s\n  (repeat) %s\n  (negative) %s\n", gpu::ranksLine(ranksAgree),
              repeatAgrees ? "PASS: a second step bit-identical" : "FAIL: the second step differs",
              offPasses ? "FAIL: the check passes a reference with the routed scaling 3% high"
                        : "PASS: the check rejects a reference with the routed scaling 3% high");
  std::fflush(stdout);
  return ranksAgree && repeatAgrees && !offPasses;
}

/// The FFN launch timed (--ffn): FFN_LAYERS copies of the weights (each a
/// layer), the ranks on their own streams, fused against its stage kernels
/// then _end, one CUDA graph each (5 warm-ups, 20 replays), us a layer.
void timeFfnLaunch(const std::string &stem, const CompiledLaunch &ffn,
                   const gpu::LayerOnDevice &layer, const gpu::RankState &state,
                   const std::vector<CUstream> &streams, int rows) {
  const int layers = std::getenv("FFN_LAYERS") ? std::atoi(std::getenv("FFN_LAYERS")) : 4;
  if (layers <= 0)
    return;
  const Manifest &m = ffn.manifest;
  const int tp = layer.tp();
  CUmodule unfusedModule =
      gpu::compileModule(gpu::readText(stem + ".unfused.hip"), stem + ".unfused.hip");
  std::vector<CUfunction> stageKernels;
  for (size_t s = 0; s <= m.stages.size(); ++s) {
    CUfunction f;
    const std::string name =
        m.kernelName + (s < m.stages.size() ? "_s" + std::to_string(s) : "_end");
    check(cuModuleGetFunction(&f, unfusedModule, name.c_str()), "unfused kernel");
    stageKernels.push_back(f);
  }
  std::vector<CUdeviceptr> owned;
  auto alloc = [&](int64_t bytes) { return owned.emplace_back(gpu::alloc(bytes)); };
  std::vector<int> rankValues(tp);
  for (int r = 0; r < tp; ++r)
    rankValues[r] = r;
  // Per layer and rank, the fused launch's values and the unfused
  // kernels' (the same buffers but a scratch of their own, as layer_bench).
  using Values = std::vector<std::vector<CUdeviceptr>>;
  std::vector<Values> layerValues(layers, Values(tp)), unfusedValues(layers, Values(tp));
  std::vector<std::vector<std::vector<void *>>> layerParams(layers), unfusedParams(layers);
  std::vector<CUdeviceptr> unfusedScratch(tp);
  for (int r = 0; r < tp; ++r) {
    unfusedScratch[r] = alloc(m.scratchBytes);
    check(cuMemsetD8(unfusedScratch[r], 0, m.scratchBytes ? m.scratchBytes : 1), "zero scratch");
  }
  for (int copy = 0; copy < layers; ++copy)
    for (int r = 0; r < tp; ++r) {
      const gpu::Buffers &buffers = layer.buffers(0, r);
      std::map<std::string, CUdeviceptr> copies;
      auto bufferOf = [&](const gpu::Region &reg) {
        if (reg.kind != "weight" || copy == 0)
          return buffers.at(reg.name);
        if (!copies.count(reg.name)) {
          copies[reg.name] = alloc(reg.bytes);
          check(cuMemcpyDtoD(copies[reg.name], buffers.at(reg.name), reg.bytes), "weight copy");
        }
        return copies[reg.name];
      };
      layerValues[copy][r] = gpu::argumentValues(m, bufferOf, state.scratch(ffn, r),
                                                 state.epoch(r), state.peerTable(ffn));
      unfusedValues[copy][r] = gpu::argumentValues(m, bufferOf, unfusedScratch[r], state.epoch(r),
                                                   state.peerTable(ffn));
    }
  for (int copy = 0; copy < layers; ++copy)
    for (int r = 0; r < tp; ++r) {
      layerParams[copy].push_back(gpu::kernelParams(layerValues[copy][r], m, rankValues[r]));
      unfusedParams[copy].push_back(gpu::kernelParams(unfusedValues[copy][r], m, rankValues[r]));
    }
  check(cuCtxSynchronize(), "weight copies");
  CUevent fork, join;
  check(cuEventCreate(&fork, 0), "event");
  check(cuEventCreate(&join, 0), "event");
  auto time = [&](bool unfused) {
    return 1000.0 *
           gpu::timeGraph(streams[0], [&] {
             gpu::forkJoin(streams, fork, join, [&] {
               for (int copy = 0; copy < layers; ++copy)
                 for (int r = 0; r < tp; ++r) {
                   void **p = (unfused ? unfusedParams : layerParams)[copy][r].data();
                   if (!unfused)
                     gpu::launchOnGrid(ffn.kernel, m, streams[r], p, "timed ffn");
                   else
                     for (CUfunction f : stageKernels)
                       gpu::launchOnGrid(f, m, streams[r], p, "timed ffn stage");
                 }
             });
           }, /*warmups=*/5, /*reps=*/20) /
           layers;
  };
  const double fused = time(false), unfused = time(true);
  std::printf("rows %d, FFN launch, TP %d, %d weight copies: fused %.1f us, unfused %.1f us "
              "(unfused / fused %.2fx)\n",
              rows, tp, layers, fused, unfused, unfused / fused);
  std::fflush(stdout);
  for (CUdeviceptr p : owned)
    cuMemFree(p);
}

/// The FFN launch of `rows` tokens against the reference FFN half (--ffn),
/// then timed fused against its stage kernels; true when every check passed.
bool checkFfnWidth(const std::string &dir, const std::string &config, int tp, int rows,
                   const gpu::Device &device, const std::vector<CUstream> &streams) {
  const Manifest k1 = gpu::readManifest(gpu::layerStem(dir, "k1", config, rows, tp) + ".manifest");
  const Manifest k2 = gpu::readManifest(gpu::layerStem(dir, "k2", config, rows, tp) + ".manifest");
  const std::string stem = gpu::layerStem(dir, "ffn", config, rows, tp);
  const CompiledLaunch ffn = gpu::compileLaunch(stem, "ffn", tp, device);
  gpu::LayerCase c;
  try {
    c = gpu::makeLayerCase(k1, k2, rows, kSeed);
  } catch (const std::exception &e) {
    die(e.what());
  }
  // Each rank's partial: a random share of the layer's reduced attention
  // output, the last rank's the rest; reduced as the all-reduce does.
  const std::vector<float> &attn = c.want.attnOut;
  std::mt19937 rng(kSeed * 7919u + unsigned(rows));
  std::uniform_real_distribution<float> share(0.0f, 2.0f / float(tp));
  std::vector<std::vector<float>> partials(tp, std::vector<float>(attn.size()));
  std::vector<float> reduced(attn.size());
  for (size_t i = 0; i < attn.size(); ++i) {
    float rest = attn[i];
    for (int r = 0; r + 1 < tp; ++r) {
      partials[r][i] = monodc::formats::roundToBf16(attn[i] * share(rng));
      rest -= partials[r][i];
    }
    partials[tp - 1][i] = monodc::formats::roundToBf16(rest);
    float sum = 0.0f;
    for (int r = 0; r < tp; ++r)
      sum += partials[r][i];
    reduced[i] = monodc::formats::roundToBf16(sum);
  }
  const ref::MhcOutputs &seam = c.want.attnSeam;
  ref::LayerOutputs want = ref::referenceFfnHalf(c.dims, c.weights, c.experts, rows, seam.residual,
                                                 reduced, seam.post, seam.comb, seam.pre);
  want.attnOut = reduced;
  ref::LayerOutputs wantOff = ref::referenceFfnHalf(gpu::offDims(c.dims), c.weights, c.experts, rows,
                                                    seam.residual, reduced, seam.post, seam.comb,
                                                    seam.pre);
  wantOff.attnOut = reduced;
  const std::vector<int> experts = ref::selectedExperts(want.routing);
  std::printf("rows %d, FFN launch: %zu of %d experts selected\n", rows, experts.size(),
              c.dims.experts);

  gpu::RankState state(tp, {&ffn});
  gpu::LayerOnDevice layer({&ffn}, state);
  gpu::uploadFfnLaunch(layer, c.weights, c.experts, experts, partials, c.step.slots, seam);
  const auto first = layer.step(streams, gpu::ffnLaunchOutputs()),
             second = layer.step(streams, gpu::ffnLaunchOutputs());
  const gpu::RegionOutputs decoded = layer.decode(first[0]);
  const gpu::LayerVerdict verdict = gpu::checkFfnLaunch(c.dims, c.weights, decoded, want);
  const gpu::LayerVerdict off =
      gpu::checkFfnLaunch(gpu::offDims(c.dims), c.weights, decoded, wantOff);
  gpu::printVerdict(verdict, rows, "the FFN launch against the reference FFN half");
  const bool pass =
      reportStepChecks(gpu::ranksAgree(first), second == first, off.pass()) && verdict.pass();
  timeFfnLaunch(stem, ffn, layer, state, streams, rows);
  return pass;
}

/// One step of K1 then K2 of `rows` tokens, the last `padRows` pad rows,
/// against the reference layer; true when every check passed.
bool checkLayerWidth(const std::string &dir, const std::string &config, int tp, int rows,
                     int padRows, const gpu::Device &device,
                     const std::vector<CUstream> &streams) {
  const CompiledLaunch k1 =
      gpu::compileLaunch(gpu::layerStem(dir, "k1", config, rows, tp), "k1", tp, device);
  const CompiledLaunch k2 =
      gpu::compileLaunch(gpu::layerStem(dir, "k2", config, rows, tp), "k2", tp, device);
  gpu::LayerCase c;
  try {
    c = gpu::makeLayerCase(k1.manifest, k2.manifest, rows, kSeed, padRows);
  } catch (const std::exception &e) {
    die(e.what());
  }
  if (padRows > 0)
    std::printf("rows %d: the last %d are pad rows; the %d real rows are compared\n", rows,
                padRows, rows - padRows);

  gpu::RankState state(tp, {&k1, &k2});
  gpu::LayerOnDevice layer({&k1, &k2}, state);
  gpu::uploadWholeLayer(layer, c.weights, c.experts, ref::selectedExperts(c.want.routing), c.step);
  const gpu::RegionOutputs expected = gpu::referenceRegions(c.want);
  const std::vector<std::string> names = regionNames(expected);
  const auto first = layer.step(streams, names), second = layer.step(streams, names);
  gpu::RegionOutputs decoded = layer.decode(first[0]);
  // The pad rows come last: the real rows are each output's first values.
  for (auto &[name, values] : decoded)
    values.resize(expected.at(name).size());
  const gpu::LayerVerdict verdict = gpu::checkLayer(c.dims, c.weights, decoded, c.want);
  const gpu::LayerVerdict off =
      gpu::checkLayer(gpu::offDims(c.dims), c.weights, decoded, c.wantOff);
  gpu::printVerdict(verdict, rows, "K1 + K2 against the reference layer");
  return reportStepChecks(gpu::ranksAgree(first), second == first, off.pass()) && verdict.pass();
}

/// Layers FIRST-LAST of `config`'s layer map. The negative check of
/// --layers needs a layer served by K1 + K2 after the first.
std::vector<runtime::LayerPlan> layerStretch(const std::string &config, const std::string &spec) {
  const auto map = runtime::layerMap(config);
  if (!map)
    die(map.message());
  long long first = -1, last = -1;
  char end = 0;
  if (std::sscanf(spec.c_str(), "%lld-%lld%c", &first, &last, &end) != 2 || first < 0 ||
      last <= first || last >= (long long)map->size())
    die("--layers " + spec + ": want FIRST-LAST, two or more layers of the " +
        std::to_string(map->size()) + " of " + config);
  const std::vector<runtime::LayerPlan> stretch(map->begin() + first, map->begin() + last + 1);
  if (std::none_of(stretch.begin() + 1, stretch.end(),
                   [](const runtime::LayerPlan &plan) { return plan.fusedWhole; }))
    die("--layers " + spec + ": no layer after the first is served by K1 + K2 (the negative "
        "check runs on one)");
  return stretch;
}

std::string describe(const runtime::LayerPlan &plan) {
  return "layer " + std::to_string(plan.layer) +
         (plan.fusedWhole ? " (K1 + K2, compress ratio " + std::to_string(plan.ratio) + ")"
                          : " (the FFN launch, attention partials from the reference)");
}

/// One step of `rows` tokens through `stretch` (--layers); true when every
/// layer passed, every rank's epoch counts a step a layer, and the negative
/// failed as it must.
bool checkStretchWidth(const std::string &dir, const std::string &config, int tp,
                       const std::vector<runtime::LayerPlan> &stretch, int rows,
                       const gpu::Device &device, const std::vector<CUstream> &streams) {
  // Each launch the stretch runs, compiled once: K1, the K2 of each ratio,
  // the FFN launch.
  const CompiledLaunch k1 =
      gpu::compileLaunch(gpu::layerStem(dir, "k1", config, rows, tp), "k1", tp, device);
  std::map<int64_t, CompiledLaunch> k2;
  std::optional<CompiledLaunch> ffn;
  std::vector<const CompiledLaunch *> launches = {&k1};
  for (const runtime::LayerPlan &plan : stretch) {
    if (plan.fusedWhole && !k2.count(plan.ratio)) {
      const std::string stem = gpu::layerStem(dir, "k2", config, rows, tp, int(plan.ratio));
      const std::string name = "k2 (ratio " + std::to_string(plan.ratio) + ")";
      const CompiledLaunch &built =
          k2.emplace(plan.ratio, gpu::compileLaunch(stem, name, tp, device)).first->second;
      launches.push_back(&built);
    } else if (!plan.fusedWhole && !ffn) {
      const std::string stem = gpu::layerStem(dir, "ffn", config, rows, tp);
      launches.push_back(&ffn.emplace(gpu::compileLaunch(stem, "ffn", tp, device)));
    }
  }
  ref::LayerDims dims;
  try {
    dims = gpu::layerDims(k1.manifest, k2.begin()->second.manifest);
  } catch (const std::exception &e) {
    die(e.what());
  }
  gpu::RankState state(tp, launches);
  // The step's tokens, with the first layer's streams; then each layer's.
  ref::StepInputs carried = ref::randomStep(dims, rows, kSeed + 1000u + unsigned(rows));
  ref::StepInputs previous;
  bool pass = true, negativeDone = false;
  int excluded = 0;
  for (size_t i = 0; i < stretch.size(); ++i) {
    const runtime::LayerPlan &plan = stretch[i];
    std::printf("== rows %d, %s\n", rows, describe(plan).c_str());
    std::fflush(stdout);
    const gpu::StretchLayer layer = gpu::makeStretchLayer(
        dims, carried, !plan.fusedWhole, int(plan.ratio), kSeed * 1000u + unsigned(plan.layer));
    const std::vector<int> experts = ref::selectedExperts(layer.want.routing);
    bool ranksAgree = false;
    gpu::RegionOutputs decoded;
    {
      // The layer's buffers, freed before the next layer's: a rank's
      // routed experts alone are gigabytes.
      gpu::LayerOnDevice onDevice(plan.fusedWhole
                                      ? std::vector<const CompiledLaunch *>{&k1, &k2.at(plan.ratio)}
                                      : std::vector<const CompiledLaunch *>{&*ffn},
                                  state);
      if (plan.fusedWhole)
        gpu::uploadWholeLayer(onDevice, layer.weights, layer.experts, experts, layer.step);
      else
        gpu::uploadFfnLaunch(onDevice, layer.weights, layer.experts, experts, layer.partials,
                             layer.step.slots, layer.want.attnSeam);
      const auto outputs = onDevice.step(
          streams, plan.fusedWhole ? regionNames(gpu::referenceRegions(layer.want))
                                   : gpu::ffnLaunchOutputs());
      ranksAgree = gpu::ranksAgree(outputs);
      decoded = onDevice.decode(outputs[0]);
    }
    const gpu::LayerVerdict verdict =
        plan.fusedWhole ? gpu::checkLayer(dims, layer.weights, decoded, layer.want)
                        : gpu::checkFfnLaunch(dims, layer.weights, decoded, layer.want);
    gpu::printVerdict(verdict, rows,
                      (describe(plan) + " against the reference layer on its GPU inputs").c_str());
    std::printf("  (ranks)  %s\n", gpu::ranksLine(ranksAgree));
    bool layerPasses = verdict.pass() && ranksAgree;
    if (i > 0 && plan.fusedWhole && !negativeDone) {
      // Fed the previous layer's inputs instead of its outputs, the
      // reference must no longer match what the GPU wrote.
      const ref::LayerOutputs stale = ref::referenceLayer(
          dims, layer.weights, layer.experts, gpu::withStreamsOf(layer.step, previous));
      const bool stalePasses = gpu::checkLayer(dims, layer.weights, decoded, stale).pass();
      std::printf("  (negative) %s the reference fed layer %lld's inputs\n",
                  stalePasses ? "FAIL: the outputs pass against" : "PASS: the outputs fail against",
                  (long long)stretch[i - 1].layer);
      layerPasses &= !stalePasses;
      negativeDone = true;
    }
    std::printf("rows %d, %s: %s\n", rows, describe(plan).c_str(), layerPasses ? "PASS" : "FAIL");
    std::fflush(stdout);
    pass &= layerPasses;
    excluded += verdict.excluded;
    previous = layer.step;
    ref::handOver(carried,
                  ref::layerOutputs([&](const std::string &name) { return decoded.at(name); }));
  }
  // K2 and the FFN launch end a step each: one a layer on every rank.
  bool epochsCount = true;
  for (uint32_t steps : state.stepsEnded())
    epochsCount &= steps == stretch.size();
  std::printf("rows %d: %d tokens excluded in all (routing near-ties); every rank's epoch %s\n",
              rows, excluded,
              epochsCount ? "PASS: one step a layer" : "FAIL: not one step a layer");
  std::fflush(stdout);
  return pass && epochsCount;
}

} // namespace

int main(int argc, char **argv) {
  gpu::programName = "layer_check";
  const std::string usage =
      "usage: layer_check DIR CONFIG TP [--pad P | --ffn | --layers FIRST-LAST] WIDTH...";
  if (argc < 5)
    die(usage);
  const std::string dir = argv[1], config = argv[2], mode = argv[4][0] == '-' ? argv[4] : "";
  const int tp = std::atoi(argv[3]);
  int firstWidth = 4;
  if (mode == "--pad" || mode == "--layers")
    firstWidth = 6;
  else if (mode == "--ffn")
    firstWidth = 5;
  else if (!mode.empty())
    die(usage);
  if (firstWidth >= argc)
    die(usage);
  std::vector<int> widths;
  for (int a = firstWidth; a < argc; ++a)
    widths.push_back(std::atoi(argv[a]));

  const gpu::Device device = gpu::openDevice();
  std::vector<CUstream> streams(tp);
  for (CUstream &s : streams)
    check(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), "stream");
  bool allGood = true;
  if (mode == "--ffn") {
    for (int rows : widths)
      allGood &= checkFfnWidth(dir, config, tp, rows, device, streams);
    std::printf("%s\n", allGood ? "FFN CHECK PASSED" : "FFN CHECK FAILED");
  } else if (mode == "--layers") {
    const std::vector<runtime::LayerPlan> stretch = layerStretch(config, argv[5]);
    for (int rows : widths)
      allGood &= checkStretchWidth(dir, config, tp, stretch, rows, device, streams);
    std::printf("%s\n", allGood ? "MULTI-LAYER CHECK PASSED" : "MULTI-LAYER CHECK FAILED");
  } else {
    const int padRows = mode == "--pad" ? std::atoi(argv[5]) : 0;
    for (int rows : widths)
      allGood &= checkLayerWidth(dir, config, tp, rows, padRows, device, streams);
    std::printf("%s\n", allGood ? "LAYER CHECK PASSED" : "LAYER CHECK FAILED");
  }
  return allGood ? 0 : 1;
}
