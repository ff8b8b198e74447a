// The KV record, the KV insert and the attention back of one rank (docs/numerics.md
// section 4), written from the contract in double precision.
//
// Every shape is a parameter, so the real config (head dim 512 = 448 nope + 64
// rope, 8 heads a group, group rank 1024) and tiny ones (e.g. 64 + 64, 2 heads
// a group, rank 128) run the same code.
//
// Roundings, in order (nothing else is rounded; sums accumulate in double):
//   1. o_h = bf16(sum_k e^(s_k - m) k_k / Z): one rounding, straight from double.
//   2. Inverse RoPE of dims nope.. of the bf16 o, computed in double and rounded
//      once to f32, NOT to bf16: docs/numerics.md 4.3 says f32, and vLLM's mono combine
//      (vllm/models/deepseek_v41/amd/mono/attention/back.py, stage_combine)
//      rounds o to bf16 first, rotates those bf16 values in f32 and feeds the
//      f32 result straight into MXFP8.
//   3. z_g = bf16(MXFP8(rotated o_g) . wo_a[g]^T).
//   4. partial = bf16(MXFP8(z) . wo_b^T).
// The mono kernel also rounds p and the per-chunk partials to bf16 inside the
// split-K; the contract does not, so neither does this reference.
#pragma once

#include <cstdint>
#include <vector>

#include "monodc/reference/Reference.h"

namespace monodc::reference {

// ---------------------------------------------------------------- KV record

// The fp8_ds_mla record: data = nope dims in e4m3 (a UE8M0 scale per 64 dims),
// then the rope dims as little-endian bf16; 8 scale bytes (unused ones 0).
// A page of pageTokens records is [pageTokens x data][pageTokens x 8 scales].
struct KvRecordLayout {
  static constexpr int kGroupDims = 64;
  static constexpr int kScaleBytes = 8;  // at most 7 groups: byte 7 is always 0
  int nope = 448;
  int rope = 64;
  int pageTokens = 32;

