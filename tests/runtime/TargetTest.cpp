// The target description: every arch fact in one table, looked up by name.
#include "monodc/runtime/Target.h"

#include <gtest/gtest.h>

#include <set>

using namespace monodc::runtime;

TEST(Target, EveryTargetIsComplete) {
  std::set<std::string_view> names;
  for (const Target &t : targets()) {
    SCOPED_TRACE(std::string(t.name));
    EXPECT_TRUE(names.insert(t.name).second) << "named twice";
    EXPECT_FALSE(t.isaFamily.empty());
    EXPECT_FALSE(t.part.empty());
    EXPECT_EQ(t.waveSize, t.isNvidia() ? 32 : 64);
    EXPECT_GT(t.defaultGrid, 0);
    EXPECT_GE(t.sharedBytesPerBlock, 64 * 1024);
    EXPECT_FALSE(t.matrix.empty());
    for (const MatrixInstruction &i : t.matrix) {
      EXPECT_GT(i.m * i.n * i.k, 0) << i.mnemonic;
      EXPECT_TRUE(i.scaleBlock == 0 || i.k % i.scaleBlock == 0) << i.mnemonic;
    }
  }
  EXPECT_EQ(targets().front().name, kDefaultTarget);
}

TEST(Target, TheProductHasScaledMfmaAndTheOthersDoNot) {
  const Target *gfx950 = findTarget("gfx950");
  ASSERT_NE(gfx950, nullptr);
  EXPECT_EQ(gfx950->isaFamily, "CDNA4");
  EXPECT_EQ(gfx950->defaultGrid, 256);
  EXPECT_EQ(gfx950->sharedBytesPerBlock, 160 * 1024);
  const MatrixInstruction *scaled =
      gfx950->findMatrix(16, 16, 128, MatrixOperand::F8F6F4, MatrixOperand::F8F6F4, true);
  ASSERT_NE(scaled, nullptr);
  EXPECT_EQ(scaled->mnemonic, "v_mfma_scale_f32_16x16x128_f8f6f4");
  EXPECT_EQ(scaled->scaleBlock, 32);
  EXPECT_TRUE(gfx950->hasScaledMatrix());
  EXPECT_TRUE(gfx950->ocpFp8);
  // gfx942: FNUZ fp8 and no block scales in hardware.
  const Target *gfx942 = findTarget("gfx942");
  ASSERT_NE(gfx942, nullptr);
  EXPECT_FALSE(gfx942->hasScaledMatrix());
  EXPECT_FALSE(gfx942->ocpFp8);
  EXPECT_EQ(gfx942->findMatrix(16, 16, 32, MatrixOperand::E4m3, MatrixOperand::E4m3), nullptr);
  EXPECT_NE(gfx942->findMatrix(16, 16, 32, MatrixOperand::E4m3Fnuz, MatrixOperand::E4m3Fnuz),
            nullptr);
}

// The bf16 step of the device library's MFMA forms: gfx950's 16x16x32,
// gfx942's 16x16x16 (two a step), none on gfx90a or sm_90.
TEST(Target, Bf16MfmaStepIsTheWidest16x16Form) {
  ASSERT_NE(findTarget("gfx950")->bf16MfmaStep(), nullptr);
  EXPECT_EQ(findTarget("gfx950")->bf16MfmaStep()->mnemonic, "v_mfma_f32_16x16x32_bf16");
  ASSERT_NE(findTarget("gfx942")->bf16MfmaStep(), nullptr);
  EXPECT_EQ(findTarget("gfx942")->bf16MfmaStep()->mnemonic, "v_mfma_f32_16x16x16_bf16");
  EXPECT_EQ(findTarget("gfx942")->bf16MfmaStep()->k, 16);
  EXPECT_EQ(findTarget("gfx90a")->bf16MfmaStep(), nullptr);
  EXPECT_EQ(findTarget("sm_90")->bf16MfmaStep(), nullptr);
}

TEST(Target, TheValidationTargetIsCudasWarpMma) {
  const Target *sm90 = findTarget(kValidationTarget);
  ASSERT_NE(sm90, nullptr);
  EXPECT_TRUE(sm90->isNvidia());
  EXPECT_TRUE(sm90->asyncCopy);
  EXPECT_EQ(sm90->staticSharedLimit, 48 * 1024);
  EXPECT_NE(sm90->findMatrix(16, 8, 16, MatrixOperand::F16, MatrixOperand::F16), nullptr);
  EXPECT_EQ(sm90->findMatrix(16, 8, 16, MatrixOperand::F16, MatrixOperand::F16, true), nullptr);
  EXPECT_FALSE(sm90->hasScaledMatrix());
}

TEST(Target, UnknownNamesAreNotFoundAndListsNameEveryTarget) {
  EXPECT_EQ(findTarget("gfx1100"), nullptr);
  EXPECT_EQ(findTarget(""), nullptr);
  EXPECT_EQ(findTarget("GFX950"), nullptr);
  EXPECT_EQ(targetNames(), "gfx950, gfx942, gfx90a, sm_90");
  EXPECT_EQ(targetNames(TargetVendor::Amd), "gfx950, gfx942, gfx90a");
  EXPECT_EQ(targetNames(TargetVendor::Nvidia), "sm_90");
}
