// Writes sample entries (synthetic gfx950 code objects: the default request's
// attention front, and a layer step's K1 and K2 at widths 2 and 6) into a
// cache directory, for the C ABI and Python tests of a runtime-only build.
#include "monodc/runtime/CodeObjectCache.h"

#include "support/TestSupport.h"

#include <cstdio>

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CACHE_DIR\n", argv[0]);
    return 2;
  }
  monodc::runtime::CodeObjectCache cache({argv[1], nullptr});
  cache.store(monodc::testing::sampleEntry(monodc::testing::sampleKey()));
  // A layer step's K1 and K2 at widths 2 and 6 (the Python package's layer steps).
  for (int64_t rows : {2, 6}) {
    cache.store(monodc::testing::sampleStepEntry(monodc::testing::sampleK1(rows)));
    cache.store(monodc::testing::sampleStepEntry(monodc::testing::sampleK2(rows)));
  }
  return cache.writesToDisk() ? 0 : 1;
}
