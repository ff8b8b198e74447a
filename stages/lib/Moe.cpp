//===- Moe.cpp - MoE router, routing and the shared expert ----------------===//
#include "monodc/stages/Moe.h"

#include "monodc/formats/AiterShuffle.h"
#include "monodc/stages/GemvStage.h"
#include "monodc/stages/PadRows.h"
#include "monodc/stages/Quantize.h"

using namespace monodc::dsl;
using namespace monodc::stages;

namespace {
/// The router's weight rows a task (bf16: CUDA cores, token groups; the e4m3
/// GEMVs take scaledGemvRowsPerTask).
constexpr int64_t kRouterRowsPerTask = 16;
} // namespace

void monodc::stages::addRouter(Launch &l, const ModelConfig &c, const RouterRegions &r) {
  const int64_t tokens = l.options().rows;
  // z = x . gate^T in f32.
  addGemvStage(l, {"moe.router", r.gate, {}, r.x, {}, r.logits, kRouterRowsPerTask, f32});
  // s = sqrt(softplus(z)) (NaN -> 0); top-k of s + bias, lower index first
  // on ties (pick order); S = the chosen s summed in pick order,
  // r = scaling / max(S, 1e-20), w = s * r, all f32 (vLLM's dsv4_topk).
  // A pad row picks nothing (its pairs go to no expert).
  l.stage("moe.route", tokens, [&](Task &t) {
    Tile z = t.loadRow(r.logits, t.id());
    Tile softplus = selectGreater(z, t.constant(20.0f), z, log(exp(z) + 1.0f));
    Tile score = replaceNan(sqrt(softplus), 0.0f);
    TopK top = topk(score + t.loadRow(r.bias, t.index(0)), c.topK);
    Tile chosen = gather(score, top.indices);
    Tile total = max(sumAlong(chosen, 1, c.topK, 1), t.constant(1e-20f));
    Tile ratio = t.constant(c.routedScaling) / total;
    Tile slot = t.load(r.slotMapping, t.id(), 0, 1);
    t.store(r.indices, t.id(), 0, unlessPad(slot, top.indices, -1.0f));
    t.store(r.weights, t.id(), 0, unlessPad(slot, chosen * ratio, 0.0f));
    if (!r.pairExperts.name().empty())
      t.store(r.pairExperts, t.index(0), t.id() * c.topK,
              unlessPad(slot, top.indices, float(c.experts)));
  });
}

void monodc::stages::addSharedExpertGateUp(Launch &l, const SharedExpertRegions &r) {
  // gs, us = bf16(MXFP8(x) . W1s^T), bf16(MXFP8(x) . W3s^T).
  addGemvStage(l, {"shared.gate_up", r.gateUp, r.gateUpScale, r.codes, r.scales, r.gateUpOut,
                   scaledGemvRowsPerTask(r.gateUp.rows(), l.options().grid), bf16,
                   /*everyToken=*/true});
}

void monodc::stages::addSharedExpertAct(Launch &l, const ModelConfig &c, int64_t intermediate,
                                        const SharedExpertRegions &r) {
  // h = bf16(bf16(g' / (1 + e^-g')) * clamp(u, -limit, limit)), g' = min(g, limit),
  // then MXFP8(h) for the down projection.
  l.stage("shared.act", l.options().rows, [&](Task &t) {
    Tile g = min(t.load(r.gateUpOut, t.id(), 0, intermediate).to(f32), t.constant(c.swigluLimit));
    Tile u = t.load(r.gateUpOut, t.id(), intermediate, intermediate).to(f32);
    u = max(min(u, t.constant(c.swigluLimit)), t.constant(-c.swigluLimit));
    Tile silu = (g / (exp(-g) + 1.0f)).to(bf16).to(f32);
    Tile h = (silu * u).to(bf16);
    Mxfp8Tile q = t.quantizeMxfp8(h.to(f32));
    t.store(r.hCodes, t.id(), 0, q.codes);
    t.store(r.hScales, t.id(), 0, q.scales);
  });
}

void monodc::stages::addSharedExpertDown(Launch &l, const ModelConfig &c,
                                         const SharedExpertRegions &r) {
  const int64_t tokens = l.options().rows;
  // ds = bf16(MXFP8(h) . W2s^T).
  const int64_t rowsPerTask = scaledGemvRowsPerTask(c.hidden, l.options().grid);
  l.stage("shared.down", rowBlockTasks(c.hidden, rowsPerTask), [&](Task &t) {
    requireWholeRowBlocks(t, r.down, c.hidden, rowsPerTask);
    Index first = t.id() * rowsPerTask;
    Tile out = t.gemvRows(r.down, r.downScale, first, rowsPerTask, r.hCodes, r.hScales,
                          t.index(0), tokens);
    t.storeRows(r.out, t.index(0), first, tokens, out.to(bf16));
  });
}

