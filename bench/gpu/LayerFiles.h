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

/// A manifest file; throws, naming the file, when it cannot be read or
/// parsed. Regions sized at launch take cachePagesOverride()'s rows, so
/// every harness allocates, fills and passes that many; index inputs that
/// count their rows scale their bounds with them.
inline Manifest loadManifest(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw std::runtime_error("cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  auto manifest = Manifest::parse(text.str());
  if (!manifest)
    throw std::runtime_error(path + ": " + manifest.message());
  if (const int64_t pages = cachePagesOverride())
    for (Region &r : manifest->arguments)
      if (r.rowsAtLaunch && r.format == "byte") { // the KV caches
        for (monodc::runtime::IndexSpec &index : manifest->indexBounds)
          if (index.rowsOf == r.name)
            index.bound = index.bound / r.rows * pages;
        r.bytes = r.bytes / r.rows * pages;
        r.rows = pages;
      }
  return *manifest;
}

} // namespace gpu

#endif