  int headDim() const { return nope + rope; }
  int dataBytes() const { return nope + 2 * rope; }              // 576 for 448 + 64
  int recordBytes() const { return dataBytes() + kScaleBytes; }  // 584
  int pageBytes() const { return pageTokens * recordBytes(); }
};

// One key row (headDim bf16 values, rope dims already rotated) as dataBytes()
// data bytes followed by the 8 scale bytes. Per 64-dim group:
// e = ceil(log2(max(amax, 1e-4) / 448)) (exact), byte = e4m3(clamp(x 2^-e,
// +-448)), scale = clamp(e + 127, 0, 255).
std::vector<uint8_t> encodeKvRecord(const KvRecordLayout& layout, const std::vector<float>& k);

// A record's values: e4m3 * 2^(scale - 127) for the nope dims, bf16 for the
// rope dims. Exact in double.
std::vector<double> decodeKvRecord(const KvRecordLayout& layout,
                                   const std::vector<uint8_t>& record);

// A paged cache of records: bytes [pages][layout.pageBytes()].
struct KvCache {
  KvRecordLayout layout;
  int pages = 0;
  std::vector<uint8_t> bytes;
};
KvCache makeKvCache(const KvRecordLayout& layout, int pages);  // zero-filled

// Writes rows of k ([rows][headDim]) at their slots: slot s -> page s / B,
// record s % B; slot -1 (a pad row) is skipped. Any other slot outside
// [0, pages * B) throws std::invalid_argument before anything is written.
void insertKv(KvCache& cache, const std::vector<float>& k, int rows,
              const std::vector<int>& slotMapping);

// The dequantized record at a slot (see decodeKvRecord).
std::vector<double> decodeKvRow(const KvCache& cache, int slot);

// ---------------------------------------------------------------- key lists

// Window slots of a token at position p: positions max(0, p - window + 1)..p,
// position j at blockTable[j / pageTokens] * pageTokens + j % pageTokens.
std::vector<int> windowKeySlots(int position, const std::vector<int>& blockTable,
                                int pageTokens = 32, int window = 128);

// n_c = min((p + 1) div ratio, topK); 0 for ratio 0 (window-only layers).
int compressedKeyCount(int position, int ratio, int topK = 512);

// The first count entries of a token's top-k list (local compressed rows)
// as slots through the request's compressed block table; -1 stays -1.
std::vector<int> compressedKeySlots(const std::vector<int>& topk, int count,
                                    const std::vector<int>& blockTable, int pageTokens);

// One token's keys (-1 = masked). compressedSlots index the compressed cache.
struct TokenKeys {
  std::vector<int> windowSlots;
  std::vector<int> compressedSlots;
};

// The dequantized unmasked keys: compressed rows first, then window rows.
// compressed may be null when keys.compressedSlots has no unmasked entry.
std::vector<std::vector<double>> gatherKeys(const KvCache& window, const KvCache* compressed,
                                            const TokenKeys& keys);

// ---------------------------------------------------------------- softmax . V

// o before rounding, [heads][headDim]: s_k = (q_h . k_k) / sqrt(headDim),
// m = max(max s, sink_h), Z = e^(sink_h - m) + sum e^(s_k - m),
// o_h = sum e^(s_k - m) k_k / Z (V = K). No keys: o = 0 (the sink alone).
// q holds bf16 values [heads][headDim]; sinks [heads].
std::vector<double> attentionOnePass(const std::vector<float>& q, const std::vector<float>& sinks,
                                     int heads, const std::vector<std::vector<double>>& keys);

// A split-K chunk's state per head, in base 2 (t = s log2(e)):
// m = max t (-inf when empty), l = sum 2^(t - m), p = sum 2^(t - m) k.
struct SplitKPartial {
  std::vector<double> m;  // [heads]
  std::vector<double> l;  // [heads]
  std::vector<double> p;  // [heads][headDim]
};
SplitKPartial attentionChunk(const std::vector<float>& q, int heads,
                             const std::vector<std::vector<double>>& keys, size_t begin,
                             size_t end);

// The chunks merged with the sink folded in: o before rounding, as
// attentionOnePass gives it.
std::vector<double> combineChunks(const std::vector<SplitKPartial>& chunks,
                                  const std::vector<float>& sinks, int heads, int headDim);

// ---------------------------------------------------------------- output side

// Inverse RoPE of dims [dim - ropeDim, dim) of every row at one position:
// e' = e c + o s, o' = o c - e s (c = cosSin[p][j], s = cosSin[p][ropeDim/2 + j])
// in double, rounded once to f32; the other dims unchanged.
std::vector<float> inverseRope(const std::vector<float>& o, int rows, int dim, int ropeDim,
                               const std::vector<float>& cosSin, int position);

// z[g][r] = bf16(MXFP8(x_g) . woA[g * groupRank + r]^T) for each group g of
// headsPerGroup heads (x_g = x[g * width .. (g + 1) * width), width =
// headsPerGroup * headDim). woA is [groups * groupRank][width].
std::vector<float> groupedLowRank(const std::vector<float>& x, int heads, int headDim,
                                  int headsPerGroup, int groupRank, const BlockScaledE4m3& woA);

// partial = bf16(MXFP8(z) . woB^T), woB [hidden][z.size()].
std::vector<float> outputPartial(const std::vector<float>& z, const BlockScaledE4m3& woB);

struct AttentionBackWeights {
  std::vector<float> sinks;  // [heads]
  BlockScaledE4m3 woA;       // [groups * groupRank][headsPerGroup * headDim]
  BlockScaledE4m3 woB;       // [hidden][groups * groupRank]
  int headsPerGroup = 8;
  int groupRank = 1024;
};

// Each stage's output, for stage-by-stage comparisons.
struct AttentionBackResult {
  std::vector<float> o;        // bf16 [heads][headDim]
  std::vector<float> rotated;  // f32 after the inverse RoPE
  std::vector<float> z;        // bf16 [groups * groupRank]
  std::vector<float> partial;  // bf16 [hidden]: this rank's share before the all-reduce
};

// The back (K2) of one token at position p with its rotated bf16 q
// [heads][window.layout.headDim()].
AttentionBackResult attentionBack(const std::vector<float>& q, int heads, int position,
                                  const std::vector<float>& cosSin, const KvCache& window,
                                  const KvCache* compressed, const TokenKeys& keys,
                                  const AttentionBackWeights& weights);

}  // namespace monodc::reference
