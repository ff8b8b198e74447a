//===- StageCost.h - what a stage costs on MI355X, by the ISA's rates -----===//
// A per-stage estimate for gfx950 (docs/gfx950-matrix-cores.md): the weight
// bytes a step streams and the HBM time they take at MI355X's bandwidth,
// against the issue time of the stage's dot products at the ISA's published
// rates, on the building blocks mono-lower-tiles chose. A stage whose HBM
// time is the larger is memory-bound.
#ifndef MONODC_ANALYSIS_STAGECOST_H
#define MONODC_ANALYSIS_STAGECOST_H

#include "monodc/Dialect/Mono/MonoDialect.h"

#include <string>
#include <vector>

namespace monodc::mono {

/// MI355X's rates (CDNA4 ISA reference; AMD's MI355X figures).
struct IssueModel {
  double clockHz = 2.4e9;
  int64_t computeUnits = 256;
  int64_t simdsPerCu = 4;
  double hbmBytesPerSecond = 8e12;
  /// v_mfma_scale_f32_16x16x128_f8f6f4 on one SIMD: 32 cycles when either
  /// operand is fp8 (the tokens always are), 16 for fp4 x fp4.
  int64_t scaledMfmaCycles = 32;
  /// v_mfma_f32_16x16x32_bf16 on one SIMD: 8,192 MACs at MI355X's dense bf16
  /// rate (about 2.5 PFLOP/s, 512 MACs a SIMD-cycle) is 16 cycles.
  int64_t bf16MfmaCycles = 16;
  /// gfx942's v_mfma_f32_16x16x32_fp8_fp8 (fp8_mfma GEMVs): 16 cycles
  /// (AMD's matrix instruction calculator for CDNA3).
  int64_t fp8MfmaCycles = 16;
  /// The vector ALU's best: 4 SIMDs x 16 lanes x a packed pair, MACs a
  /// CU-cycle. fma chains also decode and scale, so this is a lower bound.
  int64_t valuMacsPerCuCycle = 128;
};

struct StageCost {
  std::string stage;
  int64_t tasks = 0;
  std::string lowering;      ///< the building blocks of its dot products ("-" for none)
  double weightBytes = 0;    ///< a step's weights (and their scales), every task's
  double kvBytes = 0;        ///< KV records its attention chunks read (bound: every key slot)
  double macs = 0;           ///< multiply-adds of its GEMVs and attention chunks
  double mfmaInstructions = 0;  ///< scaled MFMAs a step issues
  double hbmMicros = 0;      ///< weightBytes + kvBytes at the CUs' share of the HBM rate
  double issueMicros = 0;    ///< its MFMAs and vector MACs at the ISA's rates
  bool memoryBound() const { return hbmMicros >= issueMicros; }
};

/// One entry per stage of a launch that has been through mono-lower-tiles,
/// in stage order. Dynamic stages are counted as if every task ran (an
/// upper bound: routed tasks of empty slots skip their GEMVs).
std::vector<StageCost> estimateStageCosts(LaunchOp launch, const IssueModel &model = {});

} // namespace monodc::mono

#endif
