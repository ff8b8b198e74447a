// The in-process clang + lld backend: a gfx950 code object from HIP source,
// compiler errors with source locations, clear refusals.
#include "monodc/Emit/EmitPipeline.h"
#include "monodc/jit/ClangBackend.h"
#include "monodc/runtime/CodeObject.h"
#include "monodc/stages/Launches.h"

#include <gtest/gtest.h>

#include <algorithm>

using namespace monodc;

namespace {

TEST(ClangBackend, BuildsAGfx950CodeObjectForTheDsv41Front) {
  mlir::MLIRContext ctx;
  auto module = stages::buildLaunch(ctx, "attention_front", stages::dsv41Config(), {});
  ASSERT_TRUE(static_cast<bool>(module));
  auto hip = emit::emitHip(**module);
  ASSERT_TRUE(succeeded(hip));
  auto object = backends::compileHipToCodeObject(*hip, {});
  ASSERT_TRUE(static_cast<bool>(object)) << llvm::toString(object.takeError());
  ASSERT_GT(object->size(), 64u);
  EXPECT_EQ(std::string(object->data() + 1, 3), "ELF");
  auto info = runtime::readCodeObject(std::string_view(object->data(), object->size()));
  ASSERT_TRUE(info.ok()) << info.message();
  EXPECT_EQ(info->target.rfind("amdgcn-amd-amdhsa--gfx950", 0), 0u) << info->target;
  ASSERT_EQ(info->kernels.size(), 1u);
  EXPECT_EQ(info->kernels[0].name, "mono_attention_front");
  EXPECT_EQ(info->kernels[0].scratchBytes, 0);
  EXPECT_EQ(info->kernels[0].vgprSpills, 0);
  EXPECT_EQ(info->kernels[0].wavefrontSize, 64);
  EXPECT_GT(info->kernels[0].vgprs, 0);
  EXPECT_LE(info->kernels[0].vgprs, 512);
}

TEST(ClangBackend, TheUnfusedBaselineOfATpLaunchBuilds) {
  // One kernel per stage plus the step's end; the peer mailboxes between
  // ranks stay, so every kernel knows the step's tag.
  mlir::MLIRContext ctx;
  stages::BuildParams params;
  params.rows = 2;
  auto module = stages::buildLaunch(ctx, "k2", stages::tinyConfig(), params);
  ASSERT_TRUE(static_cast<bool>(module));
  ASSERT_TRUE(mlir::succeeded(mono::runFusionPipeline(**module)));
  auto launch = *(*module)->getOps<mono::LaunchOp>().begin();
  std::string hip;
  llvm::raw_string_ostream os(hip);
  ASSERT_TRUE(mlir::succeeded(emit::printUnfusedHip(launch, os)));
  auto object = backends::compileHipToCodeObject(hip, {});
  ASSERT_TRUE(static_cast<bool>(object)) << llvm::toString(object.takeError());
  auto info = runtime::readCodeObject(std::string_view(object->data(), object->size()));
  ASSERT_TRUE(info.ok()) << info.message();
  const size_t stages = std::distance(launch.getBodyBlock().getOps<mono::StageOp>().begin(),
                                      launch.getBodyBlock().getOps<mono::StageOp>().end());
  EXPECT_EQ(info->kernels.size(), stages + 1);
  for (const auto &kernel : info->kernels)
    EXPECT_EQ(kernel.scratchBytes, 0) << kernel.name;
}

TEST(ClangBackend, CompilerErrorsCarryTheSourceLocation) {
  backends::ClangCompileOptions options;
  options.sourceName = "broken.hip";
  auto object = backends::compileHipToCodeObject(
      "extern \"C\" __attribute__((global)) void k(float *p) {\n  p[0] = undefined_name;\n}\n",
      options);
  ASSERT_FALSE(static_cast<bool>(object));
  std::string message = llvm::toString(object.takeError());
  EXPECT_NE(message.find("broken.hip:2:10: error"), std::string::npos) << message;
  EXPECT_NE(message.find("undefined_name"), std::string::npos) << message;
}

TEST(ClangBackend, TheArgumentsAreWhatTheInProcessCompileApplies) {
  // -mllvm options would be silently dropped by CompilerInstance (they are
  // LLVM's process-wide flags), so a standalone clang -cc1 with these
  // arguments (JitBench) would build other code than the library.
  const std::vector<std::string> arguments = backends::clangCc1Arguments({}, true, "out.s");
  EXPECT_EQ(std::find(arguments.begin(), arguments.end(), "-mllvm"), arguments.end());
  EXPECT_NE(std::find(arguments.begin(), arguments.end(), "-ffp-contract=off"), arguments.end());
}

TEST(ClangBackend, RefusesAnArchItCannotBuild) {
  backends::ClangCompileOptions options;
  options.arch = "sm_90";
  auto object = backends::compileHipToCodeObject("", options);
  ASSERT_FALSE(static_cast<bool>(object));
  EXPECT_NE(llvm::toString(object.takeError()).find("cannot build for arch 'sm_90'"),
            std::string::npos);
}

TEST(ClangBackend, AssemblyNamesTheTarget) {
  auto assembly = backends::compileHipToAssembly(
      "extern \"C\" __attribute__((global)) void k(float *p) { p[0] = 1.0f; }\n", {});
  ASSERT_TRUE(static_cast<bool>(assembly)) << llvm::toString(assembly.takeError());
  EXPECT_NE(assembly->find("amdgcn-amd-amdhsa--gfx950"), std::string::npos);
}

TEST(Inspect, RejectsBytesThatAreNotACodeObject) {
  auto info = runtime::readCodeObject("not an elf file at all");
  ASSERT_FALSE(info.ok());
  EXPECT_NE(info.message().find("not a 64-bit"), std::string::npos);
}

} // namespace
