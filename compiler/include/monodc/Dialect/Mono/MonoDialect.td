//===- MonoDialect.td - the mono dialect ------------------*- tablegen -*-===//
//
// The mono dialect describes one persistent launch: its regions (memory it
// reads and writes) and its stages (task tables whose bodies are block-level
// programs on tiles).
//
//===----------------------------------------------------------------------===//
#ifndef MONODC_DIALECT_MONO_DIALECT_TD
#define MONODC_DIALECT_MONO_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Mono_Dialect : Dialect {
  let name = "mono";
  let cppNamespace = "::monodc::mono";
  let summary = "Fused persistent decode-layer launches built from tile programs";
  let useDefaultTypePrinterParser = 1;
  let dependentDialects = ["::mlir::arith::ArithDialect"];
  // What the passes record on ops for later passes, the printer and the
  // simulator. Each is declared here and verified (MonoDialect.cpp:
  // verifyOperationAttribute): its type and the ops that may carry it.
  let discardableAttrs = (ins
    // mono-place-tasks, on mono.stage: task t runs on CTA (base + t) mod G.
    "::mlir::IntegerAttr":$base,
    // mono-materialize-sync, on a dynamic mono.stage: its counter in the step;
    // and, where its task ends with a publish, that the publish hands the
    // block its next task (mono_publish_and_claim).
    "::mlir::IntegerAttr":$claim,
    "::mlir::UnitAttr":$hand_over,
    // mono-materialize-sync, on mono.wait: the regions it guards, and that it
    // waits on every task of its producer.
    "::mlir::ArrayAttr":$regions,
    "::mlir::UnitAttr":$whole_producer,
    // mono-plan-waits: a mono.wait a CTA polls for its first task of the
    // stage only; a mono.gemv_rows whose weights are loaded before the waits
    // in front of it.
    "::mlir::UnitAttr":$polled_once,
    "::mlir::UnitAttr":$prefetched,
    // mono-materialize-sync, on mono.launch: tags 2e + tag_offset; whether it
    // moves the epoch on. Set by the DSL: step_tag and ends_step.
    "::mlir::IntegerAttr":$tag_offset,
    "::mlir::BoolAttr":$advance_epoch,
    "::mlir::IntegerAttr":$step_tag,
    "::mlir::BoolAttr":$ends_step,
    // mono-plan-memory: on mono.launch its scratch and peer-slot bytes; on
    // mono.region its place in the scratch buffer or the peer slot; a flags
    // region that lives in peer memory.
    "::mlir::IntegerAttr":$scratch_bytes,
    "::mlir::IntegerAttr":$peer_slot_bytes,
    "::mlir::IntegerAttr":$offset,
    "::mlir::IntegerAttr":$peer_offset,
    "::mlir::UnitAttr":$peer,
    // mono-prepare-emission: on mono.launch the shared memory its building
    // blocks need, and whether its fused stages print as functions of their
    // own; on mono.gemv_rows the bytes of its weight ring and, on fma
    // chains, the tokens it stages a pass.
    "::mlir::IntegerAttr":$lds_bytes,
    "::mlir::UnitAttr":$stage_calls,
    "::mlir::IntegerAttr":$ring_bytes,
    "::mlir::IntegerAttr":$chunk_tokens,
    // mono-lower-tiles, on an axis mono.reduce: it prints with the expand
    // that takes its result whole (one rearrangement instead of two).
    "::mlir::UnitAttr":$with_expand,
    // mono-unfuse, on mono.launch: the unfused baseline, a kernel a stage
    // ordered by the stream.
    "::mlir::UnitAttr":$unfused,
    // mono-plan-shared: the area of shared memory (0 .. 2, kRearrangementAreas)
    // a rearrangement via shared, an interleave or a small library call
    // uses; on a rearrangement, that the area already holds its input (no
    // write, no barrier).
    "::mlir::IntegerAttr":$area,
    "::mlir::UnitAttr":$reuse
  );
  let hasOperationAttrVerify = 1;
}

