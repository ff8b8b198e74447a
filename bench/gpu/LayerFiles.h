// The files `emit.sh` writes for the GPU harnesses and reading their
// manifests, without CUDA (the host-only layer reference uses them too).
#ifndef MONODC_BENCH_GPU_LAYERFILES_H
#define MONODC_BENCH_GPU_LAYERFILES_H

#include "monodc/runtime/LaunchInterface.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace gpu {

/// The kernel manifest monodc wrote beside a source, read by the runtime
/// library's own parser.
using Manifest = monodc::runtime::LaunchInterface;
using Region = monodc::runtime::RegionSpec;

/// The CTAs of each rank in `emit.sh layer` and `emit.sh stress`: the TP
/// ranks share the 132 SMs of one GPU.
inline int layerGrid(int tp) { return 132 / tp; }

/// The compress ratio that `monodc build` leaves out of file names
/// (docs/cli.md: a launch that reads compressed keys built for another
/// ratio r has `.c<r>` before the grid).
inline constexpr int kDefaultRatio = 2;

/// DIR/LAUNCH.CONFIG.sm_90.r<ROWS>.tp<TP>[.c<RATIO>].grid<132/TP>, as
/// `monodc build` names the files of `emit.sh layer`, `layers` and `stress`
/// (add .hip, .unfused.hip, .prof.hip or .manifest). `ratio`: the one K2 is
/// built for; the other launches are one build at every ratio.
inline std::string layerStem(const std::string &dir, const std::string &launch,
                             const std::string &config, int rows, int tp,
                             int ratio = kDefaultRatio) {
  const std::string ratioTag = ratio == kDefaultRatio ? "" : ".c" + std::to_string(ratio);
  return dir + "/" + launch + "." + config + ".sm_90.r" + std::to_string(rows) + ".tp" +
         std::to_string(tp) + ratioTag + ".grid" + std::to_string(layerGrid(tp));
}

/// The pages the harnesses give the KV caches (regions sized at launch):
/// $LAYER_CACHE_PAGES where set, else the manifest's nominal count.
inline int64_t cachePagesOverride() {
  const char *pages = std::getenv("LAYER_CACHE_PAGES");
  if (!pages || !*pages)
    return 0;
  const long long n = std::atoll(pages);
  if (n < 1 || n > (1 << 19))
    throw std::runtime_error(std::string("LAYER_CACHE_PAGES=") + pages +
                             ": want 1 .. 524288 pages (slots stay below 2^24)");
  return n;
}

/// The positions the harnesses serve (the RoPE table's rows, the block
/// tables' pages a row: ceil(positions / 32)): $LAYER_POSITIONS where set,
/// else the manifests' nominal count.
inline int64_t positionsOverride() {
  const char *positions = std::getenv("LAYER_POSITIONS");
  if (!positions || !*positions)
    return 0;
  const long long n = std::atoll(positions);
  if (n < 1 || n > (1 << 24))
    throw std::runtime_error(std::string("LAYER_POSITIONS=") + positions +
                             ": want 1 .. 16777216 positions (they stay exact in f32)");
  return n;
}

/// A manifest file; throws, naming the file, when it cannot be read or
/// parsed. The KV caches take cachePagesOverride()'s rows, the RoPE table
/// positionsOverride()'s and the block tables (regions whose columns are
/// given at launch) its pages a row, so every harness allocates, fills and
/// passes those; index inputs that count their rows scale their bounds
/// with them.
inline Manifest loadManifest(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw std::runtime_error("cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  auto manifest = Manifest::parse(text.str());
  if (!manifest)
    throw std::runtime_error(path + ": " + manifest.message());
  auto resize = [&](Region &r, int64_t rows) {
    for (monodc::runtime::IndexSpec &index : manifest->indexBounds)
      if (index.rowsOf == r.name)
        index.bound = index.bound / r.rows * rows;
    r.bytes = r.bytes / r.rows * rows;
    r.rows = rows;
  };
  const int64_t pages = cachePagesOverride(), positions = positionsOverride();
  for (Region &r : manifest->arguments) {
    if (pages && r.rowsAtLaunch && r.format == "byte") // the KV caches
      resize(r, pages);
    if (positions && r.name == "cos_sin")
      resize(r, positions);
    if (positions && r.colsAtLaunch) { // the block tables
      const int64_t cols = (positions + 31) / 32;
      r.bytes = r.bytes / r.cols * cols;
      r.cols = cols;
    }
  }
  return *manifest;
}

} // namespace gpu

#endif
