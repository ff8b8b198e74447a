// Runs the attention-front launch that monodc emitted for sm_90 on a real GPU
// through nvrtc and the CUDA driver API, and checks it against the CPU
// reference: numerics per width, fused == unfused bit for bit, a race stress
// of graph replays with widths alternating, and speed against the unfused
// baseline with cold weights. Built and run by bench/gpu/run_h200.sh.
#include "monodc/formats/NumberFormats.h"
#include "monodc/reference/Reference.h"

#include "CudaSupport.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace ref = monodc::reference;
namespace fmts = monodc::formats;

namespace {

using gpu::check;
using gpu::die;
using gpu::readText;

using gpu::Manifest;
using gpu::Region;
using gpu::readManifest;

// ---- inputs in the real formats (the same recipe as the unit tests) ----
struct Inputs {
  std::vector<float> u, attnNorm, qNorm, kvNorm;
  ref::BlockScaledE4m3 wqkv;
};

struct Dims {
  int hidden, qkvWidth, qRank, kvDim;
};

std::vector<float> bf16Normal(std::mt19937 &rng, size_t n, float mean, float stddev) {
  std::normal_distribution<float> dist(mean, stddev);
  std::vector<float> v(n);
  for (float &x : v)
    x = fmts::roundToBf16(dist(rng));
  return v;
}

Inputs makeInputs(const Dims &d, int rows, unsigned seed) {
  std::mt19937 rng(seed);
  Inputs in;
  in.u = bf16Normal(rng, size_t(rows) * d.hidden, 0.0f, 1.0f);
  in.attnNorm = bf16Normal(rng, d.hidden, 1.0f, 0.1f);
  in.qNorm = bf16Normal(rng, d.qRank, 1.0f, 0.1f);
  in.kvNorm = bf16Normal(rng, d.kvDim, 1.0f, 0.1f);
  std::normal_distribution<float> w(0.0f, 0.02f);
  std::vector<float> dense(size_t(d.qkvWidth) * d.hidden);
  for (float &x : dense)
    x = w(rng);
  in.wqkv = ref::quantizeBlockE4m3(dense, d.qkvWidth, d.hidden);
  return in;
}

std::vector<uint8_t> bf16Bytes(const std::vector<float> &v) {
  std::vector<uint8_t> out(v.size() * 2);
  for (size_t i = 0; i < v.size(); ++i) {
    uint16_t b = fmts::bf16Bits(v[i]);
    std::memcpy(out.data() + 2 * i, &b, 2);
  }
  return out;
}

std::vector<float> bf16Values(const std::vector<uint8_t> &bytes) {
  std::vector<float> out(bytes.size() / 2);
  for (size_t i = 0; i < out.size(); ++i) {
    uint16_t b;
    std::memcpy(&b, bytes.data() + 2 * i, 2);
    out[i] = fmts::bf16Value(b);
  }
  return out;
}

struct Reference {
  std::vector<float> y, qn, kn;
};

Reference referenceFront(const Dims &d, int rows, const Inputs &in) {
  Reference r;
  r.y = ref::rmsNorm(in.u, rows, d.hidden, in.attnNorm, 1e-20);
  auto xq = ref::quantizeMxfp8Rows(r.y, rows, d.hidden, fmts::Mxfp8Variant::Standard);
  auto qkv = ref::gemvMxfp8xE4m3(xq, in.wqkv);
  std::vector<float> q(size_t(rows) * d.qRank), k(size_t(rows) * d.kvDim);
  for (int row = 0; row < rows; ++row) {
    std::copy_n(qkv.begin() + size_t(row) * d.qkvWidth, d.qRank, q.begin() + size_t(row) * d.qRank);
    std::copy_n(qkv.begin() + size_t(row) * d.qkvWidth + d.qRank, d.kvDim,
                k.begin() + size_t(row) * d.kvDim);
  }
  r.qn = ref::rmsNorm(q, rows, d.qRank, in.qNorm, 1e-20);
  r.kn = ref::rmsNorm(k, rows, d.kvDim, in.kvNorm, 1e-20);
  return r;
}

// ---- one width: its modules, buffers and argument list ----
struct Width {
  Manifest manifest;
  CUmodule fusedModule = nullptr, unfusedModule = nullptr;
  CUfunction fused = nullptr;
  std::vector<CUfunction> unfused;
  std::map<std::string, CUdeviceptr> buffers;
  CUdeviceptr scratch = 0;
  std::vector<std::vector<CUdeviceptr>> weightSets; // per layer copy: wqkv, wqkv_scale
  std::vector<void *> params;
  std::vector<CUdeviceptr> paramValues;
};

using gpu::alloc;

void upload(CUdeviceptr dst, const void *src, size_t bytes) {
  check(cuMemcpyHtoD(dst, src, bytes), "cuMemcpyHtoD");
}

std::vector<uint8_t> download(CUdeviceptr src, size_t bytes) {
  std::vector<uint8_t> out(bytes);
  check(cuMemcpyDtoH(out.data(), src, bytes), "cuMemcpyDtoH");
  return out;
}

/// Binds the argument list for weight set `layer` (0 = the checked one).
void bind(Width &w, CUdeviceptr epoch, size_t layer) {
  w.paramValues.clear();
  for (const Region &r : w.manifest.arguments) {
    if (r.name == "wqkv")
      w.paramValues.push_back(w.weightSets[layer][0]);
    else if (r.name == "wqkv_scale")
      w.paramValues.push_back(w.weightSets[layer][1]);
    else
      w.paramValues.push_back(w.buffers.at(r.name));
  }
  w.paramValues.push_back(w.scratch);
  w.paramValues.push_back(epoch);
  w.params.clear();
  for (CUdeviceptr &p : w.paramValues)
    w.params.push_back(&p);
}

void launchFused(Width &w, CUstream stream) {
  gpu::launchOnGrid(w.fused, w.manifest, stream, w.params.data(), "cuLaunchKernel (fused)");
}

void launchUnfused(Width &w, CUstream stream) {
  for (CUfunction f : w.unfused)
    gpu::launchOnGrid(f, w.manifest, stream, w.params.data(), "cuLaunchKernel (unfused)");
}

void poisonOutputs(Width &w) {
  for (const Region &r : w.manifest.arguments)
    if (r.kind == "output")
      check(cuMemsetD8(w.buffers.at(r.name), 0xFF, r.bytes), "cuMemsetD8");
}

struct Outputs {
  std::vector<uint8_t> y, qn, kn, xq, xs;
};

Outputs readOutputs(Width &w) {
  const Manifest &m = w.manifest;
  Outputs o;
  o.y = download(w.buffers.at("y"), gpu::argument(m, "y").bytes);
  o.qn = download(w.buffers.at("qn"), gpu::argument(m, "qn").bytes);
  o.kn = download(w.buffers.at("kn"), gpu::argument(m, "kn").bytes);
  o.xq = download(w.scratch + gpu::scratchRegion(m, "xq").offset, gpu::scratchRegion(m, "xq").bytes);
  o.xs = download(w.scratch + gpu::scratchRegion(m, "xs").offset, gpu::scratchRegion(m, "xs").bytes);
  return o;
}

struct Row {
  std::string what;
  std::string result;
};

} // namespace