class Mono_Op<string mnemonic, list<Trait> traits = []>
    : Op<Mono_Dialect, mnemonic, traits>;

def Mono_RegionKind : I32EnumAttr<"MemoryKind", "what a region holds and who may write it", [
    I32EnumAttrCase<"Input", 0, "input">,
    I32EnumAttrCase<"Output", 1, "output">,
    I32EnumAttrCase<"Weight", 2, "weight">,
    I32EnumAttrCase<"Scratch", 3, "scratch">,
    I32EnumAttrCase<"Peer", 4, "peer">,
    I32EnumAttrCase<"Epoch", 5, "epoch">,
    I32EnumAttrCase<"Flags", 6, "flags">]> {
  let cppNamespace = "::monodc::mono";
}

def Mono_ReduceKind : I32EnumAttr<"ReduceKind", "a reduction", [
    I32EnumAttrCase<"Sum", 0, "sum">,
    I32EnumAttrCase<"Max", 1, "max">,
    I32EnumAttrCase<"AbsMax", 2, "absmax">]> {
  let cppNamespace = "::monodc::mono";
}

def Mono_Mxfp8Variant : I32EnumAttr<"Mxfp8Variant", "MXFP8 activation quantizer flavour", [
    I32EnumAttrCase<"Standard", 0, "standard">,
    I32EnumAttrCase<"Routed", 1, "routed">,
    I32EnumAttrCase<"KvRecord", 2, "kv">]> {
  let cppNamespace = "::monodc::mono";
}

def Mono_GemvLowering : I32EnumAttr<"GemvLowering",
    "the building block a gemv_rows becomes on its target (mono-lower-tiles)", [
    I32EnumAttrCase<"FmaChains", 0, "fma_chains">,
    I32EnumAttrCase<"WarpMma", 1, "warp_mma">,
    I32EnumAttrCase<"ScaledMfma", 2, "scaled_mfma">,
    I32EnumAttrCase<"Bf16Mfma", 3, "bf16_mfma">,
    // fma chains whose tokens are staged in shared memory as f32 words
    // rather than bf16 halves: no unpacking in the loop, twice the bytes.
    I32EnumAttrCase<"FmaChainsF32", 4, "fma_chains_f32">,
    // gfx942: the unscaled fp8 MFMA (FNUZ) a 32-k block, the E8M0 scales
    // applied in software; not scaled_mfma's numbers (two roundings a block).
    I32EnumAttrCase<"Fp8Mfma", 5, "fp8_mfma">]> {
  let cppNamespace = "::monodc::mono";
}

def Mono_Rearrangement : I32EnumAttr<"Rearrangement",
    "how a slice, expand, gather or axis reduction moves its values between "
    "threads (mono-lower-tiles)", [
    // Each result value is computed from values its own thread holds.
    I32EnumAttrCase<"InThread", 0, "in_thread">,
    // The input sits in the first wave's lanes: lanes read it by shuffles.
    I32EnumAttrCase<"Shuffle", 1, "shuffle">,
    // Through shared memory: a write, a barrier, then reads.
    I32EnumAttrCase<"Shared", 2, "shared">]> {
  let cppNamespace = "::monodc::mono";
}

def Mono_AttendLowering : I32EnumAttr<"AttendLowering",
    "the building block an attend_chunk becomes on its target (mono-lower-tiles)", [
    I32EnumAttrCase<"FmaChains", 0, "fma_chains">,
    I32EnumAttrCase<"WarpMma", 1, "warp_mma">,
    I32EnumAttrCase<"Bf16Mfma", 2, "bf16_mfma">]> {
  let cppNamespace = "::monodc::mono";
}

def Mono_Predicate : I32EnumAttr<"Predicate", "a comparison for mono.select", [
    I32EnumAttrCase<"Gt", 0, "gt">,
    I32EnumAttrCase<"Lt", 1, "lt">,
    I32EnumAttrCase<"IsNan", 2, "isnan">]> {
  let cppNamespace = "::monodc::mono";
}

#endif // MONODC_DIALECT_MONO_DIALECT_TD
