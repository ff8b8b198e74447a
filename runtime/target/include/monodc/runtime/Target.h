// The one description of every architecture monodc builds for: ISA family,
// wave size, shared memory, the default grid, number formats, the matrix-core
// instructions with their tile shapes and operand formats, and the copy
// features. LLVM-free, so the compiler, the stages, the runtime and the tools
// all read the same facts; no other file spells an architecture's name.
#ifndef MONODC_RUNTIME_TARGET_H
#define MONODC_RUNTIME_TARGET_H

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace monodc::runtime {

enum class TargetVendor { Amd, Nvidia };

/// What a matrix-core operand holds.
enum class MatrixOperand {
  F16,
  Bf16,
  E4m3,      ///< OCP e4m3fn
  E4m3Fnuz,  ///< e4m3 with the FNUZ encoding (gfx942)
  F8F6F4,    ///< any of e4m3, e5m2, e2m3, e3m2, e2m1, picked by the instruction's format fields
};

/// One matrix-core instruction: a wave's (warp's) C[m][n] += A[m][k] B[k][n]
/// with f32 accumulation.
struct MatrixInstruction {
  std::string_view mnemonic;  ///< as the assembler (or PTX) spells it
  int m = 0, n = 0, k = 0;
  MatrixOperand a = MatrixOperand::F16, b = MatrixOperand::F16;
  /// K values one E8M0 scale covers, applied by the hardware (0: unscaled).
  int scaleBlock = 0;
};

struct Target {
  std::string_view name;       ///< the processor: "gfx950", "sm_90"
  std::string_view isaFamily;  ///< "CDNA4", "Hopper"
  std::string_view part;       ///< the device the defaults describe: "MI355X"
  TargetVendor vendor = TargetVendor::Amd;
  int waveSize = 64;
  int64_t sharedBytesPerBlock = 0;  ///< LDS / shared memory one CTA may use
  /// Shared memory a kernel may declare statically; more must be dynamic
  /// and opted in (CUDA's 48 KB). 0: no such limit.
  int64_t staticSharedLimit = 0;
  int64_t defaultGrid = 0;  ///< the part's compute units (CUs / SMs): one CTA each
  bool ocpFp8 = true;       ///< e4m3 in the OCP encoding (false: FNUZ)
  bool asyncCopy = false;      ///< global -> shared copies that bypass registers (cp.async)
  bool ldsDirectLoad = false;  ///< global loads written straight into LDS (gfx950's dwordx4 form)
  std::span<const MatrixInstruction> matrix;

  bool isAmd() const { return vendor == TargetVendor::Amd; }
  bool isNvidia() const { return vendor == TargetVendor::Nvidia; }
  /// The instruction of that tile and operand formats, null where the
  /// target has none. `scaled`: one that applies E8M0 block scales.
  const MatrixInstruction *findMatrix(int m, int n, int k, MatrixOperand a, MatrixOperand b,
                                      bool scaled = false) const;
  /// Whether any instruction takes block scales in hardware (scaled MFMA).
  bool hasScaledMatrix() const;
  /// The bf16 MFMA that a 32-k step of the device library's bf16 forms
  /// (gemv_mfma.h, attend_mfma.h) runs on: 16x16x32, or where there is none
  /// 16x16x16 twice (gfx942); null where there is neither.
  const MatrixInstruction *bf16MfmaStep() const;
};

/// Every target, the product first.
std::span<const Target> targets();
/// The target of that name, null if none.
const Target *findTarget(std::string_view name);
/// "gfx950, gfx942, gfx90a, sm_90": for error messages and help.
std::string targetNames();
/// The same, of one vendor's targets only.
std::string targetNames(TargetVendor vendor);

/// The product's target, every tool's default.
inline constexpr std::string_view kDefaultTarget = "gfx950";
/// The NVIDIA validation target (the same source through nvrtc).
inline constexpr std::string_view kValidationTarget = "sm_90";

} // namespace monodc::runtime

#endif
