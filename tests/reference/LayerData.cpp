// Random layer weights and step inputs (see LayerData.h).
#include "monodc/reference/LayerData.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "monodc/reference/RandomValues.h"

namespace monodc::reference {
namespace {

constexpr int kWindowPages = 5;  // pages a 128-key window spans at most

// [n][k] e4m3 in 32x32 blocks of normal values.
BlockScaledE4m3 normalBlockE4m3(std::mt19937& rng, int n, int k, float stddev) {
  return quantizeBlockE4m3(normalValues(rng, size_t(n) * k, 0.0f, stddev), n, k);
}

// One expert's [n][k] MXFP4 weight: uniform codes, each 32-group's scale one
// of the three powers of two nearest stddev / rms(codes).
Mxfp4Weights randomMxfp4(std::mt19937_64& rng, int n, int k, double stddev) {
  double squares = 0.0;
  for (int c = 0; c < 16; ++c)
    squares += double(formats::e2m1Value(uint8_t(c))) * formats::e2m1Value(uint8_t(c));
  const int center = 127 + int(std::lround(std::log2(stddev / std::sqrt(squares / 16))));
  Mxfp4Weights w{std::vector<uint8_t>(size_t(n) * k),
                 std::vector<uint8_t>(size_t(n) * k / formats::kMxGroupSize), 1, n, k};
  for (size_t i = 0; i < w.codes.size(); i += 16) {
    const uint64_t bits = rng();
    for (size_t j = 0; j < 16; ++j) w.codes[i + j] = uint8_t((bits >> (4 * j)) & 15);
  }
  std::uniform_int_distribution<int> step(-1, 1);
  for (uint8_t& s : w.scales) s = uint8_t(center + step(rng));
  return w;
}

// The physical page of each logical page 0 .. position / pageTokens of token
// t's request (see randomStep).
std::vector<int> blockTable(const LayerDims& d, int rows, int t, int position) {
  const int own = std::min(kWindowPages, d.cachePages / rows);
  if (own < 1) throw std::invalid_argument("randomStep: fewer cache pages than tokens");
  const int unowned = own * rows < d.cachePages ? own * rows : 0;
  const int newest = position / d.pageTokens;
  std::vector<int> table;
  for (int j = 0; j <= newest; ++j)
    table.push_back(newest - j < own
                        ? own * t + j % own
                        : unowned + (kWindowPages * t + newest - j) % (d.cachePages - unowned));
  return table;
}

}  // namespace

std::vector<float> ropeTable(int ropeDim, int positions) {
  const int half = ropeDim / 2;
  std::vector<float> table(size_t(positions) * ropeDim);
  for (int p = 0; p < positions; ++p)
    for (int j = 0; j < half; ++j) {
      const double angle = p * std::pow(10000.0, -2.0 * j / ropeDim);
      table[size_t(p) * ropeDim + j] = float(std::cos(angle));
      table[size_t(p) * ropeDim + half + j] = float(std::sin(angle));
    }
  return table;
}

KvCache randomKvCache(const KvRecordLayout& layout, int pages, std::mt19937& rng) {
  KvCache cache = makeKvCache(layout, pages);
  const int slots = pages * layout.pageTokens;
  std::vector<int> all(slots);
  std::iota(all.begin(), all.end(), 0);
  insertKv(cache, normalValues(rng, size_t(slots) * layout.headDim(), 0.0f, 1.0f, true), slots,
           all);
  return cache;
}

LayerWeights randomLayerWeights(const LayerDims& d, unsigned seed) {
  std::mt19937 rng(seed);
  const int h = d.hidden, flat = 4 * h, heads = d.headsPerRank;
  const int groups = heads / d.headsPerGroup, width = d.headsPerGroup * d.headDim;
  const int lowRank = groups * d.groupRank;
  LayerWeights w;
  auto seam = [&](std::vector<float>& fn, std::vector<float>& base, std::vector<float>& scale,
                  std::vector<float>& norm) {
    fn = normalValues(rng, size_t(24) * flat, 0.0f, 1.0f / std::sqrt(float(flat)));
    base = normalValues(rng, 24, 0.0f, 0.5f);
    scale = {0.5f, 0.5f, 1.0f};
    norm = normalValues(rng, h, 1.0f, 0.1f, true);
  };
  seam(w.attnFn, w.attnBase, w.attnScale, w.attnNorm);
  seam(w.ffnFn, w.ffnBase, w.ffnScale, w.ffnNorm);
  w.qNorm = normalValues(rng, d.qRank, 1.0f, 0.1f, true);
  w.kvNorm = normalValues(rng, d.headDim, 1.0f, 0.1f, true);
  w.cosSin = ropeTable(d.ropeDim, d.ropePositions);
  w.gate = normalValues(rng, size_t(d.experts) * h, 0.0f, 2.0f / std::sqrt(float(h)), true);
  w.bias = normalValues(rng, d.experts, 0.0f, 0.1f);
  w.wqkv = normalBlockE4m3(rng, d.qkvWidth(), h, 0.02f);
  for (int r = 0; r < d.tp; ++r) {
    RankWeights rw;
    rw.wqb = normalBlockE4m3(rng, heads * d.headDim, d.qRank, 1.0f / std::sqrt(float(d.qRank)));
    rw.sinks = normalValues(rng, heads, 0.0f, 1.0f);
    rw.woA = normalBlockE4m3(rng, lowRank, width, 1.0f / std::sqrt(float(width)));
    rw.woB = normalBlockE4m3(rng, h, lowRank, 1.0f / std::sqrt(float(lowRank)));
    rw.sharedGateUp = normalBlockE4m3(rng, 2 * d.sharedPerRank, h, 2.0f / std::sqrt(float(h)));
    rw.sharedDown =
        normalBlockE4m3(rng, h, d.sharedPerRank, 1.0f / std::sqrt(float(d.sharedPerRank)));
    w.ranks.push_back(std::move(rw));
  }
  return w;
}

ExpertWeights randomExpert(const LayerDims& d, unsigned seed, int rank, int expert) {
  std::seed_seq seeds{seed, unsigned(rank), unsigned(expert)};
  std::mt19937_64 rng(seeds);
  const int h = d.hidden, routed = d.routedPerRank;
  ExpertWeights e;
  e.w13 = randomMxfp4(rng, 2 * routed, h, 2.0 / std::sqrt(double(h)));
  e.w2 = randomMxfp4(rng, h, routed, 1.0 / std::sqrt(double(routed)));
  return e;
}

ExpertSource randomExperts(const LayerDims& dims, unsigned seed) {
  return [dims, seed](int rank, int expert) { return randomExpert(dims, seed, rank, expert); };
}

StepInputs randomStep(const LayerDims& d, int rows, unsigned seed, int compressRatio) {
  std::mt19937 rng(seed);
  const int h = d.hidden, pt = d.pageTokens, tablePages = d.tablePages();
  StepInputs in;
  in.rows = rows;
  in.residual = normalValues(rng, size_t(rows) * 4 * h, 0.0f, 1.0f, true);
  in.x = normalValues(rng, size_t(rows) * h, 0.0f, 1.0f, true);
  in.post = uniformValues(rng, size_t(rows) * 4, 0.2f, 1.8f);
  in.comb = uniformValues(rng, size_t(rows) * 16, 0.0f, 0.5f);
  in.pre = uniformValues(rng, size_t(rows) * 4, 0.1f, 1.0f);
  in.window = randomKvCache(d.kvLayout(), d.cachePages, rng);
  in.compressed = randomKvCache(d.kvLayout(), d.cachePages, rng);
  std::uniform_int_distribution<int> position(1, d.ropePositions - 1);
  std::uniform_int_distribution<int> anyPage(0, d.cachePages - 1);
  for (int t = 0; t < rows; ++t) {
    const int p = t == 0 ? 0 : position(rng);
    std::vector<int> table = blockTable(d, rows, t, p);
    in.positions.push_back(float(p));
    in.slots.push_back(float(table[p / pt] * pt + p % pt));
    // Logical pages past the position name real pages: a read through them
    // would take a wrong key, not a masked one.
    while (int(table.size()) < tablePages) table.push_back(anyPage(rng));
    for (int page : table) in.blockTables.push_back(float(page));
  }
  randomCompressedKeys(d, in, compressRatio, rng);
  return in;
}

void randomCompressedKeys(const LayerDims& d, StepInputs& in, int compressRatio,
                          std::mt19937& rng) {
  std::uniform_int_distribution<int> anyPage(0, d.cachePages - 1);
  std::uniform_int_distribution<int> sixteenth(0, 15);
  in.compressRatio = compressRatio;
  in.compressedBlockTables.clear();
  in.topk.clear();
  for (int t = 0; t < in.rows; ++t) {
    const int p = std::max(int(in.positions[t]), 0);
    for (int j = 0; j < d.tablePages(); ++j) in.compressedBlockTables.push_back(float(anyPage(rng)));
    // The first n_c entries name rows written so far (a sixteenth of them
    // -1, as the index source masks); the rest -1.
    const int written = compressRatio == 0 ? 0 : (p + 1) / compressRatio;
    const int count = compressedKeyCount(p, compressRatio, d.compressedKeys);
    std::uniform_int_distribution<int> anyRow(0, std::max(written - 1, 0));
    for (int j = 0; j < d.compressedKeys; ++j)
      in.topk.push_back(j < count && sixteenth(rng) != 0 ? float(anyRow(rng)) : -1.0f);
  }
}

StepInputs padStep(const StepInputs& real, const std::vector<int>& padAt, float garbage,
                   bool marked) {
  const int rows = real.rows + int(padAt.size());
  auto isPad = [&](int r) { return std::find(padAt.begin(), padAt.end(), r) != padAt.end(); };
  StepInputs in = real;
  in.rows = rows;
  auto spread = [&](const std::vector<float>& from, std::vector<float>& to, float pad) {
    const size_t width = from.size() / size_t(real.rows);
    to.clear();
    for (int r = 0, source = 0; r < rows; ++r) {
      if (isPad(r)) {
        to.insert(to.end(), width, pad);
        continue;
      }
      to.insert(to.end(), from.begin() + source * width, from.begin() + (source + 1) * width);
      ++source;
    }
  };
  spread(real.residual, in.residual, garbage);
  spread(real.x, in.x, garbage);
  spread(real.post, in.post, garbage);
  spread(real.comb, in.comb, garbage);
  spread(real.pre, in.pre, garbage);
  // An unmarked row inserts its key at a slot no real row uses or reads
  // (the last one of the cache) and rotates by position 1.
  const float lastSlot = float(real.window.pages * real.window.layout.pageTokens - 1);
  spread(real.positions, in.positions, marked ? -1.0f : 1.0f);
  spread(real.slots, in.slots, marked ? -1.0f : lastSlot);
  // Real pages and rows: a pad row that read through them would get a
  // finite, non-zero o.
  spread(real.blockTables, in.blockTables, 0.0f);
  spread(real.compressedBlockTables, in.compressedBlockTables, 1.0f);
  spread(real.topk, in.topk, 3.0f);
  return in;
}

}  // namespace monodc::reference
