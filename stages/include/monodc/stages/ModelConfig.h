//===- ModelConfig.h - model dimensions and build parameters ----*- C++ -*-===//
#ifndef MONODC_STAGES_MODELCONFIG_H
#define MONODC_STAGES_MODELCONFIG_H

#include "monodc/runtime/Eligibility.h"
#include "monodc/runtime/Target.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace monodc::stages {

/// The dimensions the stage library is parameterized by (docs/numerics.md section 1).
struct ModelConfig {
  std::string name;
  int64_t hidden;      ///< H
  int64_t heads;       ///< attention heads (all ranks)
  int64_t headDim;     ///< nope + rope
  int64_t ropeDim;     ///< the rotated tail of a head
  int64_t qRank;       ///< q low rank
  int64_t kvDim;       ///< kv latent (= headDim: K = V)
  float normEps;       ///< every RMSNorm
  int64_t seamSlice;   ///< columns of H per task of column-sliced stages (the seam fold, routed.combine)
  int64_t ropePositions; ///< rows of the cos/sin table
  int64_t experts;     ///< routed experts
  int64_t topK;        ///< experts per token
  int64_t sharedIntermediate; ///< the shared expert's intermediate (all ranks)
  // (the routed experts' intermediate is routedIntermediate, below)
  float routedScaling; ///< multiplies the renormalized routing weights
  float swigluLimit;   ///< clamp of the gated activations
  /// Pages of the window KV cache a launch's cache view spans. Kernels
  /// address pages by the row stride only; this sizes the simulator's and
  /// the harnesses' buffers.
  int64_t kvCachePages = 64;
  /// The attention back (docs/numerics.md section 4): heads per output group and the
  /// group's low rank, window keys, compressed keys (the index top-k).
  int64_t headsPerGroup = 8;
  int64_t groupRank = 1024;
  int64_t windowKeys = 128;
  int64_t compressedKeys = 512;
  /// The routed experts' intermediate (all ranks).
  int64_t routedIntermediate = 2304;

  // mHC (docs/numerics.md section 3): the same for every config.
  static constexpr int64_t kStreams = 4;
  static constexpr int64_t kMixes = 24;
  static constexpr int64_t kSinkhornIterations = 20;
  static constexpr float kHcEps = 1e-6f;
  static constexpr float kPostMultiplier = 2.0f;

  // The KV record (fp8_ds_mla, docs/numerics.md section 4): pages of 32 tokens laid
  // out as [32 x data][32 x 8 scale bytes]; data = the nope dims in e4m3
  // (64-dim groups, one scale byte each), then the rope dims in bf16.
  static constexpr int64_t kKvPageTokens = runtime::kKvPageTokens; // the runtime checks caches by it
  static constexpr int64_t kKvScaleBytes = 8;
  static constexpr int64_t kKvGroup = 64;
  int64_t kvNope() const { return kvDim - ropeDim; }
  int64_t kvDataBytes() const { return kvNope() + 2 * ropeDim; }
  int64_t kvRecordBytes() const { return kvDataBytes() + kKvScaleBytes; }
  int64_t kvPageBytes() const { return kKvPageTokens * kvRecordBytes(); }
  /// Logical pages of a request's block table: enough for every position.
  int64_t blockTablePages() const { return (ropePositions + kKvPageTokens - 1) / kKvPageTokens; }

  /// Keys per split-K chunk of the attention back.
  static constexpr int64_t kAttentionChunk = 64;

  int64_t qkvWidth() const { return qRank + kvDim; }
  int64_t seamSlices() const { return hidden / seamSlice; }
  int64_t sharedPerRank(int64_t tp) const { return sharedIntermediate / tp; }
  /// A rank's routed intermediate, padded up to a multiple of 128 (TP4:
  /// 576 -> 640); the padding rows and columns of w13/w2 hold zeros.
  int64_t routedPerRank(int64_t tp) const { return (routedIntermediate / tp + 127) / 128 * 128; }
};

/// DeepSeek-V4.1-Flash.
ModelConfig dsv41Config();
/// Same structure and formats, narrower: fast enough for many seeds in tests.
ModelConfig tinyConfig();
/// A validation config: DSV41's dimensions with 16 routed experts of
/// intermediate 1024, so that a launch whose routed GEMVs stream their
/// weights as at full size (sm_90's weight rings) fits the simulator and
/// what travels to the GPU machine (about 40 MB at TP 4).
ModelConfig moe16Config();
/// "dsv41" or "tiny".
llvm::Expected<ModelConfig> configByName(const std::string &name);

/// What one build serves: arch, grid, step width and tensor parallelism.
struct BuildParams {
  std::string arch = std::string(runtime::kDefaultTarget);
  int64_t grid = 0;  ///< 0: the arch's compute-unit count
  int64_t block = 256;
  int64_t rows = 6;
  int64_t tp = 2;
  /// The layer's compress ratio (0: window keys only; 1, 2: a compressed key
  /// a token, a compressed key every 2 tokens). Only the launches that read
  /// compressed keys use it (runtime::readsCompressedKeys).
  int64_t ratio = 0;
};

/// The CLI's compress ratio where none is given (the first backbone layers').
inline constexpr int64_t kDefaultCliRatio = 2;

/// ".c<ratio>" in a file name where the ratio changes the launch's code and
/// is not kDefaultCliRatio, else "".
std::string ratioFileTag(const std::string &launch, int64_t ratio);

/// Compute units of an arch (the persistent grid), or 0 when unknown.
int64_t defaultGrid(const std::string &arch);

/// Fills defaults and refuses what the stages cannot serve, naming the value.
llvm::Expected<BuildParams> resolveBuildParams(const ModelConfig &config, BuildParams params);

} // namespace monodc::stages

#endif // MONODC_STAGES_MODELCONFIG_H
