// The host side of the GPU layer check on its own, where there is no GPU:
// per width, the random weights and step at the dims of the emitted K1 and
// K2, the reference layer and the reference with the routed scaling off (with
// their times), the routed experts' upload images, and the comparison itself
// checked both ways (the reference passes against itself and the check
// rejects it against the one with the routed scaling off).
//
//   layer_reference DIR CONFIG TP WIDTH...
#include "LayerCase.h"

#include "monodc/reference/LaunchInputs.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>

int main(int argc, char **argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: layer_reference DIR CONFIG TP WIDTH...\n");
    return 2;
  }
  const std::string dir = argv[1], config = argv[2];
  const int tp = std::atoi(argv[3]);
  bool good = true;
  try {
    for (int a = 4; a < argc; ++a) {
      const int rows = std::atoi(argv[a]);
      const gpu::Manifest k1 =
          gpu::loadManifest(gpu::layerStem(dir, "k1", config, rows, tp) + ".manifest");
      const gpu::Manifest k2 =
          gpu::loadManifest(gpu::layerStem(dir, "k2", config, rows, tp) + ".manifest");
      const gpu::LayerCase c = gpu::makeLayerCase(k1, k2, rows, /*seed=*/1u);
      // What the GPU harness uploads of the routed experts: the selected
      // experts' slices on every rank.
      const auto start = std::chrono::steady_clock::now();
      size_t bytes = 0;
      for (int r = 0; r < tp; ++r)
        for (int e : gpu::ref::selectedExperts(c.want.routing))
          for (const auto &slice : gpu::ref::expertInputs(c.experts(r, e), e).slices)
            bytes += slice.bytes.size();
      std::printf("rows %d: routed expert images %.1f s (%.2f GB)\n", rows,
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
                  double(bytes) / 1e9);
      const gpu::RegionOutputs itself = gpu::referenceRegions(c.want);
      const gpu::LayerVerdict same = gpu::checkLayer(c.dims, c.weights, itself, c.want);
      const gpu::LayerVerdict off =
          gpu::checkLayer(gpu::offDims(c.dims), c.weights, itself, c.wantOff);
      gpu::printVerdict(off, rows, "the reference against the one with the routed scaling 3% high");
      std::printf("rows %d: the reference against itself %s; against the routed scaling off %s\n",
                  rows, same.pass() ? "passes" : "FAILS",
                  off.pass() ? "PASSES (bad)" : "fails (good)");
      good &= same.pass() && !off.pass();
    }
  } catch (const std::exception &e) {
    std::fprintf(stderr, "layer_reference: error: %s\n", e.what());
    return 1;
  }
  return good ? 0 : 1;
}
