//===- Launches.h - layer compositions --------------------------*- C++ -*-===//
#ifndef MONODC_STAGES_LAUNCHES_H
#define MONODC_STAGES_LAUNCHES_H

#include "monodc/stages/ModelConfig.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace monodc::stages {

/// The launches the library composes today.
std::vector<std::string> launchNames();

/// The attention front of K1: seam norm -> wqkv -> q norm, kv norm -> key
/// RoPE -> KV insert. Inputs: u [rows, H] bf16 (the collapsed residual),
/// positions, slot_mapping. Outputs: y [rows, H], qn [rows, qRank], kn and k
/// [rows, kvDim] (bf16), kv_cache (the records of the step's slots).
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
buildAttentionFront(mlir::MLIRContext &context, const ModelConfig &config,
                    const BuildParams &params);

/// The attention seam (mHC fold, mix, gate, then the seam norm): inputs
/// residual, x, post_in, comb_in, pre_in; outputs residual_out, pre, post,
/// comb, y. With `withFront` ("k1") the attention front follows in the same
/// launch: wqkv, the q/kv norms, the key RoPE, the KV insert and the query
/// path (outputs qn, kn, k, kv_cache, q): the K1 launch.
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
buildAttentionSeam(mlir::MLIRContext &context, const ModelConfig &config,
                   const BuildParams &params, bool withFront);

/// The attention back of K2 for the rank's heads: split-K attention over the
/// window and compressed KV caches (the keys found through block tables and
/// the top-k lists at the compress ratio of `params`, StepIndices.h), the
/// combine with the sink, the inverse RoPE, wo_a and wo_b. Inputs q,
/// positions (i64), slot_mapping (i64; a pad row, -1, reads no keys),
/// kv_cache, compressed_cache, block_table, compressed_block_table and
/// index_topk (i32);
/// outputs o [rows, heads * headDim] and partial [rows, H] (bf16).
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
buildAttentionBack(mlir::MLIRContext &context, const ModelConfig &config,
                   const BuildParams &params);

/// The MoE router and routing with the shared expert beside them: inputs x
/// [rows, H] bf16 (the FFN seam's y) and slot_mapping (a pad row, -1, picks
/// no expert); outputs logits, topk_indices,
/// topk_weights and shared_out. With `withRouted` ("moe") the routed MXFP4
/// experts follow (w13, w2 and their scales in AITER's shuffled layouts) and
/// moe_out [rows, H] bf16 is the rank's partial: the whole MoE before its
/// all-reduce.
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
buildMoe(mlir::MLIRContext &context, const ModelConfig &config, const BuildParams &params,
         bool withRouted);

/// K2 (`withAttention`) and the FFN launch, over the build's TP ranks:
/// [K2 only: the attention back -> partial] -> the exact all-reduce of the
/// attention partial (attn_out) -> the FFN seam (fold with attn_out and K1's
/// post/comb/pre as ffn_post_in, ffn_comb_in, ffn_pre_in; mix, gate) -> its
/// norm (ffn_y) -> the MoE (router, shared and routed experts: moe_out) ->
/// the exact all-reduce of moe_out (x_out, the layer's output). The FFN launch
/// takes the unreduced attention partial as input `partial`. Outputs also
/// the FFN seam's ffn_residual_out, ffn_pre, ffn_post, ffn_comb.
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
buildLayerBack(mlir::MLIRContext &context, const ModelConfig &config, const BuildParams &params,
               bool withAttention);

/// The exact all-reduce over the build's TP ranks: input partial [rows, H]
/// bf16 (this rank's), output reduced [rows, H] (bit-identical on all ranks).
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
buildAllReduce(mlir::MLIRContext &context, const ModelConfig &config, const BuildParams &params);

/// The query path: qn [rows, qRank] -> MXFP8 -> wq_b -> per-head RoPE ->
/// q [rows, heads/TP * headDim].
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
buildAttentionQuery(mlir::MLIRContext &context, const ModelConfig &config,
                    const BuildParams &params);

/// Builds a launch by name (see launchNames()).
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
buildLaunch(mlir::MLIRContext &context, const std::string &launch, const ModelConfig &config,
            const BuildParams &params);

} // namespace monodc::stages

#endif // MONODC_STAGES_LAUNCHES_H
