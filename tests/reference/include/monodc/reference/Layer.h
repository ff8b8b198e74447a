// A whole decode layer composed from the reference's stages (docs/numerics.md
// sections 3-5) on every TP rank: the attention seam, the front (the key
// inserted into the window cache), the attention back per rank, the
// all-reduce, the FFN seam, the router, the shared and the routed experts per
// rank, the all-reduce. What K1 then K2 of every rank must produce.
//
// Tokens, (token, rank) pairs and (rank, expert) pairs are independent, so
// they run on host threads; each is the same computation as the whole batch
// (every stage is row-wise), so the results do not depend on the threads.
#pragma once

#include <functional>
#include <vector>

#include "monodc/reference/Attention.h"
#include "monodc/reference/Mhc.h"
#include "monodc/reference/Moe.h"

namespace monodc::reference {

// A layer's shapes (the model's, or a narrower config of the same structure)
// and one rank's share of them under TP. The last four are the contract's
// constants, the same for every config.
struct LayerDims {
  int hidden = 0;
  int tp = 0;
  int headsPerRank = 0;
  int headDim = 0;  // = the kv latent (K = V)
  int ropeDim = 0;
  int qRank = 0;
  int headsPerGroup = 0;
  int groupRank = 0;
  int windowKeys = 0;
  int compressedKeys = 0;  // the index top-k
  int experts = 0;
  int topK = 0;
  int sharedPerRank = 0;
  int routedPerRank = 0;  // padded (docs/numerics.md section 1)
  int ropePositions = 0;  // rows of the cos/sin table
  int cachePages = 0;     // of the window and of the compressed cache
  int pageTokens = 32;
  double routedScaling = 1.5;
  double swigluLimit = 10.0;
  double normEps = 1e-20;

  int qkvWidth() const { return qRank + headDim; }
  int tablePages() const { return (ropePositions + pageTokens - 1) / pageTokens; }
  KvRecordLayout kvLayout() const { return {headDim - ropeDim, ropeDim, pageTokens}; }
};

// The weights one rank holds besides the replicated ones and the routed
// experts.
struct RankWeights {
  BlockScaledE4m3 wqb, woA, woB, sharedGateUp, sharedDown;
  std::vector<float> sinks;
};

struct LayerWeights {
  std::vector<float> attnFn, attnBase, attnScale, attnNorm;
  std::vector<float> ffnFn, ffnBase, ffnScale, ffnNorm;
  std::vector<float> qNorm, kvNorm, cosSin, gate, bias;
  BlockScaledE4m3 wqkv;
  std::vector<RankWeights> ranks;
};

// One routed expert's share on one rank: w13 [1][2I][H] (gate and up
// interleaved in 16-row tiles) and w2 [1][H][I].
struct ExpertWeights {
  Mxfp4Weights w13, w2;
};

// The routed experts' weights, an expert of a rank at a time: at full size
// they are gigabytes a rank, so the layer asks only for the experts its
// routing selects. Called from several threads at once.
using ExpertSource = std::function<ExpertWeights(int rank, int expert)>;

// One step's inputs (the same on every rank). Index inputs hold whole numbers
// as floats, as the launches read them.
struct StepInputs {
  int rows = 0;
  int compressRatio = 0;  // the layer's: 0 (window keys only), 1 or 2
  std::vector<float> residual, x, post, comb, pre;
  // As a serving engine holds them, as whole numbers: each row's position
  // and cache slot [rows] (-1: a pad row), its request's window-cache and
  // compressed-cache block tables [rows][tablePages], and the index source's
  // top-k list of compressed rows [rows][compressedKeys] (-1 masked).
  std::vector<float> positions, slots, blockTables, compressedBlockTables, topk;
  KvCache window, compressed;
};

// Row t's keys as the attention back finds them (docs/numerics.md section
// 4): the window through the block table, the first n_c top-k entries
// through the compressed block table; -1 where masked (past the position,
// an entry -1 or naming a compressed row not yet written, a block-table
// entry outside the cache). Each list padded with -1 to its key count.
TokenKeys tokenKeys(const LayerDims& dims, const StepInputs& in, int t);

// What a layer step produces (the same on every rank): x_out and the FFN
// seam's streams and gates, and per token whether its routing is a near-tie
// (docs/numerics.md section 6: excluded from comparisons after the router). The
// reference also gives the attention seam, the reduced attention output and
// the routing.
struct LayerOutputs {
  std::vector<float> x, residual, pre, post, comb;
  std::vector<float> y;  // the FFN seam's normed output, the MoE's input
  std::vector<bool> nearTie;
  MhcOutputs attnSeam;
  std::vector<float> attnOut;
  Routing routing;
};

// The next layer's streams: residual, x, post, comb and pre of `next`
// become this layer's outputs (a stack of layers hands them on).
void handOver(StepInputs& next, const LayerOutputs& out);

// The experts a routing selects, ascending, each once.
std::vector<int> selectedExperts(const Routing& routing);

LayerOutputs referenceLayer(const LayerDims& dims, const LayerWeights& weights,
                            const ExpertSource& experts, const StepInputs& in);

// The attention half of a layer: the attention seam, each rank's attention
// partial (what the FFN launch takes) and their all-reduce.
struct AttentionHalf {
  MhcOutputs seam;
  std::vector<std::vector<float>> partials;
  std::vector<float> attnOut;
};
AttentionHalf referenceAttentionHalf(const LayerDims& dims, const LayerWeights& weights,
                                     const StepInputs& in);

// The FFN half on the reduced attention output: seam, MoE per rank,
// all-reduce (attnSeam and attnOut of the result are left empty).
LayerOutputs referenceFfnHalf(const LayerDims& dims, const LayerWeights& weights,
                              const ExpertSource& experts, int rows,
                              const std::vector<float>& residual, const std::vector<float>& attnOut,
                              const std::vector<float>& post, const std::vector<float>& comb,
                              const std::vector<float>& pre);

}  // namespace monodc::reference
