//===- Moe.cpp - MoE router, routing and the shared expert ----------------===//
#include "monodc/stages/Moe.h"

using namespace monodc::dsl;
using namespace monodc::stages;

namespace {
/// Weight rows per GEMV task: 16 divides every width here and the block.
constexpr int64_t kRowsPerTask = 16;
} // namespace

void monodc::stages::addRouter(Launch &l, const ModelConfig &c, const RouterRegions &r) {
  const int64_t tokens = l.options().rows;
  // z = x . gate^T in f32, every token per weight slice.
  l.stage("moe.router", c.experts / kRowsPerTask, [&](Task &t) {
    Index first = t.id() * kRowsPerTask;
    t.storeRows(r.logits, t.index(0), first, tokens,
                t.gemvRows(r.gate, first, kRowsPerTask, r.x, t.index(0), tokens));
  });
  // s = sqrt(softplus(z)) (NaN -> 0); top-k of s + bias, lower index first
  // on ties; w = scaling * s_k / max(sum of the chosen s, 1e-20).
  l.stage("moe.route", tokens, [&](Task &t) {
    Tile z = t.loadRow(r.logits, t.id());
    Tile softplus = selectGreater(z, t.constant(20.0f), z, log(exp(z) + 1.0f));
    Tile score = replaceNan(sqrt(softplus), 0.0f);
    TopK top = topk(score + t.loadRow(r.bias, t.index(0)), c.topK);
    Tile chosen = gather(score, top.indices);
    Tile total = max(sum(chosen), t.constant(1e-20f));
    t.store(r.indices, t.id(), 0, top.indices);
    t.store(r.weights, t.id(), 0, chosen * c.routedScaling / total);
  });
}

void monodc::stages::addSharedExpert(Launch &l, const ModelConfig &c, int64_t intermediate,
                                     const SharedExpertRegions &r) {
  const int64_t tokens = l.options().rows;
  // gs, us = bf16(MXFP8(x) . W1s^T), bf16(MXFP8(x) . W3s^T).
  l.stage("shared.gate_up", 2 * intermediate / kRowsPerTask, [&](Task &t) {
    Index first = t.id() * kRowsPerTask;
    Tile out = t.gemvRows(r.gateUp, r.gateUpScale, first, kRowsPerTask, r.codes, r.scales,
                          t.index(0), tokens);
    t.storeRows(r.gateUpOut, t.index(0), first, tokens, out.to(bf16));
  });
  // h = bf16(bf16(g' / (1 + e^-g')) * clamp(u, -limit, limit)), g' = min(g, limit),
  // then MXFP8(h) for the down projection.
  l.stage("shared.act", tokens, [&](Task &t) {
    Tile g = min(t.load(r.gateUpOut, t.id(), 0, intermediate).to(f32), t.constant(c.swigluLimit));
    Tile u = t.load(r.gateUpOut, t.id(), intermediate, intermediate).to(f32);
    u = max(min(u, t.constant(c.swigluLimit)), t.constant(-c.swigluLimit));
    Tile silu = (g / (exp(-g) + 1.0f)).to(bf16).to(f32);
    Tile h = (silu * u).to(bf16);
    Mxfp8Tile q = t.quantizeMxfp8(h.to(f32));
    t.store(r.hCodes, t.id(), 0, q.codes);
    t.store(r.hScales, t.id(), 0, q.scales);
  });
  // ds = bf16(MXFP8(h) . W2s^T).
  l.stage("shared.down", c.hidden / kRowsPerTask, [&](Task &t) {
    Index first = t.id() * kRowsPerTask;
    Tile out = t.gemvRows(r.down, r.downScale, first, kRowsPerTask, r.hCodes, r.hScales,
                          t.index(0), tokens);
    t.storeRows(r.out, t.index(0), first, tokens, out.to(bf16));
  });
}
