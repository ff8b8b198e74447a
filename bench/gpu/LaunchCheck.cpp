// Runs launches that `monodc simulate --dump` wrote (sm_90 source, manifest,
// inputs and the simulator's outputs) on the GPU and compares every output
// region with the simulator: bytes equal, and the docs/numerics.md stage bounds on
// the decoded values (the transcendental functions differ between the CUDA
// and C libraries, so a few values may differ in their last bits). Each
// launch also runs three times to check it is deterministic on the GPU.
//
// On sm_90 the GEMVs of e4m3 weights run on tensor cores, which
// add a 32-k block's products in another order than the simulator's fma
// chains: their outputs meet the stage bounds, but a stage after them reads
// an input that is not the simulator's, and where it re-quantizes it
// (MXFP8: a last-bit difference moves a code by 1/16) its output can pass
// the stage bounds' relative error. Such a region is held to the whole
// layer's bound instead (docs/numerics.md section 6: every token's, i.e. row's,
// cosine >= 0.999), and listed as passing on that bound.
#include "CudaSupport.h"
#include "RegionCompare.h"

#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

using gpu::check;
using gpu::die;
using gpu::Manifest;
using gpu::readManifest;
using gpu::readText;
using gpu::Region;

int main(int argc, char **argv) {
  gpu::programName = "launch_check";
  if (argc < 3)
    die("usage: launch_check DIR STEM...");
  const std::string dir = argv[1];
  const int sms = gpu::openDevice().sms;
  bool allGood = true;
  // Regions that pass within the stage bounds but are not byte-identical
  // to the simulator: listed at the end, since most regions share the
  // simulator's order and a difference there deserves a look.
  std::vector<std::string> notIdentical, onLayerBound;
  std::printf("%-40s %-14s %12s %10s %10s %s\n", "launch", "output", "equal bytes", "rel err",
              "cosine", "result");
  for (int a = 2; a < argc; ++a) {
    const std::string stem = argv[a], base = dir + "/" + stem;
    Manifest m = readManifest(base + ".manifest");
    CUfunction f = gpu::compileKernel(base + ".hip", m.kernelName);
    // Each rank: its buffers, scratch, epoch and stream; the ranks of a TP
    // launch run at once on one GPU, each with its share of the SMs, their
    // peer buffers in the same device memory.
    const int ranks = m.ranks;
    gpu::requireResident(f, m, ranks, sms, stem);
    std::vector<std::map<std::string, CUdeviceptr>> buffers(ranks);
    std::vector<std::vector<CUdeviceptr>> values(ranks);
    std::vector<CUstream> streams(ranks);
    std::vector<CUdeviceptr> epochs, scratches;
    std::vector<int> rankValues(ranks);
    gpu::PeerBuffers peers;
    if (m.peerSlotBytes > 0)
      peers = gpu::allocatePeers(m, ranks);
    std::vector<std::vector<void *>> params(ranks);
    for (int k = 0; k < ranks; ++k) {
      check(cuStreamCreate(&streams[k], CU_STREAM_NON_BLOCKING), "stream");
      for (const Region &r : m.arguments) {
        const CUdeviceptr p = gpu::alloc(r.bytes);
        buffers[k][r.name] = p;
        if (r.kind != "output") {
          std::string bytes = readText(gpu::dumpFile(base, "in", ranks, k, r.name));
          if (long(bytes.size()) != r.bytes)
            die(stem + ": input " + r.name + " has " + std::to_string(bytes.size()) + " bytes");
          check(cuMemcpyHtoD(p, bytes.data(), bytes.size()), "upload");
        }
      }
      const CUdeviceptr scratch = gpu::alloc(m.scratchBytes), epoch = gpu::alloc(m.epochWords * 4);
      check(cuMemsetD8(scratch, 0, m.scratchBytes ? m.scratchBytes : 1), "zero scratch");
      check(cuMemsetD8(epoch, 0, m.epochWords * 4), "zero epoch");
      epochs.push_back(epoch);
      scratches.push_back(scratch);
      values[k] = gpu::argumentValues(
          m, [&](const Region &r) { return buffers[k].at(r.name); }, scratch, epoch, peers.table);
      rankValues[k] = k;
    }
    for (int k = 0; k < ranks; ++k)
      params[k] = gpu::kernelParams(values[k], m, rankValues[k]);
    // A K1 is followed by a launch that ends the step: each rank's e moves on.
    auto advanceEpochs = [&] {
      for (CUdeviceptr epoch : epochs)
        gpu::advanceEpoch(epoch);
    };
    std::vector<std::map<std::string, std::string>> firstRun(ranks), firstScratch(ranks);
    bool deterministic = true, ranksAgree = true;
    for (int run = 0; run < 3; ++run) {
      // Outputs are poisoned, except byte records (a KV cache): a step writes
      // only its own records, and the simulator's untouched bytes are zero.
      for (int k = 0; k < ranks; ++k)
        for (const Region &r : m.arguments)
          if (r.kind == "output")
            gpu::poisonOutput(buffers[k][r.name], r);
      check(cuCtxSynchronize(), "poison");
      for (int k = 0; k < ranks; ++k)
        gpu::launchOnGrid(f, m, streams[k], params[k].data(), "launch");
      check(cuCtxSynchronize(), "run");
      if (!m.endsStep)
        advanceEpochs();
      for (int k = 0; k < ranks; ++k)
        for (const Region &r : m.arguments) {
          if (r.kind != "output")
            continue;
          const std::string got = gpu::download(buffers[k][r.name], r.bytes);
          if (run == 0)
            firstRun[k][r.name] = got;
          else
            deterministic &= got == firstRun[k][r.name];
        }
      // The scratch regions the simulator dumped: what the stages handed
      // each other, after the first run.
      if (run == 0)
        for (int k = 0; k < ranks; ++k)
          for (const Region &r : m.scratch)
            if (r.kind == "scratch" &&
                std::ifstream(gpu::dumpFile(base, "scratch", ranks, k, r.name)).good())
              firstScratch[k][r.name] = gpu::download(scratches[k] + r.offset, r.bytes);
    }
    // Outputs the simulator reduced (equal on every rank) must agree on the
    // GPU too; rank-local ones differ with each rank's own inputs.
    if (ranks > 1)
      for (int k = 1; k < ranks; ++k)
        for (auto &[name, bytes] : firstRun[k])
          if (readText(gpu::dumpFile(base, "out", ranks, k, name)) ==
              readText(gpu::dumpFile(base, "out", ranks, 0, name)))
            ranksAgree &= bytes == firstRun[0][name];
    // Byte records exact; values within the stage bounds. Prints a line.
    auto compareRegion = [&](const Region &r, const std::string &label, const std::string &got,
                             const std::string &want) {
      const gpu::RegionVerdict v = gpu::compareRegion(r.format, r.rows, got, want);
      allGood &= v.ok;
      if (v.ok && !v.identical)
        notIdentical.push_back(stem + " " + label);
      if (v.layerBound)
        onLayerBound.push_back(stem + " " + label);
      std::printf("%-40s %-14s %5zu/%-6zu %10.2e %10.6f %s\n", stem.c_str(), label.c_str(),
                  v.equalUnits, v.units, v.comparison.relativeError, v.comparison.cosine,
                  !v.ok ? "FAIL" : (v.layerBound ? "PASS (layer bound)" : "PASS"));
    };
    for (int k = 0; k < ranks; ++k) {
      const std::string suffix = ranks > 1 ? " r" + std::to_string(k) : "";
      for (const Region &r : m.arguments)
        if (r.kind == "output")
          compareRegion(r, r.name + suffix, firstRun[k][r.name],
                        readText(gpu::dumpFile(base, "out", ranks, k, r.name)));
      for (const Region &r : m.scratch)
        if (firstScratch[k].count(r.name))
          compareRegion(r, "(s) " + r.name + suffix, firstScratch[k][r.name],
                        readText(gpu::dumpFile(base, "scratch", ranks, k, r.name)));
    }
    if (ranks > 1) {
      std::printf("%-40s %-14s %s\n", stem.c_str(), "(ranks)",
                  ranksAgree ? "PASS: ranks bit-identical, run concurrently on one GPU"
                             : "FAIL: ranks differ");
      allGood &= ranksAgree;
    }
    std::printf("%-40s %-14s %s\n", stem.c_str(), "(3 runs)",
                deterministic ? "PASS: bit-identical on the GPU" : "FAIL: runs differ");
    allGood &= deterministic;
    // Time: 20 launches (all ranks at once), after the checks above.
    CUevent start, stop;
    check(cuEventCreate(&start, 0), "event");
    check(cuEventCreate(&stop, 0), "event");
    check(cuEventRecord(start, nullptr), "record");
    for (int run = 0; run < 20; ++run) {
      for (int k = 0; k < ranks; ++k)
        gpu::launchOnGrid(f, m, streams[k], params[k].data(), "launch");
      check(cuCtxSynchronize(), "timed run");
      if (!m.endsStep)
        advanceEpochs();
    }
    check(cuEventRecord(stop, nullptr), "record");
    check(cuEventSynchronize(stop), "sync");
    float ms = 0;
    check(cuEventElapsedTime(&ms, start, stop), "elapsed");
    std::printf("%-40s %-14s %.1f us a launch (%d ranks at once, warm, launch overhead included)\n",
                stem.c_str(), "(time)", 1000.0f * ms / 20, ranks);
  }
  std::printf("passing but not byte-identical to the simulator: %zu region(s)\n",
              notIdentical.size());
  for (const std::string &r : notIdentical)
    std::printf("  %s\n", r.c_str());
  std::printf("passing on the whole layer's bound (every row's cosine >= 0.999), not the stage's: "
              "%zu region(s)\n",
              onLayerBound.size());
  for (const std::string &r : onLayerBound)
    std::printf("  %s\n", r.c_str());
  std::printf("%s\n", allGood ? "ALL LAUNCH CHECKS PASSED" : "SOME LAUNCH CHECKS FAILED");
  return allGood ? 0 : 1;
}