int main(int argc, char **argv) {
  gpu::programName = "front_harness";
  if (argc < 3)
    die("usage: front_harness DIR CONFIG [WIDTHS...] (files DIR/attention_front.CONFIG.sm_90.r<W>.tp2.*)");
  const std::string dir = argv[1], config = argv[2];
  std::vector<int> widths;
  for (int i = 3; i < argc; ++i)
    widths.push_back(std::atoi(argv[i]));
  if (widths.empty())
    widths = {6, 12, 24, 48};
  const long replays = std::getenv("MONO_REPLAYS") ? std::atol(std::getenv("MONO_REPLAYS")) : 100000;

  const gpu::Device gpuDevice = gpu::openDevice();
  const CUdevice device = gpuDevice.device;
  const int sms = gpuDevice.sms;
  char deviceName[256];
  cuDeviceGetName(deviceName, sizeof deviceName, device);
  std::printf("device: %s, %d SMs\n", deviceName, sms);
  CUstream stream;
  check(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");

  const gpu::ByteCompare compare;

  // The epoch buffer of the step sequence: shared by every launch, zeroed once.
  CUdeviceptr epoch = 0;
  std::vector<Row> table;
  bool allGood = true;
  std::map<int, Width> byWidth;
  Dims dims{};
  const int layers = config == "tiny" ? 2 : 8; // enough copies to overflow the 60 MB L2

  for (int rows : widths) {
    std::string stem = dir + "/attention_front." + config + ".sm_90.r" + std::to_string(rows) + ".tp2";
    Width &w = byWidth[rows];
    w.manifest = readManifest(stem + ".manifest");
    const Manifest &m = w.manifest;
    dims = {int(gpu::argument(m, "u").cols), int(gpu::argument(m, "wqkv").rows), int(gpu::argument(m, "qn").cols), int(gpu::argument(m, "kn").cols)};
    w.fusedModule = gpu::compileModule(readText(stem + ".hip"), stem + ".hip");
    w.unfusedModule = gpu::compileModule(readText(stem + ".unfused.hip"), stem + ".unfused.hip");
    check(cuModuleGetFunction(&w.fused, w.fusedModule, m.kernelName.c_str()), "fused kernel");
    for (size_t s = 0; s < m.stages.size(); ++s) {
      CUfunction f;
      check(cuModuleGetFunction(&f, w.unfusedModule, (m.kernelName + "_s" + std::to_string(s)).c_str()),
            "unfused kernel");
      w.unfused.push_back(f);
    }
    // Residency: one CTA per SM, the whole grid at once, or a poll may never end.
    gpu::requireResident(w.fused, m, 1, sms, m.kernelName);
    if (!epoch) {
      epoch = alloc(m.epochWords * 4);
      check(cuMemsetD8(epoch, 0, m.epochWords * 4), "zero epoch");
    }
    // Buffers this harness does not fill (positions, cos_sin) are zeroed:
    // position 0 reads the table's first row.
    for (const Region &r : m.arguments)
      if (r.name != "wqkv" && r.name != "wqkv_scale") {
        w.buffers[r.name] = alloc(r.bytes);
        check(cuMemsetD8(w.buffers[r.name], 0, r.bytes), "zero argument");
      }
    // Token t inserts its key into cache slot t: the slots must be distinct.
    std::vector<float> slots(rows);
    for (int t = 0; t < rows; ++t)
      slots[t] = float(t);
    upload(w.buffers["slot_mapping"], slots.data(), gpu::argument(m, "slot_mapping").bytes);
    w.scratch = alloc(m.scratchBytes);
    check(cuMemsetD8(w.scratch, 0, m.scratchBytes), "zero scratch");

    Inputs in = makeInputs(dims, rows, 1000u + rows);
    upload(w.buffers["u"], bf16Bytes(in.u).data(), gpu::argument(m, "u").bytes);
    upload(w.buffers["attn_norm"], bf16Bytes(in.attnNorm).data(), gpu::argument(m, "attn_norm").bytes);
    upload(w.buffers["q_norm"], bf16Bytes(in.qNorm).data(), gpu::argument(m, "q_norm").bytes);
    upload(w.buffers["kv_norm"], bf16Bytes(in.kvNorm).data(), gpu::argument(m, "kv_norm").bytes);
    for (int l = 0; l < layers; ++l) {
      CUdeviceptr codes = alloc(in.wqkv.codes.size()), scales = alloc(in.wqkv.scales.size());
      upload(codes, in.wqkv.codes.data(), in.wqkv.codes.size());
      upload(scales, in.wqkv.scales.data(), in.wqkv.scales.size());
      w.weightSets.push_back({codes, scales});
    }
    bind(w, epoch, 0);

    // Numerics: fused against the reference, with outputs poisoned first.
    poisonOutputs(w);
    launchFused(w, stream);
    check(cuStreamSynchronize(stream), "fused run");
    Outputs fused = readOutputs(w);
    Reference want = referenceFront(dims, rows, in);
    auto y = bf16Values(fused.y), qn = bf16Values(fused.qn), kn = bf16Values(fused.kn);
    auto cy = ref::compare(y, want.y), cq = ref::compare(qn, want.qn), ck = ref::compare(kn, want.kn);
    bool bounds = ref::withinStageBounds(cy) && ref::withinStageBounds(cq) && ref::withinStageBounds(ck);
    auto mine = ref::quantizeMxfp8Rows(y, rows, dims.hidden, fmts::Mxfp8Variant::Standard);
    bool exact = mine.codes == fused.xq && mine.scales == fused.xs;
    char line[256];
    std::snprintf(line, sizeof line, "%s: y rel %.2e cos %.6f, qn rel %.2e cos %.6f, kn rel %.2e cos %.6f; MXFP8 %s",
                  bounds ? "PASS" : "FAIL", cy.relativeError, cy.cosine, cq.relativeError,
                  cq.cosine, ck.relativeError, ck.cosine, exact ? "exact" : "MISMATCH");
    table.push_back({"numerics " + config + " rows " + std::to_string(rows), line});
    allGood &= bounds && exact;

    // The unfused baseline computes the same thing, bit for bit.
    poisonOutputs(w);
    launchUnfused(w, stream);
    check(cuStreamSynchronize(stream), "unfused run");
    Outputs unfused = readOutputs(w);
    bool same = unfused.y == fused.y && unfused.qn == fused.qn && unfused.kn == fused.kn;
    table.push_back({"fused == unfused rows " + std::to_string(rows), same ? "PASS: bit-identical" : "FAIL: differ"});
    allGood &= same;
  }

  // Race stress: one graph with the narrowest and widest launches, each
  // followed by on-device comparisons with the first run's outputs.
  if (byWidth.size() >= 2) {
    Width &a = byWidth.begin()->second, &b = byWidth.rbegin()->second;
    std::vector<std::pair<CUdeviceptr, CUdeviceptr>> golden;
    std::vector<size_t> sizes;
    for (Width *w : {&a, &b}) {
      launchFused(*w, stream);
      check(cuStreamSynchronize(stream), "golden run");
      for (const char *name : {"y", "qn", "kn"}) {
        size_t bytes = gpu::argument(w->manifest, name).bytes;
        CUdeviceptr copy = alloc(bytes);
        check(cuMemcpyDtoD(copy, w->buffers.at(name), bytes), "golden copy");
        golden.push_back({w->buffers.at(name), copy});
        sizes.push_back(bytes);
      }
    }
    CUdeviceptr mismatches = alloc(8);
    check(cuMemsetD8(mismatches, 0, 8), "zero mismatches");
    CUgraph graph;
    check(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL), "capture");
    size_t g = 0;
    for (Width *w : {&a, &b}) {
      launchFused(*w, stream);
      for (int k = 0; k < 3; ++k, ++g)
        compare.enqueue(golden[g].first, golden[g].second, sizes[g], mismatches, stream);
    }
    check(cuStreamEndCapture(stream, &graph), "end capture");
    CUgraphExec exec;
    check(cuGraphInstantiate(&exec, graph, 0), "instantiate");
    for (long r = 0; r < replays; ++r)
      check(cuGraphLaunch(exec, stream), "graph launch");
    check(cuStreamSynchronize(stream), "replays");
    unsigned long long bad = 0;
    check(cuMemcpyDtoH(&bad, mismatches, 8), "mismatch count");
    uint32_t e = 0;
    check(cuMemcpyDtoH(&e, epoch, 4), "epoch");
    char line[256];
    std::snprintf(line, sizeof line, "%s: %llu mismatching bytes in %ld replays (%ld steps; epoch now %u)",
                  bad == 0 ? "PASS" : "FAIL", bad, replays, 2 * replays, e);
    table.push_back({"race stress rows " + std::to_string(a.manifest.rows) + "/" +
                         std::to_string(b.manifest.rows),
                     line});
    allGood &= bad == 0;
  }

  // Speed: graphs of `layers` launches, each on its own copy of the weights.
  auto timeGraph = [&](const std::function<void()> &body, int launchesPerReplay) {
    return 1000.0 * gpu::timeGraph(stream, body, /*warmups=*/20, /*reps=*/200) / launchesPerReplay;
  };
  // Copy bandwidth (bytes read + written per second) for the floor.
  size_t copyBytes = size_t(1) << 30;
  CUdeviceptr src = alloc(copyBytes), dst = alloc(copyBytes);
  double copyUs = timeGraph([&] { check(cuMemcpyDtoDAsync(dst, src, copyBytes, stream), "copy"); }, 1);
  double bandwidth = 2.0 * copyBytes / (copyUs * 1e-6);
  cuMemFree(src);
  cuMemFree(dst);
  std::printf("device-to-device copy: %.2f TB/s (read + write)\n", bandwidth / 1e12);
  for (auto &[rows, w] : byWidth) {
    double fusedUs = timeGraph([&] {
      for (int l = 0; l < layers; ++l) {
        bind(w, epoch, l);
        launchFused(w, stream);
      }
    }, layers);
    double unfusedUs = timeGraph([&] {
      for (int l = 0; l < layers; ++l) {
        bind(w, epoch, l);
        launchUnfused(w, stream);
      }
    }, layers);
    bind(w, epoch, 0);
    const Manifest &m = w.manifest;
    double bytes = double(gpu::argument(m, "wqkv").bytes + gpu::argument(m, "wqkv_scale").bytes + gpu::argument(m, "attn_norm").bytes +
                          gpu::argument(m, "q_norm").bytes + gpu::argument(m, "kv_norm").bytes + gpu::argument(m, "u").bytes);
    double floorUs = bytes / (bandwidth / 2.0) * 1e6;  // reads at the copy's read rate
    char line[256];
    std::snprintf(line, sizeof line,
                  "fused %.2f us, unfused %.2f us, speed-up %.2fx; floor %.2f us (%.1f%% of floor)",
                  fusedUs, unfusedUs, unfusedUs / fusedUs, floorUs, 100.0 * floorUs / fusedUs);
    table.push_back({"speed rows " + std::to_string(rows) + " (" + std::to_string(rows / 6) + " x 6)", line});
  }

  std::printf("\n%-28s %s\n", "check", "result");
  for (const Row &r : table)
    std::printf("%-28s %s\n", r.what.c_str(), r.result.c_str());
  std::printf("%s\n", allGood ? "ALL CHECKS PASSED" : "SOME CHECKS FAILED");
  return allGood ? 0 : 1;
}
