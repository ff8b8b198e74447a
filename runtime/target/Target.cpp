//===- Target.cpp - the architectures monodc builds for -------------------===//
// Facts from AMD's CDNA3/CDNA4 ISA references and LLVM's AMDGPU instruction
// definitions (the MFMA forms each processor accepts), and NVIDIA's PTX ISA.
#include "monodc/runtime/Target.h"

namespace monodc::runtime {
namespace {

using enum MatrixOperand;

// gfx950 (CDNA4): scaled MFMA over fp8/fp6/fp4 with E8M0 scales per 32 K
// values, the unscaled f8f6f4 forms, bf16 and OCP fp8.
constexpr MatrixInstruction kGfx950Matrix[] = {
    {"v_mfma_scale_f32_16x16x128_f8f6f4", 16, 16, 128, F8F6F4, F8F6F4, 32},
    {"v_mfma_scale_f32_32x32x64_f8f6f4", 32, 32, 64, F8F6F4, F8F6F4, 32},
    {"v_mfma_f32_16x16x128_f8f6f4", 16, 16, 128, F8F6F4, F8F6F4, 0},
    {"v_mfma_f32_32x32x64_f8f6f4", 32, 32, 64, F8F6F4, F8F6F4, 0},
    {"v_mfma_f32_16x16x32_bf16", 16, 16, 32, Bf16, Bf16, 0},
    {"v_mfma_f32_32x32x16_bf16", 32, 32, 16, Bf16, Bf16, 0},
    {"v_mfma_f32_16x16x32_f16", 16, 16, 32, F16, F16, 0},
    {"v_mfma_f32_16x16x32_fp8_fp8", 16, 16, 32, E4m3, E4m3, 0},
};

// gfx942 (CDNA3): fp8 in the FNUZ encoding, no block scales.
constexpr MatrixInstruction kGfx942Matrix[] = {
    {"v_mfma_f32_16x16x32_fp8_fp8", 16, 16, 32, E4m3Fnuz, E4m3Fnuz, 0},
    {"v_mfma_f32_32x32x16_fp8_fp8", 32, 32, 16, E4m3Fnuz, E4m3Fnuz, 0},
    {"v_mfma_f32_16x16x16_bf16", 16, 16, 16, Bf16, Bf16, 0},
    {"v_mfma_f32_32x32x8_bf16", 32, 32, 8, Bf16, Bf16, 0},
    {"v_mfma_f32_16x16x16_f16", 16, 16, 16, F16, F16, 0},
};

// gfx90a (CDNA2): bf16 and f16 only.
constexpr MatrixInstruction kGfx90aMatrix[] = {
    {"v_mfma_f32_16x16x8bf16_1k", 16, 16, 8, Bf16, Bf16, 0},
    {"v_mfma_f32_32x32x8bf16_1k", 32, 32, 8, Bf16, Bf16, 0},
    {"v_mfma_f32_16x16x16f16", 16, 16, 16, F16, F16, 0},
};

// sm_90 (Hopper): the warp-level mma the device library uses (wgmma is not
// used).
constexpr MatrixInstruction kSm90Matrix[] = {
    {"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", 16, 8, 16, F16, F16, 0},
    {"mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", 16, 8, 16, Bf16, Bf16, 0},
};

constexpr Target kTargets[] = {
    {"gfx950", "CDNA4", "MI355X", TargetVendor::Amd, 64, 160 * 1024, 0, 256, true, false, true,
     kGfx950Matrix},
    {"gfx942", "CDNA3", "MI300X", TargetVendor::Amd, 64, 64 * 1024, 0, 304, false, false, false,
     kGfx942Matrix},
    {"gfx90a", "CDNA2", "MI210", TargetVendor::Amd, 64, 64 * 1024, 0, 104, true, false, false,
     kGfx90aMatrix},
    {"sm_90", "Hopper", "H200", TargetVendor::Nvidia, 32, 227 * 1024, 48 * 1024, 132, true, true,
     false, kSm90Matrix},
};

std::string joinNames(bool (*wanted)(const Target &)) {
  std::string names;
  for (const Target &t : kTargets)
    if (wanted(t))
      names += (names.empty() ? "" : ", ") + std::string(t.name);
  return names;
}

} // namespace

const MatrixInstruction *Target::findMatrix(int m, int n, int k, MatrixOperand a, MatrixOperand b,
                                            bool scaled) const {
  for (const MatrixInstruction &i : matrix)
    if (i.m == m && i.n == n && i.k == k && i.a == a && i.b == b && (i.scaleBlock > 0) == scaled)
      return &i;
  return nullptr;
}

const MatrixInstruction *Target::bf16MfmaStep() const {
  if (const MatrixInstruction *one = findMatrix(16, 16, 32, MatrixOperand::Bf16, MatrixOperand::Bf16))
    return one;
  return findMatrix(16, 16, 16, MatrixOperand::Bf16, MatrixOperand::Bf16);
}

bool Target::hasScaledMatrix() const {
  for (const MatrixInstruction &i : matrix)
    if (i.scaleBlock > 0)
      return true;
  return false;
}

std::span<const Target> targets() { return kTargets; }

const Target *findTarget(std::string_view name) {
  for (const Target &t : kTargets)
    if (t.name == name)
      return &t;
  return nullptr;
}

std::string targetNames() {
  return joinNames([](const Target &) { return true; });
}

std::string targetNames(TargetVendor vendor) {
  return vendor == TargetVendor::Amd ? joinNames([](const Target &t) { return t.isAmd(); })
                                     : joinNames([](const Target &t) { return t.isNvidia(); });
}

} // namespace monodc::runtime
