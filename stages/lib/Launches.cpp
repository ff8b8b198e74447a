//===- Launches.cpp - layer compositions ----------------------------------===//
#include "monodc/stages/Launches.h"

#include "monodc/stages/AllReduce.h"
#include "monodc/stages/AttentionBack.h"
#include "monodc/stages/AttentionFront.h"
#include "monodc/stages/MhcSeam.h"
#include "monodc/stages/Moe.h"
#include "monodc/stages/PadRows.h"
#include "monodc/stages/StepIndices.h"

#include "llvm/ADT/StringExtras.h"

using namespace monodc::dsl;
using namespace monodc::stages;

std::vector<std::string> monodc::stages::launchNames() {
  return {"attention_front", "attention_query", "attention_seam", "k1",
          "attention_back", "moe_router_shared", "moe", "k2", "ffn", "allreduce"};
}


namespace {

/// The attention front after the seam norm: wqkv, the q/kv norms, the key
/// RoPE and the KV insert, reading MXFP8(y) from `xq`, `xs`. Shared by
/// attention_front and k1.
struct FrontRegions {
  WqkvRegions wqkv;
  Region qNorm, kvNorm, qn, kn, positions, cosSin, k, slots, cache;
};

FrontRegions declareFront(Launch &launch, const ModelConfig &c, const Region &xq,
                          const Region &xs) {
  const int64_t rows = launch.options().rows, h = c.hidden;
  FrontRegions f;
  f.wqkv = {xq, xs, launch.weight("wqkv", e4m3, {c.qkvWidth(), h}),
            launch.weight("wqkv_scale", e8m0, {c.qkvWidth() / 32, h / 32}),
            launch.scratch("qkv", bf16, {rows, c.qkvWidth()})};
  f.qNorm = launch.weight("q_norm", bf16, {c.qRank});
  f.kvNorm = launch.weight("kv_norm", bf16, {c.kvDim});
  f.qn = launch.output("qn", bf16, {rows, c.qRank});
  f.kn = launch.output("kn", bf16, {rows, c.kvDim});
  f.cosSin = declareRopeTable(launch, c);
  f.positions = declarePositions(launch, c, f.cosSin);
  f.k = launch.output("k", bf16, {rows, c.kvDim});
  f.slots = declareSlotMapping(launch, c);
  f.cache = declareCache(launch, c, "kv_cache", CacheUse::Written);
  launch.indexesRowsOf(f.slots, f.cache);
  return f;
}

/// The front after its wqkv GEMV: norms, key rope, KV insert. With `query`
/// (K1), the q norm also stores MXFP8(qn) for the query's wq_b.
void addFrontAfterWqkv(Launch &launch, const ModelConfig &c, const FrontRegions &f,
                       const QueryRegions *query = nullptr) {
  RowNormRegions qNorm{f.wqkv.qkv, f.qNorm, f.qn, 0, c.qRank};
  if (query) {
    qNorm.codes = query->codes;
    qNorm.scales = query->scales;
  }
  addRowNorm(launch, c, "front.q_norm", qNorm);
  addRowNorm(launch, c, "front.kv_norm", {f.wqkv.qkv, f.kvNorm, f.kn, c.qRank, c.kvDim});
  addKeyRope(launch, c, {f.kn, f.positions, f.cosSin, f.k});
  addKvInsert(launch, c, {f.k, f.slots, f.cache});
}

/// The query path's weights, scratch and output for `heads` local heads.
QueryRegions declareQuery(Launch &launch, const ModelConfig &c, int64_t heads, const Region &qn,
                          const Region &positions, const Region &cosSin) {
  const int64_t rows = launch.options().rows, width = heads * c.headDim;
  return {qn,
          positions,
          cosSin,
          launch.weight("wq_b", e4m3, {width, c.qRank}),
          launch.weight("wq_b_scale", e8m0, {width / 32, c.qRank / 32}),
          launch.scratch("qq", e4m3, {rows, c.qRank}),
          launch.scratch("qs", e8m0, {rows, c.qRank / 32}),
          launch.scratch("q_unrotated", bf16, {rows, width}),
          launch.output("q", bf16, {rows, width})};
}

} // namespace

llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
monodc::stages::buildAttentionSeam(mlir::MLIRContext &context, const ModelConfig &c,
                                   const BuildParams &params, bool withFront) {
  // K1 tags 2e+1 and leaves the step to K2.
  Launch launch(context, withFront ? "k1" : "attention_seam",
                {params.arch, params.grid, params.block, params.rows, 1, 1, !withFront});
  const int64_t rows = params.rows, h = c.hidden, heads = c.heads / params.tp;
  SeamRegions seam = declareSeamRegions(launch, c);
  Region normWeight = launch.weight("attn_norm", bf16, {h});
  Region y = launch.output("y", bf16, {rows, h});
  Region xq = launch.scratch("xq", e4m3, {rows, h});
  Region xs = launch.scratch("xs", e8m0, {rows, h / 32});
  FrontRegions front;
  QueryRegions query;
  if (withFront) {
    front = declareFront(launch, c, xq, xs);
    query = declareQuery(launch, c, heads, front.qn, front.positions, front.cosSin);
    seam.slotMapping = front.slots;
  }
  // Every CTA walks the stages in this order. Nothing in K1 waits for the
  // seam's mixes. When wqkv leaves at least half the CTAs without a task
  // (28 tasks at rows 48, 14 at rows 6, on 66 CTAs a rank), the mixes come
  // after it, claimed, so that the idle CTAs run them while wqkv runs;
  // before the norm they hold the norm, and so wqkv, up. Where wqkv keeps
  // most CTAs busy, claimed mixes would hold up the wq_b tasks of the CTAs
  // that took them, so they stay before the norm.
  const bool mixesDuringWqkv =
      withFront && 2 * gemvStageTasks(launch, wqkvGemvStage(launch, front.wqkv)) <= params.grid;
  addSeamFold(launch, c, "seam", seam);
  if (!mixesDuringWqkv)
    addSeamMixes(launch, c, "seam", seam, /*dynamicMix=*/false);
  addSeamNorm(launch, c, "seam.norm", {seam.u, normWeight, y, xq, xs});
  if (withFront)
    addWqkvGemv(launch, c, front.wqkv);
  if (mixesDuringWqkv)
    addSeamMixes(launch, c, "seam", seam, /*dynamicMix=*/true);
  if (withFront) {
    // K1 writes the step's new keys into the caller's cache in place.
    launch.stepResult(front.cache);
    addFrontAfterWqkv(launch, c, front, &query);
    addQuery(launch, c, heads, query, /*qnQuantized=*/true);
  }
  return launch.finish();
}

llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
monodc::stages::buildAttentionFront(mlir::MLIRContext &context, const ModelConfig &c,
                                    const BuildParams &params) {
  Launch launch(context, "attention_front",
                {params.arch, params.grid, params.block, params.rows});
  const int64_t rows = params.rows, h = c.hidden;
  Region u = launch.input("u", bf16, {rows, h});
  Region normWeight = launch.weight("attn_norm", bf16, {h});
  Region y = launch.output("y", bf16, {rows, h});
  Region xq = launch.scratch("xq", e4m3, {rows, h});
  Region xs = launch.scratch("xs", e8m0, {rows, h / 32});
  FrontRegions front = declareFront(launch, c, xq, xs);
  addSeamNorm(launch, c, "seam.norm", {u, normWeight, y, xq, xs});
  addWqkvGemv(launch, c, front.wqkv);
  addFrontAfterWqkv(launch, c, front);
  return launch.finish();
}

