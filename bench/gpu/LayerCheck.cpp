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
#include "CudaSupport.h"
#include "LayerCase.h"
#include "RegionCodec.h"

#include "monodc/reference/LaunchInputs.h"

#include "monodc/formats/NumberFormats.h"

#include <cstdio>
#include <exception>
#include <map>
#include <random>
#include <set>

using gpu::check;
using gpu::die;
using gpu::Manifest;
using gpu::Region;
namespace ref = monodc::reference;

namespace {

constexpr unsigned kSeed = 1;
const char *const kLaunchNames[2] = {"k1", "k2"};
const char *const kRoutedRegions[4] = {"w13", "w13_scale", "w2", "w2_scale"};

/// One launch of one rank: its buffers by region name.
using Buffers = std::map<std::string, CUdeviceptr>;

/// Writes `inputs` into a launch's buffers, each checked against its region
/// in the manifest, and records which regions it wrote.
void upload(const Manifest &m, const Buffers &buffers, const ref::LaunchInputs &inputs,
            std::set<std::string> &written) {
  auto put = [&](const std::string &name, size_t offset, const std::vector<uint8_t> &bytes,
                 bool whole) {
    const Region &reg = gpu::argument(m, name);
    if (whole ? bytes.size() != size_t(reg.bytes) : offset + bytes.size() > size_t(reg.bytes))
      die(m.kernelName + ": " + std::to_string(bytes.size()) + " bytes at " +
          std::to_string(offset) + " do not fit region " + name + " of " +
          std::to_string(reg.bytes));
    check(cuMemcpyHtoD(buffers.at(name) + offset, bytes.data(), bytes.size()), "upload");
    written.insert(name);
  };
  for (const ref::RegionValues &v : inputs.values)
    put(v.region, 0, gpu::encodeRegion(gpu::argument(m, v.region).format, v.values), true);
  for (const ref::RegionBytes &b : inputs.bytes)
    put(b.region, 0, b.bytes, true);
  for (const ref::RegionSlice &s : inputs.slices)
    put(s.region, s.offset, s.bytes, false);
}

/// The FFN launch of `rows` tokens against the reference FFN half (--ffn),
/// then timed fused against its stage kernels; true when every check passed.
bool checkFfnWidth(const std::string &dir, const std::string &config, int tp, int rows,
                   const gpu::Device &device, const std::vector<CUstream> &streams) {
  const Manifest k1 = gpu::readManifest(gpu::layerStem(dir, "k1", config, rows, tp) + ".manifest");
  const Manifest k2 = gpu::readManifest(gpu::layerStem(dir, "k2", config, rows, tp) + ".manifest");
  const std::string stem = gpu::layerStem(dir, "ffn", config, rows, tp);
  const Manifest m = gpu::readManifest(stem + ".manifest");
  const CUfunction kernel = gpu::compileKernel(stem + ".hip", m.kernelName);
  gpu::requireResident(kernel, m, tp, device.sms, stem);
  if (m.ranks != tp)
    die("the FFN launch is built for " + std::to_string(m.ranks) + " ranks, not " +
        std::to_string(tp));
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

  std::vector<CUdeviceptr> owned;
  auto alloc = [&](int64_t bytes) { return owned.emplace_back(gpu::alloc(bytes)); };
  gpu::PeerBuffers peers = gpu::allocatePeers(m, tp);
  std::vector<Buffers> buffers(tp);
  std::vector<CUdeviceptr> epochs(tp), scratch(tp);
  std::vector<std::vector<CUdeviceptr>> values(tp);
  std::vector<std::vector<void *>> params;
  std::vector<int> rankValues(tp);
  for (int r = 0; r < tp; ++r) {
    rankValues[r] = r;
    epochs[r] = alloc(4 * m.epochWords);
    check(cuMemsetD8(epochs[r], 0, 4 * m.epochWords), "zero epoch");
    for (const Region &reg : m.arguments)
      buffers[r][reg.name] = alloc(reg.bytes);
    scratch[r] = alloc(m.scratchBytes);
    check(cuMemsetD8(scratch[r], 0, m.scratchBytes ? m.scratchBytes : 1), "zero scratch");
    values[r] = gpu::argumentValues(
        m, [&](const Region &reg) { return buffers[r].at(reg.name); }, scratch[r], epochs[r],
        peers.table);
    std::set<std::string> written;
    ref::LaunchInputs inputs;
    inputs.values = {{"partial", partials[r]},
                     {"slot_mapping", c.step.slots},
                     {"ffn_residual", seam.residual},
                     {"ffn_post_in", seam.post},
                     {"ffn_comb_in", seam.comb},
                     {"ffn_pre_in", seam.pre}};
    inputs.append(ref::ffnHalfInputs(c.weights, r));
    upload(m, buffers[r], inputs, written);
    for (const char *name : kRoutedRegions) {
      const Region &reg = gpu::argument(m, name);
      check(cuMemsetD8(buffers[r].at(name), reg.format == "e8m0" ? 127 : 0, reg.bytes),
            "routed filler");
    }
    for (int e : experts)
      upload(m, buffers[r], ref::expertInputs(c.experts(r, e), e), written);
    for (const Region &reg : m.arguments)
      if (reg.kind != "output" && !written.count(reg.name))
        die("ffn: nothing written to input " + reg.name);
  }
  for (int r = 0; r < tp; ++r)
    params.push_back(gpu::kernelParams(values[r], m, rankValues[r]));

  auto step = [&] {
    for (int r = 0; r < tp; ++r)
      for (const Region &reg : m.arguments)
        if (reg.kind == "output")
          check(cuMemsetD8(buffers[r].at(reg.name), 0xFF, reg.bytes), "poison");
    check(cuCtxSynchronize(), "uploads");
    for (int r = 0; r < tp; ++r)
      gpu::launchOnGrid(kernel, m, streams[r], params[r].data(), "ffn");
    check(cuCtxSynchronize(), "FFN step");
    std::vector<std::map<std::string, std::string>> got(tp);
    for (int r = 0; r < tp; ++r)
      for (const std::string &name : gpu::ffnLaunchOutputs())
        got[r][name] = gpu::download(buffers[r].at(name), gpu::argument(m, name).bytes);
    return got;
  };
  const auto first = step(), second = step();
  bool ranksAgree = true;
  for (int r = 1; r < tp; ++r)
    ranksAgree &= first[r] == first[0];
  const bool repeatAgrees = second == first;
  gpu::RegionOutputs decoded;
  for (const auto &[name, bytes] : first[0])
    decoded[name] = gpu::decodeRegion(gpu::argument(m, name).format, bytes);
  const gpu::LayerVerdict verdict = gpu::checkFfnLaunch(c.dims, c.weights, decoded, want);
  const gpu::LayerVerdict off =
      gpu::checkFfnLaunch(gpu::offDims(c.dims), c.weights, decoded, wantOff);
  gpu::printVerdict(verdict, rows, "the FFN launch against the reference FFN half");
  std::printf("  (ranks)  %s\n  (repeat) %s\n  (negative) %s\n",
              ranksAgree ? "PASS: every rank bit-identical" : "FAIL: ranks differ",
              repeatAgrees ? "PASS: a second step bit-identical" : "FAIL: the second step differs",
              off.pass() ? "FAIL: the check passes a reference with the routed scaling 3% high"
                         : "PASS: the check rejects a reference with the routed scaling 3% high");
  std::fflush(stdout);
  const bool pass = verdict.pass() && ranksAgree && repeatAgrees && !off.pass();

  // The launch timed: FFN_LAYERS copies of the weights (each a layer), the
  // ranks on their own streams, fused against its stage kernels then _end,
  // one CUDA graph each (5 warm-ups, 20 replays), us a layer.
  const int layers = std::getenv("FFN_LAYERS") ? std::atoi(std::getenv("FFN_LAYERS")) : 4;
  if (layers > 0) {
    CUmodule unfusedModule =
        gpu::compileModule(gpu::readText(stem + ".unfused.hip"), stem + ".unfused.hip");
    std::vector<CUfunction> stageKernels;
    for (size_t s = 0; s <= m.stages.size(); ++s) {
      CUfunction f;
      const std::string name = m.kernelName + (s < m.stages.size() ? "_s" + std::to_string(s) : "_end");
      check(cuModuleGetFunction(&f, unfusedModule, name.c_str()), "unfused kernel");
      stageKernels.push_back(f);
    }
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
    for (int layer = 0; layer < layers; ++layer)
      for (int r = 0; r < tp; ++r) {
        std::map<std::string, CUdeviceptr> copies;
        auto bufferOf = [&](const Region &reg) {
          if (reg.kind != "weight" || layer == 0)
            return buffers[r].at(reg.name);
          if (!copies.count(reg.name)) {
            copies[reg.name] = alloc(reg.bytes);
            check(cuMemcpyDtoD(copies[reg.name], buffers[r].at(reg.name), reg.bytes), "weight copy");
          }
          return copies[reg.name];
        };
        layerValues[layer][r] = gpu::argumentValues(m, bufferOf, scratch[r], epochs[r], peers.table);
        unfusedValues[layer][r] =
            gpu::argumentValues(m, bufferOf, unfusedScratch[r], epochs[r], peers.table);
      }
    for (int layer = 0; layer < layers; ++layer)
      for (int r = 0; r < tp; ++r) {
        layerParams[layer].push_back(gpu::kernelParams(layerValues[layer][r], m, rankValues[r]));
        unfusedParams[layer].push_back(gpu::kernelParams(unfusedValues[layer][r], m, rankValues[r]));
      }
    check(cuCtxSynchronize(), "weight copies");
    CUevent fork, join;
    check(cuEventCreate(&fork, 0), "event");
    check(cuEventCreate(&join, 0), "event");
    auto time = [&](bool unfused) {
      return 1000.0 *
             gpu::timeGraph(streams[0], [&] {
               gpu::forkJoin(streams, fork, join, [&] {
                 for (int layer = 0; layer < layers; ++layer)
                   for (int r = 0; r < tp; ++r) {
                     void **p = (unfused ? unfusedParams : layerParams)[layer][r].data();
                     if (!unfused)
                       gpu::launchOnGrid(kernel, m, streams[r], p, "timed ffn");
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
  }
  for (CUdeviceptr p : owned)
    cuMemFree(p);
  gpu::freePeers(peers);
  return pass;
}

} // namespace

int main(int argc, char **argv) {
  gpu::programName = "layer_check";
  if (argc < 5)
    die("usage: layer_check DIR CONFIG TP WIDTH...");
  const std::string dir = argv[1], config = argv[2];
  const int tp = std::atoi(argv[3]);
  const gpu::Device device = gpu::openDevice();
  std::vector<CUstream> streams(tp);
  for (CUstream &s : streams)
    check(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), "stream");
  std::vector<int> rankValues(tp);
  for (int r = 0; r < tp; ++r)
    rankValues[r] = r;
  bool allGood = true;

  int padRows = 0, firstWidth = 4;
  if (argc > 5 && std::string(argv[4]) == "--pad") {
    padRows = std::atoi(argv[5]);
    firstWidth = 6;
  }
  if (argc > 4 && std::string(argv[4]) == "--ffn") {
    if (argc < 6)
      die("usage: layer_check DIR CONFIG TP --ffn WIDTH...");
    for (int a = 5; a < argc; ++a)
      allGood &= checkFfnWidth(dir, config, tp, std::atoi(argv[a]), device, streams);
    std::printf("%s\n", allGood ? "FFN CHECK PASSED" : "FFN CHECK FAILED");
    return allGood ? 0 : 1;
  }

  if (firstWidth >= argc)
    die("usage: layer_check DIR CONFIG TP [--pad P] WIDTH...");
  for (int a = firstWidth; a < argc; ++a) {
    const int rows = std::atoi(argv[a]);
    Manifest manifests[2];
    CUfunction kernels[2];
    for (int phase = 0; phase < 2; ++phase) {
      const std::string stem = gpu::layerStem(dir, kLaunchNames[phase], config, rows, tp);
      manifests[phase] = gpu::readManifest(stem + ".manifest");
      kernels[phase] = gpu::compileKernel(stem + ".hip", manifests[phase].kernelName);
      gpu::requireResident(kernels[phase], manifests[phase], tp, device.sms, stem);
    }
    const Manifest &k1 = manifests[0], &k2 = manifests[1];
    if (k2.ranks != tp)
      die("K2 is built for " + std::to_string(k2.ranks) + " ranks, not " + std::to_string(tp));
    gpu::LayerCase c;
    try {
      c = gpu::makeLayerCase(k1, k2, rows, kSeed, padRows);
    } catch (const std::exception &e) {
      die(e.what());
    }
    const std::vector<int> experts = ref::selectedExperts(c.want.routing);
    if (padRows > 0)
      std::printf("rows %d: the last %d are pad rows; the %d real rows are compared\n", rows,
                  padRows, rows - padRows);

    // Each rank: K1's buffers, then K2's (those K2 reads from K1 are K1's),
    // one epoch buffer for both, a scratch buffer each; K2's peer buffers.
    std::vector<Buffers> buffers[2];
    std::vector<CUdeviceptr> owned;
    auto alloc = [&](int64_t bytes) { return owned.emplace_back(gpu::alloc(bytes)); };
    std::map<std::string, std::string> fromK1(ref::k2RegionsFromK1().begin(),
                                              ref::k2RegionsFromK1().end());
    gpu::PeerBuffers peers[2];
    std::vector<std::vector<CUdeviceptr>> values[2];
    std::vector<std::vector<void *>> params[2];
    for (int phase = 0; phase < 2; ++phase) {
      const Manifest &m = manifests[phase];
      if (m.peerSlotBytes > 0)
        peers[phase] = gpu::allocatePeers(m, tp);
      buffers[phase].resize(tp);
      values[phase].resize(tp);
    }
    std::vector<CUdeviceptr> epochs(tp);
    for (int r = 0; r < tp; ++r) {
      const int64_t epochBytes = 4 * std::max(k1.epochWords, k2.epochWords);
      epochs[r] = alloc(epochBytes);
      check(cuMemsetD8(epochs[r], 0, epochBytes), "zero epoch");
      std::set<std::string> written[2];
      for (int phase = 0; phase < 2; ++phase) {
        const Manifest &m = manifests[phase];
        for (const Region &reg : m.arguments) {
          if (phase == 1 && fromK1.count(reg.name)) {
            const Region &source = gpu::argument(k1, fromK1[reg.name]);
            if (source.bytes != reg.bytes || source.format != reg.format)
              die("K2's " + reg.name + " is not K1's " + source.name);
            buffers[1][r][reg.name] = buffers[0][r].at(source.name);
            written[1].insert(reg.name);
            continue;
          }
          buffers[phase][r][reg.name] = alloc(reg.bytes);
        }
        const CUdeviceptr scratch = alloc(m.scratchBytes);
        check(cuMemsetD8(scratch, 0, m.scratchBytes ? m.scratchBytes : 1), "zero scratch");
        values[phase][r] = gpu::argumentValues(
            m, [&](const Region &reg) { return buffers[phase][r].at(reg.name); }, scratch,
            epochs[r], peers[phase].table);
      }
      upload(k1, buffers[0][r], ref::k1Inputs(c.weights, r, c.step), written[0]);
      upload(k2, buffers[1][r], ref::k2Inputs(c.weights, r, c.step), written[1]);
      for (const char *name : kRoutedRegions) {
        const Region &reg = gpu::argument(k2, name);
        check(cuMemsetD8(buffers[1][r].at(name), reg.format == "e8m0" ? 127 : 0, reg.bytes),
              "routed filler");
      }
      for (int e : experts)
        upload(k2, buffers[1][r], ref::expertInputs(c.experts(r, e), e), written[1]);
      for (int phase = 0; phase < 2; ++phase)
        for (const Region &reg : manifests[phase].arguments)
          if (reg.kind != "output" && !written[phase].count(reg.name))
            die(std::string(kLaunchNames[phase]) + ": nothing written to input " + reg.name);
    }
    for (int phase = 0; phase < 2; ++phase)
      for (int r = 0; r < tp; ++r)
        params[phase].push_back(
            gpu::kernelParams(values[phase][r], manifests[phase], rankValues[r]));

    // A step: outputs poisoned (not the KV cache, K1's state), K1 then K2 on
    // each rank's stream; then the compared regions of every rank.
    const gpu::RegionOutputs expected = gpu::referenceRegions(c.want);
    auto step = [&] {
      for (int phase = 0; phase < 2; ++phase)
        for (int r = 0; r < tp; ++r)
          for (const Region &reg : manifests[phase].arguments)
            if (reg.kind == "output" && reg.format != "byte")
              check(cuMemsetD8(buffers[phase][r].at(reg.name), 0xFF, reg.bytes), "poison");
      check(cuCtxSynchronize(), "uploads");
      for (int r = 0; r < tp; ++r)
        for (int phase = 0; phase < 2; ++phase)
          gpu::launchOnGrid(kernels[phase], manifests[phase], streams[r], params[phase][r].data(),
                            kLaunchNames[phase]);
      check(cuCtxSynchronize(), "layer step");
      std::vector<std::map<std::string, std::string>> got(tp);
      for (int r = 0; r < tp; ++r)
        for (const auto &[name, values] : expected) {
          const int phase = k1.argument(name) ? 0 : 1;
          got[r][name] =
              gpu::download(buffers[phase][r].at(name), gpu::argument(manifests[phase], name).bytes);
        }
      return got;
    };
    const auto first = step(), second = step();
    bool ranksAgree = true;
    for (int r = 1; r < tp; ++r)
      ranksAgree &= first[r] == first[0];
    const bool repeatAgrees = second == first;
    gpu::RegionOutputs decoded;
    for (const auto &[name, bytes] : first[0]) {
      const int phase = k1.argument(name) ? 0 : 1;
      decoded[name] = gpu::decodeRegion(gpu::argument(manifests[phase], name).format, bytes);
      // The pad rows come last: the real rows are each output's first values.
      decoded[name].resize(expected.at(name).size());
    }
    const gpu::LayerVerdict verdict = gpu::checkLayer(c.dims, c.weights, decoded, c.want);
    const gpu::LayerVerdict off =
        gpu::checkLayer(gpu::offDims(c.dims), c.weights, decoded, c.wantOff);
    gpu::printVerdict(verdict, rows, "K1 + K2 against the reference layer");
    std::printf("  (ranks)  %s\n  (repeat) %s\n  (negative) %s\n",
                ranksAgree ? "PASS: every rank bit-identical" : "FAIL: ranks differ",
                repeatAgrees ? "PASS: a second step bit-identical"
                             : "FAIL: the second step differs",
                off.pass() ? "FAIL: the check passes a reference with the routed scaling 3% high"
                           : "PASS: the check rejects a reference with the routed scaling 3% high");
    std::fflush(stdout);
    allGood &= verdict.pass() && ranksAgree && repeatAgrees && !off.pass();

    for (CUdeviceptr p : owned)
      cuMemFree(p);
    for (gpu::PeerBuffers &p : peers)
      gpu::freePeers(p);
  }
  std::printf("%s\n", allGood ? "LAYER CHECK PASSED" : "LAYER CHECK FAILED");
  return allGood ? 0 : 1;
}
