// The HIP printer: self-contained output, a read-only printer, refusal of
// launches that skipped the prepare pass, where block reductions put their
// shared memory.
#include "monodc/Dialect/Mono/MonoDialect.h"
#include "monodc/Emit/EmitPipeline.h"
#include "monodc/Emit/HipEmitter.h"
#include "monodc/Transforms/Passes.h"
#include "monodc/stages/Launches.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

using namespace monodc;

namespace {

mlir::OwningOpRef<mlir::ModuleOp> tinyFront(mlir::MLIRContext &ctx, int64_t rows = 6,
                                            const std::string &arch = "gfx950") {
  stages::BuildParams params;
  params.rows = rows;
  params.arch = arch;
  auto module = stages::buildLaunch(ctx, "attention_front", stages::tinyConfig(), params);
  EXPECT_TRUE(static_cast<bool>(module));
  return module ? std::move(*module) : nullptr;
}

std::string print(mlir::Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  op->print(os);
  return text;
}

/// The diagnostic with which the HIP printer refuses the module's launch
/// (a failure to refuse fails the calling test).
std::string printRefusal(mlir::MLIRContext &ctx, mlir::ModuleOp module) {
  std::string message;
  mlir::ScopedDiagnosticHandler handler(&ctx, [&](mlir::Diagnostic &d) {
    message = d.str();
    return mlir::success();
  });
  std::string hip;
  llvm::raw_string_ostream os(hip);
  auto launch = *module.getOps<mono::LaunchOp>().begin();
  EXPECT_TRUE(failed(emit::printHip(launch, os)));
  return message;
}

size_t countOf(const std::string &text, const std::string &what) {
  size_t n = 0;
  for (size_t p = 0; (p = text.find(what, p)) != std::string::npos; ++p)
    ++n;
  return n;
}

/// The text of the function that `signature` opens, to its closing brace.
std::string functionText(const std::string &text, const std::string &signature) {
  size_t start = text.find(signature);
  if (start == std::string::npos)
    return {};
  return text.substr(start, text.find("\n}\n", start) - start);
}

TEST(Emitter, SourceIsSelfContained) {
  mlir::MLIRContext ctx;
  auto module = tinyFront(ctx);
  auto hip = emit::emitHip(*module);
  ASSERT_TRUE(succeeded(hip));
  EXPECT_EQ(hip->find("#include"), std::string::npos);
  EXPECT_NE(hip->find("MONO_KERNEL void mono_attention_front("), std::string::npos);
  EXPECT_NE(hip->find("#if defined(__AMDGCN__)"), std::string::npos);
  EXPECT_NE(hip->find("#if defined(__CUDA_ARCH__)"), std::string::npos);
  // One loop per stage; norm, wqkv, the kv norm and the key RoPE publish;
  // wqkv, both norms, the key RoPE and the KV insert wait.
  auto count = [&](const std::string &what) { return countOf(*hip, what); };
  EXPECT_EQ(count("task += MONO_GRID"), 6u);
  EXPECT_EQ(count("    mono_publish_flag("), 4u);
  EXPECT_EQ(count("    mono_wait_flags("), 5u);
  EXPECT_EQ(count("  mono_epoch_end(mono_epoch, mono_e, 1);"), 1u);
}

TEST(Emitter, PrinterDoesNotChangeTheIR) {
  mlir::MLIRContext ctx;
  auto module = tinyFront(ctx);
  ASSERT_TRUE(succeeded(mono::runFusionPipeline(*module)));
  std::string before = print(*module);
  std::string hip;
  llvm::raw_string_ostream os(hip);
  auto launch = *module->getOps<mono::LaunchOp>().begin();
  ASSERT_TRUE(succeeded(emit::printHip(launch, os)));
  EXPECT_EQ(print(*module), before);
  EXPECT_FALSE(hip.empty());
}

TEST(Emitter, RefusesALaunchThatSkippedPrepare) {
  mlir::MLIRContext ctx;
  auto module = tinyFront(ctx);
  const std::string message = printRefusal(ctx, *module);
  EXPECT_NE(message.find("run mono-prepare-emission first"), std::string::npos) << message;
}

TEST(Emitter, RefusesASharedMemoryUserWithoutItsPlannedArea) {
  // The printer takes every area from mono-plan-shared: a block reduction
  // (a library call in one area) without its mono.area is refused, not
  // printed at area 0 where a rearrangement's reads may be in flight.
  mlir::MLIRContext ctx;
  auto module = tinyFront(ctx);
  ASSERT_TRUE(succeeded(mono::runFusionPipeline(*module)));
  int stripped = 0;
  module->walk([&](mono::ReduceOp r) {
    if (r->removeAttr(mono::MonoDialect::AreaAttrHelper::getNameStr()))
      ++stripped;
  });
  ASSERT_GT(stripped, 0);
  const std::string message = printRefusal(ctx, *module);
  EXPECT_NE(message.find("has no mono.area; run mono-plan-shared first"), std::string::npos)
      << message;
}

TEST(Emitter, RefusesAnFmaChainsGemvWithoutItsChunkTokens) {
  // The tokens an fma-chains gemv_rows stages a pass are mono-prepare-
  // emission's choice (mono.chunk_tokens), which also sized its shared
  // memory; the printer does not choose them again. gfx90a has no matrix
  // form of the MX GEMVs: they run on fma chains.
  mlir::MLIRContext ctx;
  auto module = tinyFront(ctx, 6, "gfx90a");
  ASSERT_TRUE(succeeded(mono::runFusionPipeline(*module)));
  int stripped = 0;
  module->walk([&](mono::GemvRowsOp g) {
    if (g->removeAttr(mono::MonoDialect::ChunkTokensAttrHelper::getNameStr()))
      ++stripped;
  });
  ASSERT_GT(stripped, 0);
  const std::string message = printRefusal(ctx, *module);
  EXPECT_NE(message.find("has no mono.chunk_tokens; run mono-prepare-emission first"),
            std::string::npos)
      << message;
}

TEST(Emitter, WidthsChangeTheTaskTables) {
  mlir::MLIRContext ctx;
  auto r1 = emit::emitHip(*tinyFront(ctx, 1));
  auto r48 = emit::emitHip(*tinyFront(ctx, 48));
  ASSERT_TRUE(succeeded(r1) && succeeded(r48));
  // The norms have a task per token; wqkv (scaledGemvRowsPerTask) a task per
  // 32-row weight slice (tiny: 384 / 32 = 12 tasks, fewer than gfx950's 256
  // CTAs) of all of the step's tokens (48 rows: 12 tasks of 48 tokens), on
  // gfx950's scaled MFMA.
  EXPECT_NE(r1->find("task < 1;"), std::string::npos);
  EXPECT_NE(r48->find("task < 48;"), std::string::npos);
  EXPECT_NE(r1->find("task < 12;"), std::string::npos);
  EXPECT_NE(r1->find("mono_gemv_mfma_run<1, 32, 512, 1, 0>"), std::string::npos);
  EXPECT_NE(r48->find("task < 12;"), std::string::npos);
  EXPECT_NE(r48->find("mono_gemv_mfma_run<6, 32, 512, 48, 0>"), std::string::npos);
  EXPECT_EQ(r48->find("mono_gemv_mfma_run<1, 16, 512, 6,"), std::string::npos);
}

TEST(Emitter, CudaStagesAreFunctionsOfTheirOwn) {
  mlir::MLIRContext ctx;
  auto cuda = emit::emitHip(*tinyFront(ctx, 6, "sm_90"));
  auto amd = emit::emitHip(*tinyFront(ctx, 6, "gfx950"));
  auto cudaModule = tinyFront(ctx, 6, "sm_90");
  ASSERT_TRUE(succeeded(mono::runFusionPipeline(*cudaModule)));
  std::string cudaUnfused;
  llvm::raw_string_ostream unfusedOs(cudaUnfused);
  ASSERT_TRUE(succeeded(
      emit::printUnfusedHip(*cudaModule->getOps<mono::LaunchOp>().begin(), unfusedOs)));
  ASSERT_TRUE(succeeded(cuda) && succeeded(amd));
  // sm_90: each of the six stages is a function the kernel calls once, in
  // order; its loop is not in the kernel's body.
  EXPECT_EQ(countOf(*cuda, "MONO_STAGE void mono_attention_front_stage"), 6u);
  std::string kernel = functionText(*cuda, "MONO_KERNEL void mono_attention_front(");
  ASSERT_FALSE(kernel.empty());
  EXPECT_EQ(kernel.find("task += MONO_GRID"), std::string::npos);
  size_t previous = 0;
  for (int i = 0; i < 6; ++i) {
    size_t call = kernel.find("  mono_attention_front_stage" + std::to_string(i) + "(");
    ASSERT_NE(call, std::string::npos) << "stage " << i;
    EXPECT_GT(call, previous);
    previous = call;
  }
  // A stage function takes the argument regions it uses and no others: the
  // seam norm reads no wqkv weights, wqkv's stage does.
  std::string norm = functionText(*cuda, "MONO_STAGE void mono_attention_front_stage0(");
  std::string wqkv = functionText(*cuda, "MONO_STAGE void mono_attention_front_stage1(");
  ASSERT_FALSE(norm.empty() || wqkv.empty());
  EXPECT_EQ(norm.substr(0, norm.find('{')).find("r_wqkv"), std::string::npos);
  EXPECT_NE(wqkv.substr(0, wqkv.find('{')).find("r_wqkv"), std::string::npos);
  // Shared memory is declared once, at file scope, for every stage.
  EXPECT_EQ(countOf(*cuda, "\nMONO_SHARED float mono_lds[") +
                countOf(*cuda, "\nMONO_DYNAMIC_LDS(mono_lds);"),
            1u);
  // gfx950 (a call needs scratch there) and the unfused baseline keep the
  // stages in their kernels' bodies.
  EXPECT_EQ(countOf(*amd, "MONO_STAGE void"), 0u);
  EXPECT_EQ(countOf(*amd, "task += MONO_GRID"), 6u);
  EXPECT_EQ(countOf(cudaUnfused, "MONO_STAGE void"), 0u);
}

/// A one-stage launch of `body` (ops on the task index %t) for `arch`, as
/// HIP: the stage's text alone.
std::string emitStage(mlir::MLIRContext &ctx, const std::string &body,
                      const std::string &arch = "gfx950") {
  ctx.loadDialect<mono::MonoDialect, mlir::arith::ArithDialect>();
  const std::string text =
      "mono.launch @l attributes {arch = \"" + arch + "\", grid = 4 : i64, block = 256 : i64, "
      "rows = 1 : i64} {\n  mono.stage @s tasks 1 {\n  ^bb0(%t: index):\n" +
      body + "  }\n}\n";
  auto module = mlir::parseSourceString<mlir::ModuleOp>(text, &ctx);
  EXPECT_TRUE(static_cast<bool>(module)) << text;
  if (!module)
    return {};
  auto hip = emit::emitHip(*module);
  EXPECT_TRUE(succeeded(hip));
  return succeeded(hip) ? hip->substr(hip->find("// stage 0: s")) : std::string();
}

std::string sliceOf(const std::string &result, const std::string &tile, int offset,
                    int size = 128) {
  const std::string type = "!mono.tile<" + std::to_string(size) + ", f32>";
  return "    %" + result + " = mono.slice %" + tile + "[" + std::to_string(offset) + "] : " + type +
         " -> !mono.tile<16, f32>\n";
}

// A block reduction takes the least recently used area of shared memory that
// nobody has read since the last barrier, with no barrier first, and ends
// with one: the areas it did not use keep their tiles, read again with no
// barrier. Where every area has reads pending, it waits for them and takes
// the least recently read.
TEST(Emitter, BlockReductionTakesAFreeArea) {
  // (128-value tiles: more than a wave's lanes, so the slices go through
  // shared memory.)
  const std::string tiles = "    %a = mono.constant 1.0 : !mono.tile<128, f32>\n"
                            "    %b = mono.constant 2.0 : !mono.tile<128, f32>\n"
                            "    %c = mono.constant 3.0 : !mono.tile<128, f32>\n";
  const std::string reduce =
      "    %r = mono.reduce sum %a : !mono.tile<128, f32> -> !mono.tile<1, f32>\n";
  mlir::MLIRContext ctx;
  // a in area 0, b in area 1 (a's reads done at b's barrier); the reduction
  // in area 2; a read again from area 0.
  const std::string free = emitStage(
      ctx, tiles + sliceOf("a1", "a", 1) + sliceOf("b1", "b", 2) + reduce + sliceOf("a2", "a", 4));
  const size_t at = free.find("= mono_block_reduce<1, 128, 0>(");
  ASSERT_NE(at, std::string::npos) << free;
  EXPECT_NE(free.find("mono_lds + 2048);", at), std::string::npos) << free;
  EXPECT_EQ(countOf(free.substr(0, at), "mono_block_sync();"), 2u) << free;
  EXPECT_EQ(countOf(free.substr(at), "mono_block_sync();"), 1u) << "the task's end: " << free;
  EXPECT_NE(free.find("= mono_lds[4 + i * 1];", at), std::string::npos) << free;
  EXPECT_EQ(countOf(free, "if (i < 128) mono_lds["), 2u) << "a written once: " << free;

  // a, b and c in areas 0-2, then a and b read again with no barrier: every
  // area has reads pending, c's (area 2) the oldest.
  const std::string full =
      emitStage(ctx, tiles + sliceOf("a1", "a", 1) + sliceOf("b1", "b", 2) +
                         sliceOf("c1", "c", 3) + sliceOf("a2", "a", 4) + sliceOf("b2", "b", 5) +
                         reduce);
  EXPECT_NE(full.find("    mono_block_sync();  // every area has been read\n"
                      "    float t8[1];\n    t8[0] = mono_block_reduce<1, 128, 0>(t0, mono_lds + 2048);"),
            std::string::npos)
      << full;
}

// A rearrangement whose tile and result fit warp 0's lanes reads by
// shuffles, with no shared memory: 48 values fit gfx950's 64-lane wave, not
// sm_90's 32-lane warp. A one-value result is every thread's, so it still
// goes through shared memory.
TEST(Emitter, SmallRearrangementsInWarp0AreShuffles) {
  const std::string body = "    %a = mono.constant 1.0 : !mono.tile<48, f32>\n" +
                           sliceOf("a1", "a", 3, 48) +
                           "    %one = mono.slice %a[5] : !mono.tile<48, f32> -> "
                           "!mono.tile<1, f32>\n";
  mlir::MLIRContext ctx;
  const std::string amd = emitStage(ctx, body, "gfx950"), cuda = emitStage(ctx, body, "sm_90");
  EXPECT_NE(amd.find("t1[s] = mono_shfl_idx_f32(t0[0], 3 + i * 1);"), std::string::npos) << amd;
  EXPECT_EQ(cuda.find("mono_shfl_idx_f32"), std::string::npos) << cuda;
  EXPECT_NE(cuda.find("if (i < 16) t1[s] = mono_lds[3 + i * 1];"), std::string::npos) << cuda;
  for (const std::string &text : {amd, cuda})
    EXPECT_NE(text.find("{ const int i = 0; t2[0] = mono_lds[5 + i * 1]; }"), std::string::npos)
        << text;
}

} // namespace
