// The reference decode layer, composed from the stages (see Layer.h).
#include "monodc/reference/Layer.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace monodc::reference {
namespace {

using formats::Mxfp8Variant;

// body(0) .. body(n - 1) on host threads, each index once; the first
// exception a body throws is rethrown here after all have stopped.
void forEachParallel(size_t n, const std::function<void(size_t)>& body) {
  const size_t threads = std::min<size_t>(n, std::max(1u, std::thread::hardware_concurrency()));
  std::atomic<size_t> next{0};
  std::exception_ptr failure;
  std::mutex failureMutex;
  auto work = [&] {
    for (size_t i = next++; i < n; i = next++) {
      try {
        body(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(failureMutex);
        if (!failure) failure = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
}

std::vector<float> slice(const std::vector<float>& v, size_t begin, size_t count) {
  return {v.begin() + begin, v.begin() + begin + count};
}

void place(std::vector<float>& into, size_t at, const std::vector<float>& values) {
  std::copy(values.begin(), values.end(), into.begin() + at);
}

}  // namespace

TokenKeys tokenKeys(const LayerDims& d, const StepInputs& in, int t) {
  const int p = int(in.positions[t]), pt = d.pageTokens, pages = d.tablePages();
  auto row = [&](const std::vector<float>& values, int width) {
    return std::vector<int>(values.begin() + size_t(t) * width,
                            values.begin() + size_t(t + 1) * width);
  };
  // A slot outside the cache (a block-table entry naming no page) is masked.
  auto inCache = [&](std::vector<int> slots, int keys) {
    for (int& s : slots)
      if (s < 0 || s >= d.cachePages * pt) s = -1;
    slots.resize(size_t(keys), -1);
    return slots;
  };
  TokenKeys keys;
  keys.windowSlots =
      inCache(windowKeySlots(p, row(in.blockTables, pages), pt, d.windowKeys), d.windowKeys);
  const int written = in.compressRatio == 0 ? 0 : (p + 1) / in.compressRatio;
  std::vector<int> topk = row(in.topk, d.compressedKeys);
  for (int& i : topk)
    if (i < 0 || i >= written) i = -1;
  keys.compressedSlots = inCache(
      compressedKeySlots(topk, compressedKeyCount(p, in.compressRatio, d.compressedKeys),
                         row(in.compressedBlockTables, pages), pt),
      d.compressedKeys);
  return keys;
}

std::vector<int> selectedExperts(const Routing& routing) {
  std::vector<int> experts(routing.indices);
  std::sort(experts.begin(), experts.end());
  experts.erase(std::unique(experts.begin(), experts.end()), experts.end());
  return experts;
}

LayerOutputs referenceFfnHalf(const LayerDims& d, const LayerWeights& w,
                              const ExpertSource& experts, int rows,
                              const std::vector<float>& residual, const std::vector<float>& attnOut,
                              const std::vector<float>& post, const std::vector<float>& comb,
                              const std::vector<float>& pre) {
  const int h = d.hidden, tp = int(w.ranks.size()), k = d.topK;
  MhcOutputs seam = mhcSeam(
      {rows, h, residual, attnOut, post, comb, pre, w.ffnFn, w.ffnBase, w.ffnScale, w.ffnNorm});
  Routing routing = route(routerLogits(seam.y, w.gate, rows, h, d.experts), w.bias, rows, d.experts,
                          k, d.routedScaling);
  // The shared expert, a (token, rank) at a time.
  std::vector<std::vector<float>> shared(tp, std::vector<float>(size_t(rows) * h));
  forEachParallel(size_t(rows) * tp, [&](size_t i) {
    const int t = int(i / tp), r = int(i % tp);
    const Mxfp8Tensor xs =
        quantizeMxfp8Rows(slice(seam.y, size_t(t) * h, h), 1, h, Mxfp8Variant::Standard);
    place(shared[r], size_t(t) * h,
          sharedExpert(xs, w.ranks[r].sharedGateUp, w.ranks[r].sharedDown, d.sharedPerRank,
                       d.swigluLimit));
  });
  // The routed experts, a (rank, expert) at a time: the expert's output for
  // every (token, slot) that chose it, then each token's sum in slot order.
  const std::vector<int> chosen = selectedExperts(routing);
  std::vector<std::vector<float>> downs(tp, std::vector<float>(size_t(rows) * k * h));
  forEachParallel(size_t(tp) * chosen.size(), [&](size_t i) {
    const int r = int(i / chosen.size()), expert = chosen[i % chosen.size()];
    const ExpertWeights ew = experts(r, expert);
    for (size_t slot = 0; slot < routing.indices.size(); ++slot) {
      if (routing.indices[slot] != expert) continue;
      const std::vector<float> token = slice(seam.y, slot / k * h, h);
      place(downs[r], slot * h, routedExpert(token, ew.w13, ew.w2, 0, d.swigluLimit).down);
    }
  });
  std::vector<std::vector<float>> partials;
  for (int r = 0; r < tp; ++r)
    partials.push_back(combineRoutedExperts(downs[r], rows, h, routing, shared[r]));
  LayerOutputs out;
  out.x = allReduce(partials);
  out.residual = std::move(seam.residual);
  out.pre = std::move(seam.pre);
  out.post = std::move(seam.post);
  out.comb = std::move(seam.comb);
  out.y = std::move(seam.y);
  out.nearTie = routing.nearTie;
  out.routing = std::move(routing);
  return out;
}

AttentionHalf referenceAttentionHalf(const LayerDims& d, const LayerWeights& w,
                                     const StepInputs& in) {
  const int rows = in.rows, h = d.hidden, dim = d.headDim, heads = d.headsPerRank;
  const int tp = int(w.ranks.size());
  MhcOutputs seam = mhcSeam({rows, h, in.residual, in.x, in.post, in.comb, in.pre, w.attnFn,
                             w.attnBase, w.attnScale, w.attnNorm});
  // The front, a token at a time: MXFP8(y) . wqkv, the q/kv norms, the key
  // RoPE; each rank's query MXFP8(qn) . wq_b with the RoPE on every head.
  std::vector<float> k(size_t(rows) * dim);
  std::vector<std::vector<float>> q(tp, std::vector<float>(size_t(rows) * heads * dim));
  forEachParallel(rows, [&](size_t t) {
    const std::vector<float> qkv = gemvMxfp8xE4m3(
        quantizeMxfp8Rows(slice(seam.y, t * h, h), 1, h, Mxfp8Variant::Standard), w.wqkv);
    const std::vector<float> qn = rmsNorm(slice(qkv, 0, d.qRank), 1, d.qRank, w.qNorm, d.normEps);
    const std::vector<float> kn = rmsNorm(slice(qkv, d.qRank, dim), 1, dim, w.kvNorm, d.normEps);
    place(k, t * dim, keyRope(kn, {in.positions[t]}, w.cosSin, 1, dim, d.ropeDim));
    const Mxfp8Tensor qnq = quantizeMxfp8Rows(qn, 1, d.qRank, Mxfp8Variant::Standard);
    const std::vector<float> headPositions(heads, in.positions[t]);
    for (int r = 0; r < tp; ++r)
      place(q[r], t * heads * dim,
            keyRope(gemvMxfp8xE4m3(qnq, w.ranks[r].wqb), headPositions, w.cosSin, heads, dim,
                    d.ropeDim));
  });
  // Every key goes in before any token's attention reads the cache.
  KvCache window = in.window;
  insertKv(window, k, rows, std::vector<int>(in.slots.begin(), in.slots.end()));
  // The back, a (token, rank) at a time: its heads, its wo_a and wo_b.
  std::vector<AttentionBackWeights> backs;
  for (const RankWeights& rw : w.ranks)
    backs.push_back({rw.sinks, rw.woA, rw.woB, d.headsPerGroup, d.groupRank});
  std::vector<std::vector<float>> partials(tp, std::vector<float>(size_t(rows) * h));
  forEachParallel(size_t(rows) * tp, [&](size_t i) {
    const int t = int(i / tp), r = int(i % tp);
    const AttentionBackResult result = attentionBack(
        slice(q[r], size_t(t) * heads * dim, size_t(heads) * dim), heads, int(in.positions[t]),
        w.cosSin, window, &in.compressed, tokenKeys(d, in, t), backs[r]);
    place(partials[r], size_t(t) * h, result.partial);
  });
  std::vector<float> attnOut = allReduce(partials);
  return {std::move(seam), std::move(partials), std::move(attnOut)};
}

void handOver(StepInputs& next, const LayerOutputs& out) {
  next.residual = out.residual;
  next.x = out.x;
  next.post = out.post;
  next.comb = out.comb;
  next.pre = out.pre;
}

LayerOutputs referenceLayer(const LayerDims& d, const LayerWeights& w, const ExpertSource& experts,
                            const StepInputs& in) {
  AttentionHalf attention = referenceAttentionHalf(d, w, in);
  const MhcOutputs& seam = attention.seam;
  LayerOutputs out = referenceFfnHalf(d, w, experts, in.rows, seam.residual, attention.attnOut,
                                      seam.post, seam.comb, seam.pre);
  out.attnSeam = std::move(attention.seam);
  out.attnOut = std::move(attention.attnOut);
  return out;
}

}  // namespace monodc::reference
