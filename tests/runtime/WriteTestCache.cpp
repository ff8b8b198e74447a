// Writes one sample entry (a synthetic gfx950 code object for the default
// request) into a cache directory, for the C ABI test of a runtime-only build.
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
  return cache.writesToDisk() ? 0 : 1;
}