RoutedExpertRegions monodc::stages::declareRoutedExperts(Launch &l, const ModelConfig &c,
                                                         int64_t inter, const Region &x,
                                                         const RouterRegions &router,
                                                         const Region &shared) {
  const int64_t rows = l.options().rows, h = c.hidden, pairs = rows * c.topK;
  // Every pair may be an expert's only one: as many slots as pairs.
  const int64_t slotRows = pairs * kRoutedGroup;
  // AITER's scale shuffle pads rows to 256 and columns to 8.
  auto paddedScales = [](int64_t scaleRows, int64_t scaleCols) {
    return std::vector<int64_t>{int64_t(formats::paddedScaleRows(size_t(scaleRows))),
                                int64_t(formats::paddedScaleCols(size_t(scaleCols)))};
  };
  return {x,
          router.indices,
          router.weights,
          router.pairExperts,
          l.scratch("routed_plan", f32, {kPlanRows, pairs}),
          l.scratch("xtq", e4m3, {rows, h}),
          l.scratch("xts", e8m0, {rows, h / 32}),
          l.scratch("xrq", e4m3, {pairs, h}),
          l.scratch("xrs", e8m0, {pairs, h / 32}),
          l.weight("w13", e2m1, {c.experts * 2 * inter, h}),
          l.weight("w13_scale", e8m0, paddedScales(c.experts * 2 * inter, h / 32)),
          l.scratch("routed_hq", e4m3, {slotRows, inter}),
          l.scratch("routed_hs", e8m0, {slotRows, inter / 32}),
          l.weight("w2", e2m1, {c.experts * h, inter}),
          l.weight("w2_scale", e8m0, paddedScales(c.experts * h, inter / 32)),
          l.scratch("routed_down", f32, {slotRows, h}),
          shared,
          l.output("moe_out", bf16, {rows, h})};
}

void monodc::stages::addRoutedPlan(Launch &l, const ModelConfig &c, const RoutedExpertRegions &r) {
  // The pairs sorted by expert: top-k is stable (ties to the lower index),
  // so a top-k of the negated experts keeps each expert's pairs in pair
  // order; the same of the negated order is its inverse (each pair's place).
  // The sorted experts cut into slots give each pair its slot row. Pad
  // rows' pairs (expert `experts`) sort last; their slots are left empty
  // (count 0, expert -1, as past the last), so no GEMV runs for them.
  const int64_t pairs = r.pairExperts.cols();
  l.stage("routed.plan", 1, [&](Task &t) {
    TopK byExpert = topk(-t.loadRow(r.pairExperts, t.index(0)), pairs);
    TopK place = topk(-byExpert.indices, pairs);
    ExpertGroups slots = expertGroups(-byExpert.values, kRoutedGroup);
    Tile none = t.constant(float(c.experts));
    t.store(r.plan, t.index(kPlanPairAtPlace), 0, byExpert.indices);
    t.store(r.plan, t.index(kPlanSlotExpert), 0,
            selectLess(slots.slotExpert, none, slots.slotExpert, t.constant(-1.0f)));
    t.store(r.plan, t.index(kPlanSlotFirst), 0, slots.slotFirst);
    t.store(r.plan, t.index(kPlanSlotCount), 0,
            selectLess(slots.slotExpert, none, slots.slotCount, t.constant(0.0f)));
    t.store(r.plan, t.index(kPlanPairRow), 0, gather(slots.placeRow, place.indices));
  });
}

void monodc::stages::addRoutedTokens(Launch &l, const RoutedExpertRegions &r) {
  // MXFP8r(x) once a token; routed.xr copies it to each of the token's
  // places. It needs only x, so it runs beside the routing and the plan
  // (quantized at each place instead, rows x top-k quantizations that give
  // only rows distinct codes would hold the CTAs after the plan).
  addMxfp8Rows(l, "routed.xq", r.x, r.tokenCodes, r.tokenScales, Mxfp8Flavour::Routed);
}

void monodc::stages::addRoutedInput(Launch &l, const ModelConfig &c, const RoutedExpertRegions &r) {
  // Each place's token's MXFP8r(x), so that a slot's tokens are consecutive
  // rows: a copy (codes and scales go through f32 exactly).
  l.stage("routed.xr", r.plan.cols(), [&](Task &t) {
    Index pair = t.toIndex(t.load(r.plan, t.index(kPlanPairAtPlace), t.id(), 1));
    Index token = pair / c.topK;
    t.store(r.xCodes, t.id(), 0, t.loadRow(r.tokenCodes, token));
    t.store(r.xScales, t.id(), 0, t.loadRow(r.tokenScales, token));
  });
}

