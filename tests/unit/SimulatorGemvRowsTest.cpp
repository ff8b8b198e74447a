// The simulator's gemv_rows on its own: a bf16 weight whose K (48) is a
// multiple of 16 but not of 32, so the last thread part's chunk is half a
// 32-wide block, against a double sum of the same bf16 operands.
#include "FusedLaunch.h"
#include "MemoryInputs.h"

#include "monodc/Simulator/Simulator.h"
#include "monodc/Transforms/Passes.h"
#include "monodc/dsl/Launch.h"
#include "monodc/formats/NumberFormats.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace monodc;
using namespace monodc::dsl;

namespace {

TEST(SimulatorGemvRows, UnscaledWeightWithKNotAMultipleOf32) {
  constexpr int64_t kRows = 16, kK = 48;
  mlir::MLIRContext ctx;
  Launch l(ctx, "k", {"gfx950", 4, 256, 1});
  Region x = l.input("x", bf16, {1, kK});
  Region w = l.weight("w", bf16, {kRows, kK});
  Region y = l.output("y", f32, {1, kRows});
  l.stage("gemv", 1, [&](Task &t) {
    t.store(y, t.index(0), 0, t.gemvRows(w, t.index(0), kRows, x, t.index(0), 1));
  });
  auto module = l.finish();
  ASSERT_TRUE(static_cast<bool>(module)) << llvm::toString(module.takeError());
  ASSERT_TRUE(succeeded(mono::runFusionPipeline(**module)));
  auto launch = monodc::testing::launchOf(**module);
  sim::LaunchMemory memory(launch);
  std::vector<float> xs(kK), ws(kRows * kK);
  for (int64_t i = 0; i < kK; ++i)
    xs[i] = formats::roundToBf16(0.25f * float(i % 7) - 0.5f);
  for (int64_t i = 0; i < kRows * kK; ++i)
    ws[i] = formats::roundToBf16(0.125f * float(i % 11) - 0.625f);
  monodc::testing::setValues(memory, "x", xs);
  monodc::testing::setValues(memory, "w", ws);
  auto run = sim::simulate(launch, memory);
  ASSERT_TRUE(succeeded(run));
  ASSERT_FALSE(run->deadlock) << run->describe();
  const std::vector<float> got = memory.values("y");
  ASSERT_EQ(got.size(), size_t(kRows));
  for (int64_t j = 0; j < kRows; ++j) {
    double want = 0.0;
    for (int64_t i = 0; i < kK; ++i)
      want += double(xs[i]) * double(ws[j * kK + i]);
    // Products of these operands and their partial sums are exact in f32.
    EXPECT_EQ(double(got[j]), want) << "row " << j;
  }
}

} // namespace
