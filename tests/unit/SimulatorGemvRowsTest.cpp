// The simulator's gemv_rows on its own: a bf16 weight whose K (48) is a
// multiple of 16 but not of 32, so the last thread part's chunk is half a
// 32-wide block, against a double sum of the same bf16 operands; and a
// gemv_rows with a runtime token count, simulated and emitted.
#include "FusedLaunch.h"
#include "MemoryInputs.h"

#include "monodc/Emit/EmitPipeline.h"
#include "monodc/Simulator/Simulator.h"
#include "monodc/Transforms/Passes.h"
#include "monodc/dsl/Launch.h"
#include "monodc/formats/NumberFormats.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace monodc;
using namespace monodc::dsl;

namespace {

/// One task: y (f32 [1, rows]) = w (bf16 [rows, k]) . x (bf16 [1, k]) on
/// `arch`, through the fusion passes.
mlir::OwningOpRef<mlir::ModuleOp> bf16Gemv(mlir::MLIRContext &ctx, const std::string &arch,
                                           int64_t rows, int64_t k) {
  Launch l(ctx, "k", {arch, 4, 256, 1});
  Region x = l.input("x", bf16, {1, k});
  Region w = l.weight("w", bf16, {rows, k});
  Region y = l.output("y", f32, {1, rows});
  l.stage("gemv", 1, [&](Task &t) {
    t.store(y, t.index(0), 0, t.gemvRows(w, t.index(0), rows, x, t.index(0), 1));
  });
  auto module = l.finish();
  EXPECT_TRUE(static_cast<bool>(module)) << llvm::toString(module.takeError());
  if (!module)
    return {};
  EXPECT_TRUE(succeeded(mono::runFusionPipeline(**module)));
  return std::move(*module);
}

TEST(SimulatorGemvRows, UnscaledWeightWithKNotAMultipleOf32) {
  constexpr int64_t kRows = 16, kK = 48;
  mlir::MLIRContext ctx;
  auto module = bf16Gemv(ctx, "gfx950", kRows, kK);
  ASSERT_TRUE(module);
  auto launch = monodc::testing::launchOf(*module);
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

/// A bf16 GEMV of 16 rows, k 256, one token on `arch`, simulated: x . w
/// where x[8] w[8] = 1 and x[32] w[32] = x[36] w[36] = 2^-24, all else 0.
/// The 4 waves split the 8 steps of 32 k, so wave 0 sums steps 0 and 1.
float bf16MfmaResult(const std::string &arch) {
  constexpr int64_t kRows = 16, kK = 256;
  mlir::MLIRContext ctx;
  auto module = bf16Gemv(ctx, arch, kRows, kK);
  if (!module)
    return NAN;
  auto launch = monodc::testing::launchOf(*module);
  bool onMfma = false;
  launch.walk([&](mono::GemvRowsOp g) { onMfma = g.getLowering() == mono::GemvLowering::Bf16Mfma; });
  EXPECT_TRUE(onMfma) << arch;
  sim::LaunchMemory memory(launch);
  std::vector<float> xs(kK, 0.0f), ws(kRows * kK, 0.0f);
  xs[8] = 1.0f;
  xs[32] = xs[36] = std::ldexp(1.0f, -12);
  for (int64_t j = 0; j < kRows; ++j) {
    ws[j * kK + 8] = 1.0f;
    ws[j * kK + 32] = ws[j * kK + 36] = std::ldexp(1.0f, -12);
  }
  monodc::testing::setValues(memory, "x", xs);
  monodc::testing::setValues(memory, "w", ws);
  auto run = sim::simulate(launch, memory);
  EXPECT_TRUE(succeeded(run));
  return memory.values("y")[5];
}

// gfx950 adds a step's 32 products to the accumulator with one rounding:
// 1 + 2^-24 + 2^-24 = 1 + 2^-23. gfx942 runs the step as two 16x16x16
// instructions, k % 8 < 4 (k 32) first, then the rest (k 36), each rounded
// once: 1 + 2^-24 ties to 1, twice (gemv_mfma.h, DeviceBf16MfmaGfx942Test).
TEST(SimulatorGemvRows, Bf16MfmaStepsRoundAsTheTargetsInstructions) {
  EXPECT_EQ(bf16MfmaResult("gfx950"), 1.0f + std::ldexp(1.0f, -23));
  EXPECT_EQ(bf16MfmaResult("gfx942"), 1.0f);
}

/// An MX GEMV (e4m3 weights with 32x32 scales, one MXFP8 token) of 32 rows,
/// k 256, on `arch`, simulated: block 0's products sum to 1, blocks 1 and 2
/// to 2^-24 each (2^-9 x 2^-9 codes, weight scale 2^-6), the rest 0.
float mxGemvResult(const std::string &arch, mono::GemvLowering expected) {
  constexpr int64_t kRows = 32, kK = 256;
  mlir::MLIRContext ctx;
  Launch l(ctx, "k", {arch, 4, 256, 1});
  Region x = l.input("x", e4m3, {1, kK});
  Region xs = l.input("xs", e8m0, {1, kK / 32});
  Region w = l.weight("w", e4m3, {kRows, kK});
  Region ws = l.weight("ws", e8m0, {1, kK / 32});
  Region y = l.output("y", f32, {1, kRows});
  l.stage("gemv", 1, [&](Task &t) {
    t.store(y, t.index(0), 0, t.gemvRows(w, ws, t.index(0), kRows, x, xs, t.index(0), 1));
  });
  auto module = l.finish();
  EXPECT_TRUE(static_cast<bool>(module)) << (module ? "" : llvm::toString(module.takeError()));
  if (!module || failed(mono::runFusionPipeline(**module)))
    return NAN;
  auto launch = monodc::testing::launchOf(**module);
  bool lowered = false;
  launch.walk([&](mono::GemvRowsOp g) { lowered = g.getLowering() == expected; });
  EXPECT_TRUE(lowered) << arch;
  sim::LaunchMemory memory(launch);
  std::vector<uint8_t> codes(kK, 0), wcodes(kRows * kK, 0), xscales(kK / 32, 127),
      wscales(kK / 32, 127);
  codes[0] = 0x38;  // 1
  codes[32] = codes[64] = 0x01;  // 2^-9
  for (int64_t j = 0; j < kRows; ++j) {
    wcodes[j * kK] = 0x38;
    wcodes[j * kK + 32] = wcodes[j * kK + 64] = 0x01;
  }
  wscales[1] = wscales[2] = 121;  // 2^-6
  monodc::testing::setBytes(memory, "x", codes);
  monodc::testing::setBytes(memory, "xs", xscales);
  monodc::testing::setBytes(memory, "w", wcodes);
  monodc::testing::setBytes(memory, "ws", wscales);
  auto run = sim::simulate(launch, memory);
  EXPECT_TRUE(succeeded(run));
  return memory.values("y")[5];
}

// gfx950's scaled MFMA sums a step's four blocks and C exactly, rounded
// once: 1 + 2^-24 + 2^-24 = 1 + 2^-23. gfx942 adds each block's rounded sum
// to the accumulator (fp8_mfma; formats::fp8MfmaBlockStep, the order
// DeviceFp8MfmaGfx942Test checks the device block against): 1 + 2^-24
// ties to 1, twice.
TEST(SimulatorGemvRows, MxBlocksRoundAsTheTargetsInstructions) {
  EXPECT_EQ(mxGemvResult("gfx950", mono::GemvLowering::ScaledMfma), 1.0f + std::ldexp(1.0f, -23));
  EXPECT_EQ(mxGemvResult("gfx942", mono::GemvLowering::Fp8Mfma), 1.0f);
}

/// A launch whose one task multiplies the 4 tokens a first stage hands over
/// (e4m3 codes; their scales are an input) with 32 e4m3 weight rows, for a
/// token count read from the index input `count`; through the fusion passes
/// when `fuse` (emitHip runs them itself).
mlir::OwningOpRef<mlir::ModuleOp> countedGemv(mlir::MLIRContext &ctx, const std::string &arch,
                                              bool fuse = true) {
  Launch l(ctx, "k", {arch, 4, 256, 4});
  Region count = l.indexInput("count", {1, 1}, 5);
  Region xin = l.input("xin", e4m3, {4, 1024});
  Region xs = l.input("xs", e8m0, {4, 32});
  Region xq = l.scratch("xq", e4m3, {4, 1024});
  Region w = l.weight("w", e4m3, {32, 1024});
  Region ws = l.weight("ws", e8m0, {1, 32});
  Region y = l.output("y", f32, {4, 32});
  l.stage("copy", 4, [&](Task &t) {
    t.store(xq, t.id(), 0, t.loadRow(xin, t.id()).to(f32).to(e4m3));
  });
  l.stage("gemv", 1, [&](Task &t) {
    Index n = t.toIndex(t.load(count, t.index(0), 0, 1));
    Tile out = t.gemvRows(w, ws, t.index(0), 32, xq, xs, t.index(0), 4, n);
    t.storeRows(y, t.index(0), t.index(0), 4, out);
  });
  auto module = l.finish();
  EXPECT_TRUE(static_cast<bool>(module)) << (module ? "" : llvm::toString(module.takeError()));
  if (!module)
    return nullptr;
  if (fuse)
    EXPECT_TRUE(succeeded(mono::runFusionPipeline(**module)));
  return std::move(*module);
}

TEST(SimulatorGemvRows, ACountComputesItsTokensOnly) {
  mlir::MLIRContext ctx;
  auto module = countedGemv(ctx, "gfx950");
  ASSERT_TRUE(module);
  auto launch = monodc::testing::launchOf(*module);
  std::vector<uint8_t> x(4 * 1024), xs(4 * 32), w(32 * 1024), ws(32);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = uint8_t((i * 37) % 0x7E);  // finite e4m3 codes of both signs
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = uint8_t((i * 11 + 3) % 0x7E);
  for (size_t i = 0; i < xs.size(); ++i)
    xs[i] = uint8_t(120 + i % 5);
  for (size_t i = 0; i < ws.size(); ++i)
    ws[i] = uint8_t(122 + i % 3);
  auto run = [&](int count, bool poisonPast) {
    sim::LaunchMemory memory(launch);
    std::vector<uint8_t> codes = x;
    if (poisonPast)  // e4m3 NaN in every token row the count leaves out
      std::fill(codes.begin() + count * 1024, codes.end(), uint8_t(0x7F));
    monodc::testing::setBytes(memory, "xin", codes);
    monodc::testing::setBytes(memory, "xs", xs);
    monodc::testing::setBytes(memory, "w", w);
    monodc::testing::setBytes(memory, "ws", ws);
    EXPECT_FALSE(memory.setValues("count", {float(count)}));
    auto result = sim::simulate(launch, memory);
    EXPECT_TRUE(succeeded(result) && !result->deadlock);
    return memory.values("y");
  };
  const std::vector<float> all = run(4, false);
  for (int count : {0, 1, 3}) {
    const std::vector<float> got = run(count, true);
    for (int i = 0; i < 4 * 32; ++i)
      ASSERT_EQ(got[i], i / 32 < count ? all[i] : 0.0f) << "count " << count << " token " << i / 32;
  }
  EXPECT_NE(all[3 * 32], 0.0f);
}

TEST(SimulatorGemvRows, ASlotsTokensMayEndTheRegion) {
  // The union's routed.ug: the first token comes from data and a task of 4
  // tokens may start 2 rows before the region ends, as long as its count
  // keeps the rows it reads inside; a count that reaches past is refused.
  mlir::MLIRContext ctx;
  Launch l(ctx, "k", {"gfx950", 4, 256, 4});
  Region first = l.indexInput("first", {1, 1}, 4);
  Region count = l.indexInput("count", {1, 1}, 5);
  Region xq = l.input("xq", e4m3, {4, 1024});
  Region xs = l.input("xs", e8m0, {4, 32});
  Region w = l.weight("w", e4m3, {32, 1024});
  Region ws = l.weight("ws", e8m0, {1, 32});
  Region y = l.output("y", f32, {4, 32});
  l.stage("gemv", 1, [&](Task &t) {
    Index t0 = t.toIndex(t.load(first, t.index(0), 0, 1));
    Index n = t.toIndex(t.load(count, t.index(0), 0, 1));
    Tile out = t.gemvRows(w, ws, t.index(0), 32, xq, xs, t0, 4, n);
    t.storeRows(y, t.index(0), t.index(0), 4, out);
  });
  auto module = l.finish();
  ASSERT_TRUE(static_cast<bool>(module)) << llvm::toString(module.takeError());
  ASSERT_TRUE(succeeded(mono::runFusionPipeline(**module)));
  auto launch = monodc::testing::launchOf(**module);
  std::vector<uint8_t> x(4 * 1024), scales(4 * 32, uint8_t(121)), wb(32 * 1024), wsb(32, uint8_t(123));
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = uint8_t((i * 29 + 5) % 0x7E);
  for (size_t i = 0; i < wb.size(); ++i)
    wb[i] = uint8_t((i * 13 + 1) % 0x7E);
  auto run = [&](int t0, int n) {
    sim::LaunchMemory memory(launch);
    monodc::testing::setBytes(memory, "xq", x);
    monodc::testing::setBytes(memory, "xs", scales);
    monodc::testing::setBytes(memory, "w", wb);
    monodc::testing::setBytes(memory, "ws", wsb);
    EXPECT_FALSE(memory.setValues("first", {float(t0)}));
    EXPECT_FALSE(memory.setValues("count", {float(n)}));
    auto result = sim::simulate(launch, memory);
    return std::make_pair(succeeded(result) && !result->deadlock, memory.values("y"));
  };
  auto [allOk, all] = run(0, 4);
  ASSERT_TRUE(allOk);
  auto [tailOk, tail] = run(2, 2);
  ASSERT_TRUE(tailOk) << "a count inside the region was refused";
  for (int i = 0; i < 4 * 32; ++i)
    EXPECT_EQ(tail[i], i / 32 < 2 ? all[2 * 32 + i] : 0.0f) << "token " << i / 32;
  EXPECT_FALSE(run(2, 3).first) << "tokens [2, 5) of a 4-row region were read";
}

TEST(SimulatorGemvRows, ACountReachesTheDeviceCall) {
  // On sm_90 the gemv takes the tensor cores; its weights are loaded before
  // the poll for the copied tokens unless the count is 0, and the run gets
  // the count.
  mlir::MLIRContext ctx;
  auto module = countedGemv(ctx, "sm_90", /*fuse=*/false);
  ASSERT_TRUE(module);
  auto hip = emit::emitHip(*module);
  ASSERT_TRUE(succeeded(hip));
  const size_t at = hip->find(" > 0) w");
  ASSERT_NE(at, std::string::npos) << "no guarded prefetch";
  EXPECT_NE(hip->find(".prefetch(", at), std::string::npos);
  EXPECT_NE(hip->find("mono_gemv_mma_run<"), std::string::npos);
  EXPECT_NE(hip->find("mono_lds, (int)v"), std::string::npos) << "the run has no count";
}

} // namespace