namespace {
// w13 interleaves gate and up in 16-row tiles; a routed.ug task takes four of
// each (128 weight rows: with 64, each task's wait, token staging and publish
// are paid twice as often for the same weight bytes). The
// per-rank intermediate is padded to a multiple of 128 (docs/numerics.md), so a
// slot's 64-column parts tile it, and each part is two whole MXFP8 blocks of
// h.
constexpr int64_t kGateUpTile = 16;
constexpr int64_t kGateUpPart = kGateUpTile * 4;
constexpr int64_t kDownRows = 256; // w2 rows a routed.down task: one a thread

// A slot's expert, first place and count. A slot past the last has count 0
// (its GEMVs read nothing) and expert -1, taken as 0 so that its weight row
// stays an address inside the weights.
struct Slot {
  Index expert, first, count;
};
Slot slotOf(Task &t, const RoutedExpertRegions &r, Index s) {
  Tile expert = max(t.load(r.plan, t.index(kPlanSlotExpert), s, 1), t.constant(0.0f));
  return Slot{t.toIndex(expert), t.toIndex(t.load(r.plan, t.index(kPlanSlotFirst), s, 1)),
              t.toIndex(t.load(r.plan, t.index(kPlanSlotCount), s, 1))};
}
} // namespace

void monodc::stages::addRoutedGateUp(Launch &l, const ModelConfig &c, int64_t inter,
                                     const RoutedExpertRegions &r) {
  constexpr int64_t G = kRoutedGroup;
  // One task a (slot, 64 intermediate columns): four of the expert's gate
  // tiles, each with the up tile after it, for the slot's tokens together.
  // Used slots come first, so tasks of empty slots are claimed last, and
  // skip their work (routed.down reads none of their rows: its GEMV is
  // counted by the same plan word). The first empty slot's task skips
  // every later one (a large share of the tasks at rows 48): a CTA that
  // claims one publishes the rest's flags and leaves, instead of claiming,
  // skipping and publishing the empty tasks one at a time.
  const int64_t parts = inter / kGateUpPart;
  l.stage("routed.ug", r.plan.cols() * parts, [&](Task &t) {
    Index s = t.id() / parts, part = t.id() % parts;
    Slot slot = slotOf(t, r, s);
    t.skipUnless(slot.count, SkipScope::ThisAndLaterTasks);
    Tile gu = t.gemvRows(r.w13, r.w13Scales, slot.expert * (2 * inter) + part * (2 * kGateUpPart),
                         2 * kGateUpPart, r.xCodes, r.xScales, slot.first, G, slot.count);
    // Token-major [G][gate 16, up 16, ... x4]: the gate tiles of every token,
    // then the up tiles.
    Tile g = min(gu.slice(0, G * kGateUpPart, 2 * kGateUpTile, kGateUpTile),
                 t.constant(c.swigluLimit));
    Tile u = max(min(gu.slice(kGateUpTile, G * kGateUpPart, 2 * kGateUpTile, kGateUpTile),
                     t.constant(c.swigluLimit)),
                 t.constant(-c.swigluLimit));
    Tile act = (g * sigmoid(g) * u).to(bf16);
    Mxfp8Tile q = t.quantizeMxfp8(act.to(f32), Mxfp8Flavour::Routed);
    t.storeRows(r.hCodes, s * G, part * kGateUpPart, G, q.codes);
    t.storeRows(r.hScales, s * G, part * (kGateUpPart / 32), G, q.scales);
  }, /*dynamic=*/true);
}

void monodc::stages::addRoutedDown(Launch &l, const ModelConfig &c, const RoutedExpertRegions &r) {
  constexpr int64_t G = kRoutedGroup;
  const int64_t h = c.hidden, blocks = h / kDownRows;
  l.stage("routed.down", r.plan.cols() * blocks, [&](Task &t) {
    Index s = t.id() / blocks, block = t.id() % blocks;
    Slot slot = slotOf(t, r, s);
    t.skipUnless(slot.count, SkipScope::ThisAndLaterTasks);
    Tile d = t.gemvRows(r.w2, r.w2Scales, slot.expert * h + block * kDownRows, kDownRows,
                        r.hCodes, r.hScales, s * G, G, slot.count);
    // Only the slot's tokens: the rest would write every empty slot's rows.
    t.storeRows(r.down, s * G, block * kDownRows, G, d, slot.count);
  }, /*dynamic=*/true);
}

void monodc::stages::addRoutedCombine(Launch &l, const ModelConfig &c,
                                      const RoutedExpertRegions &r) {
  const int64_t topK = c.topK;
  // o_k = bf16(d_k w_k) summed in f32 in pick order and rounded once
  // (vLLM's moe_sum), then + the shared expert; a task a (token, column
  // slice): the sum is per column, and slices keep the unrolled code small
  // (a whole row is 20 registers a thread per value).
  const int64_t width = c.seamSlice, slices = c.seamSlices();
  l.stage("routed.combine", l.options().rows * slices, [&](Task &t) {
    Index token = t.id() / slices;
    Index col = (t.id() % slices) * width;
    Tile routed = t.constant(0.0f, width);
    for (int64_t k = 0; k < topK; ++k) {
      Index row = t.toIndex(t.load(r.plan, t.index(kPlanPairRow), token * topK + t.index(k), 1));
      Tile d = t.load(r.down, row, col, width);
      Tile w = t.load(r.weights, token, k, 1);
      routed = routed + (d * w).to(bf16).to(f32);
    }
    Tile shared = t.load(r.shared, token, col, width).to(f32);
    t.store(r.out, token, col, (routed.to(bf16).to(f32) + shared).to(bf16));
  });
}
