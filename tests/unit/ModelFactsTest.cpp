// The stage library's model configs and the runtime's model facts (which a
// runtime-only serving process reads without the compiler) say the same
// thing: the most positions the kernels serve.
#include "monodc/runtime/Eligibility.h"
#include "monodc/runtime/LayerMap.h"
#include "monodc/stages/ModelConfig.h"

#include <gtest/gtest.h>

namespace {

TEST(ModelFacts, TheRuntimeServesThePositionsOfEachConfig) {
  for (const char *name : {"dsv41", "tiny", "moe16"}) {
    SCOPED_TRACE(name);
    auto config = monodc::stages::configByName(name);
    ASSERT_TRUE(static_cast<bool>(config)) << llvm::toString(config.takeError());
    auto limit = monodc::runtime::positionLimit(name);
    ASSERT_TRUE(limit.ok()) << limit.message();
    // The build's tables are only nominal sizes: the engine gives its own.
    EXPECT_LE(config->ropePositions, *limit);
    EXPECT_EQ(*limit, int64_t(1) << 24);
  }
  EXPECT_FALSE(monodc::runtime::positionLimit("llama").ok());
}

} // namespace