namespace {

/// The MoE's regions on input x: the router, the shared expert (MXFP8(x) in
/// `codes`/`scales`) and, when `withRouted`, the routed experts.
struct MoeRegions {
  RouterRegions router;
  SharedExpertRegions shared;
  RoutedExpertRegions routed;
  bool withRouted = false;
};

MoeRegions declareMoe(Launch &launch, const ModelConfig &c, int64_t tp, const Region &x,
                      const Region &codes, const Region &scales, const Region &slotMapping,
                      bool withRouted) {
  const int64_t rows = launch.options().rows, h = c.hidden, inter = c.sharedPerRank(tp);
  MoeRegions m;
  m.withRouted = withRouted;
  m.router = {x,
              launch.weight("gate", bf16, {c.experts, h}),
              launch.weight("gate_bias", f32, {c.experts}),
              launch.output("logits", f32, {rows, c.experts}),
              launch.output("topk_indices", f32, {rows, c.topK}),
              launch.output("topk_weights", f32, {rows, c.topK}),
              withRouted ? launch.scratch("routed_pairs", f32, {1, rows * c.topK}) : Region(),
              slotMapping};
  m.shared = {codes,
              scales,
              launch.weight("shared_gate_up", e4m3, {2 * inter, h}),
              launch.weight("shared_gate_up_scale", e8m0, {2 * inter / 32, h / 32}),
              launch.weight("shared_down", e4m3, {h, inter}),
              launch.weight("shared_down_scale", e8m0, {h / 32, inter / 32}),
              launch.scratch("shared_gu", bf16, {rows, 2 * inter}),
              launch.scratch("shared_hq", e4m3, {rows, inter}),
              launch.scratch("shared_hs", e8m0, {rows, inter / 32}),
              launch.output("shared_out", bf16, {rows, h})};
  if (withRouted)
    m.routed = declareRoutedExperts(launch, c, c.routedPerRank(tp), x, m.router, m.shared.out);
  return m;
}

void addMoe(Launch &launch, const ModelConfig &c, int64_t tp, const MoeRegions &m) {
  const int64_t shared = c.sharedPerRank(tp), routed = c.routedPerRank(tp);
  addRouter(launch, c, m.router);
  if (!m.withRouted) {
    addSharedExpertGateUp(launch, m.shared);
    addSharedExpertAct(launch, c, shared, m.shared);
    addSharedExpertDown(launch, c, m.shared);
    return;
  }
  // Every CTA walks the stages in this order. Each token's MXFP8r(x) and
  // the plan (one task) first, then the shared expert's gate/up, which
  // needs only x, while the plan runs; then the routed experts' input in
  // the plan's order, ready when CTAs reach their GEMVs. The shared
  // expert's activation waits for every gate/up task of its token, so it
  // comes after routed.ug, where that is long done (earlier, its CTAs
  // would wait there instead of copying routed.xr's input). The shared
  // expert's down projection, which waits for every token's activation,
  // comes after the routed GEMVs, where nothing waits for it (before them,
  // CTAs would poll there and hold routed.xr back).
  addRoutedTokens(launch, m.routed);
  addRoutedPlan(launch, c, m.routed);
  addSharedExpertGateUp(launch, m.shared);
  addRoutedInput(launch, c, m.routed);
  addRoutedGateUp(launch, c, routed, m.routed);
  addSharedExpertAct(launch, c, shared, m.shared);
  addRoutedDown(launch, c, m.routed);
  addSharedExpertDown(launch, c, m.shared);
  addRoutedCombine(launch, c, m.routed);
}

} // namespace

llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
monodc::stages::buildMoe(mlir::MLIRContext &context, const ModelConfig &c,
                         const BuildParams &params, bool withRouted) {
  Launch launch(context, withRouted ? "moe" : "moe_router_shared",
                {params.arch, params.grid, params.block, params.rows});
  const int64_t rows = params.rows, h = c.hidden;
  Region x = launch.input("x", bf16, {rows, h});
  Region xq = launch.scratch("xq", e4m3, {rows, h}), xs = launch.scratch("xs", e8m0, {rows, h / 32});
  MoeRegions moe = declareMoe(launch, c, params.tp, x, xq, xs, declareSlotMapping(launch, c),
                              withRouted);
  addMxfp8Rows(launch, "moe.xq", x, xq, xs);
  addMoe(launch, c, params.tp, moe);
  return launch.finish();
}

llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
monodc::stages::buildLayerBack(mlir::MLIRContext &context, const ModelConfig &c,
                               const BuildParams &params, bool withAttention) {
  Launch launch(context, withAttention ? "k2" : "ffn",
                {params.arch, params.grid, params.block, params.rows, params.tp, /*stepTag=*/2,
                 /*endsStep=*/true});
  const int64_t rows = params.rows, h = c.hidden, heads = c.heads / params.tp;
  AttentionBackRegions back;
  Region partial, slotMapping;
  if (withAttention) {
    back = declareAttentionBack(launch, c, heads);
    partial = back.partial;
    slotMapping = back.slotMapping;
  } else {
    partial = launch.input("partial", bf16, {rows, h});
    slotMapping = declareSlotMapping(launch, c);
  }
  AllReduceRegions attnReduce{partial, launch.peer("attn_partials", bf16, {rows, h}),
                              launch.output("attn_out", bf16, {rows, h}), slotMapping};
  SeamRegions seam = declareSeamRegions(launch, c, "ffn_", &attnReduce.out);
  seam.slotMapping = slotMapping;
  Region normWeight = launch.weight("ffn_norm", bf16, {h});
  Region y = launch.output("ffn_y", bf16, {rows, h});
  Region yq = launch.scratch("ffn_yq", e4m3, {rows, h});
  Region ys = launch.scratch("ffn_ys", e8m0, {rows, h / 32});
  MoeRegions moe = declareMoe(launch, c, params.tp, y, yq, ys, slotMapping, /*withRouted=*/true);
  AllReduceRegions moeReduce{moe.routed.out, launch.peer("moe_partials", bf16, {rows, h}),
                             launch.output("x_out", bf16, {rows, h}), slotMapping};
  // The step's results: the next layer's streams. K2 takes the query, the
  // cache K1 wrote and the attention seam's streams from K1 of its step.
  for (const Region &result :
       {moeReduce.out, seam.residualOut, seam.preOut, seam.postOut, seam.combOut})
    launch.stepResult(result);
  if (withAttention) {
    launch.handOver(back.q, "k1", "q");
    launch.handOver(back.windowCache, "k1", "kv_cache");
    launch.handOver(seam.residual, "k1", "residual_out");
    launch.handOver(seam.postIn, "k1", "post");
    launch.handOver(seam.combIn, "k1", "comb");
    launch.handOver(seam.preIn, "k1", "pre");
  }
  if (withAttention)
    addAttentionBack(launch, c, heads, params.ratio, back);
  addAllReduce(launch, "attn_allreduce", attnReduce);
  addSeamFold(launch, c, "ffn_seam", seam);
  addSeamMixes(launch, c, "ffn_seam", seam, /*dynamicMix=*/false);
  addSeamNorm(launch, c, "ffn_seam.norm", {seam.u, normWeight, y, yq, ys});
  addMoe(launch, c, params.tp, moe);
  addAllReduce(launch, "moe_allreduce", moeReduce);
  return launch.finish();
}

llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
monodc::stages::buildAttentionQuery(mlir::MLIRContext &context, const ModelConfig &c,
                                    const BuildParams &params) {
  Launch launch(context, "attention_query",
                {params.arch, params.grid, params.block, params.rows});
  const int64_t rows = params.rows, heads = c.heads / params.tp;
  Region qn = launch.input("qn", bf16, {rows, c.qRank});
  Region cosSin = declareRopeTable(launch, c);
  Region positions = declarePositions(launch, c, cosSin);
  QueryRegions r = declareQuery(launch, c, heads, qn, positions, cosSin);
  addQuery(launch, c, heads, r);
  return launch.finish();
}

llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
monodc::stages::buildAttentionBack(mlir::MLIRContext &context, const ModelConfig &c,
                                   const BuildParams &params) {
  Launch launch(context, "attention_back",
                {params.arch, params.grid, params.block, params.rows});
  const int64_t heads = c.heads / params.tp;
  addAttentionBack(launch, c, heads, params.ratio, declareAttentionBack(launch, c, heads));
  return launch.finish();
}

llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
monodc::stages::buildAllReduce(mlir::MLIRContext &context, const ModelConfig &c,
                               const BuildParams &params) {
  Launch launch(context, "allreduce",
                {params.arch, params.grid, params.block, params.rows, params.tp});
  const int64_t rows = params.rows, h = c.hidden;
  addAllReduce(launch, "allreduce",
               {launch.input("partial", bf16, {rows, h}), launch.peer("partials", bf16, {rows, h}),
                launch.output("reduced", bf16, {rows, h})});
  return launch.finish();
}

llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
monodc::stages::buildLaunch(mlir::MLIRContext &context, const std::string &name,
                            const ModelConfig &config, const BuildParams &params) {
  auto resolved = resolveBuildParams(config, params);
  if (!resolved)
    return resolved.takeError();
  if (name == "attention_front")
    return buildAttentionFront(context, config, *resolved);
  if (name == "attention_seam" || name == "k1")
    return buildAttentionSeam(context, config, *resolved, name == "k1");
  if (name == "moe_router_shared" || name == "moe")
    return buildMoe(context, config, *resolved, name == "moe");
  if (name == "k2" || name == "ffn")
    return buildLayerBack(context, config, *resolved, name == "k2");
  if (name == "allreduce")
    return buildAllReduce(context, config, *resolved);
  if (name == "attention_query")
    return buildAttentionQuery(context, config, *resolved);
  if (name == "attention_back")
    return buildAttentionBack(context, config, *resolved);
  return llvm::createStringError("unknown launch '%s' (known: %s)", name.c_str(),
                                 llvm::join(launchNames(), ", ").c_str());
}
