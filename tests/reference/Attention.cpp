#include "monodc/reference/Attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <string>

namespace monodc::reference {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kLog2e = std::numbers::log2e_v<double>;
constexpr int kMx = static_cast<int>(formats::kMxGroupSize);

void require(bool condition, const char* function, const std::string& what) {
  if (!condition) throw std::invalid_argument(std::string(function) + ": " + what);
}

void checkLayout(const KvRecordLayout& layout, const char* function) {
  require(layout.nope >= 0 && layout.nope % KvRecordLayout::kGroupDims == 0 &&
              layout.nope / KvRecordLayout::kGroupDims < KvRecordLayout::kScaleBytes,
          function, "nope must be a multiple of 64, at most 448");
  require(layout.rope >= 0 && layout.rope % 2 == 0, function, "rope must be even");
  require(layout.pageTokens > 0, function, "pageTokens must be positive");
}

// The smallest e with a <= 448 * 2^e, a = max(amax, 1e-4): ceil(log2(a / 448))
// by exact comparisons (no division, no log2), so a power of two keeps its own
// exponent. Clamped so that e + 127 fits a byte.
int groupExponent(float amax) {
  const double a = std::max(static_cast<double>(amax), 1e-4);
  if (!std::isfinite(a)) return 128;
  int binary = 0;
  std::frexp(a, &binary);
  int e = binary - 9;  // 448 = 0.875 * 2^9: a first guess within one step
  while (std::ldexp(448.0, e) < a) ++e;
  while (std::ldexp(448.0, e - 1) >= a) --e;
  return std::clamp(e, -127, 128);
}

std::vector<uint8_t> recordAt(const KvCache& cache, int slot) {
  const KvRecordLayout& l = cache.layout;
  const size_t page = static_cast<size_t>(slot / l.pageTokens), i = slot % l.pageTokens;
  const size_t base = page * l.pageBytes();
  const auto data = cache.bytes.begin() + base + i * l.dataBytes();
  const auto scales = cache.bytes.begin() + base + size_t(l.pageTokens) * l.dataBytes() +
                      i * KvRecordLayout::kScaleBytes;
  std::vector<uint8_t> record(data, data + l.dataBytes());
  record.insert(record.end(), scales, scales + KvRecordLayout::kScaleBytes);
  return record;
}

void checkCache(const KvCache& cache, const char* function) {
  checkLayout(cache.layout, function);
  require(cache.pages >= 0 &&
              cache.bytes.size() == static_cast<size_t>(cache.pages) * cache.layout.pageBytes(),
          function, "cache is not pages x pageBytes");
}

double dot(const float* q, const std::vector<double>& k) {
  double sum = 0.0;
  for (size_t d = 0; d < k.size(); ++d) sum += static_cast<double>(q[d]) * k[d];
  return sum;
}

// Row r of an MXFP8 tensor, as a one-row tensor.
Mxfp8Tensor tensorRow(const Mxfp8Tensor& x, int r) {
  const size_t cols = x.cols, groups = cols / kMx;
  Mxfp8Tensor row{{x.codes.begin() + r * cols, x.codes.begin() + (r + 1) * cols},
                  {x.scales.begin() + r * groups, x.scales.begin() + (r + 1) * groups},
                  1,
                  x.cols};
  return row;
}

// Rows [first, first + count) of a block-scaled weight (multiples of 32).
BlockScaledE4m3 weightRows(const BlockScaledE4m3& w, int first, int count) {
  const size_t k = w.k, blockCols = k / kMx;
  BlockScaledE4m3 rows{{w.codes.begin() + first * k, w.codes.begin() + (first + count) * k},
                       {w.scales.begin() + first / kMx * blockCols,
                        w.scales.begin() + (first + count) / kMx * blockCols},
                       count,
                       w.k};
  return rows;
}

}  // namespace

// ---------------------------------------------------------------- KV record

std::vector<uint8_t> encodeKvRecord(const KvRecordLayout& layout, const std::vector<float>& k) {
  checkLayout(layout, "encodeKvRecord");
  require(k.size() == static_cast<size_t>(layout.headDim()), "encodeKvRecord",
          "k is not headDim wide");
  std::vector<uint8_t> record(layout.recordBytes(), 0);
  for (int g = 0; g < layout.nope / KvRecordLayout::kGroupDims; ++g) {
    const float* group = k.data() + g * KvRecordLayout::kGroupDims;
    float amax = 0.0f;
    for (int d = 0; d < KvRecordLayout::kGroupDims; ++d)
      if (std::fabs(group[d]) > amax) amax = std::fabs(group[d]);  // NaN never wins
    const int e = groupExponent(amax);
    for (int d = 0; d < KvRecordLayout::kGroupDims; ++d)  // e4m3Bits saturates to +-448
      record[g * KvRecordLayout::kGroupDims + d] = formats::e4m3Bits(std::ldexp(group[d], -e));
    record[layout.dataBytes() + g] = static_cast<uint8_t>(std::clamp(e + 127, 0, 255));
  }
  for (int j = 0; j < layout.rope; ++j) {
    const uint16_t bits = formats::bf16Bits(k[layout.nope + j]);
    record[layout.nope + 2 * j] = static_cast<uint8_t>(bits & 0xFF);
    record[layout.nope + 2 * j + 1] = static_cast<uint8_t>(bits >> 8);
  }
  return record;
}

std::vector<double> decodeKvRecord(const KvRecordLayout& layout,
                                   const std::vector<uint8_t>& record) {
  checkLayout(layout, "decodeKvRecord");
  require(record.size() == static_cast<size_t>(layout.recordBytes()), "decodeKvRecord",
          "record is not recordBytes long");
  std::vector<double> k(layout.headDim());
  for (int d = 0; d < layout.nope; ++d) {
    const int code = record[layout.dataBytes() + d / KvRecordLayout::kGroupDims];
    k[d] = static_cast<double>(formats::e4m3Value(record[d])) * std::ldexp(1.0, code - 127);
  }
  for (int j = 0; j < layout.rope; ++j) {
    const uint16_t bits =
        static_cast<uint16_t>(record[layout.nope + 2 * j] | (record[layout.nope + 2 * j + 1] << 8));
    k[layout.nope + j] = formats::bf16Value(bits);
  }
  return k;
}

KvCache makeKvCache(const KvRecordLayout& layout, int pages) {
  checkLayout(layout, "makeKvCache");
  require(pages >= 0, "makeKvCache", "negative page count");
  return KvCache{layout, pages, std::vector<uint8_t>(size_t(pages) * layout.pageBytes(), 0)};
}

void insertKv(KvCache& cache, const std::vector<float>& k, int rows,
              const std::vector<int>& slotMapping) {
  checkCache(cache, "insertKv");
  const KvRecordLayout& l = cache.layout;
  require(rows >= 0 && k.size() == static_cast<size_t>(rows) * l.headDim() &&
              slotMapping.size() == static_cast<size_t>(rows),
          "insertKv", "k is not rows x headDim or slotMapping not rows long");
  const int64_t slots = int64_t(cache.pages) * l.pageTokens;
  // Every slot checked first: a bad mapping leaves the cache as it was.
  for (int slot : slotMapping)
    require(slot == -1 || (slot >= 0 && slot < slots), "insertKv", "slot out of range");
  for (int t = 0; t < rows; ++t) {
    const int slot = slotMapping[t];
    if (slot == -1) continue;
    const std::vector<float> row(k.begin() + size_t(t) * l.headDim(),
                                 k.begin() + size_t(t + 1) * l.headDim());
    const std::vector<uint8_t> record = encodeKvRecord(l, row);
    const size_t base = size_t(slot / l.pageTokens) * l.pageBytes();
    const size_t i = slot % l.pageTokens;
    std::copy(record.begin(), record.begin() + l.dataBytes(),
              cache.bytes.begin() + base + i * l.dataBytes());
    std::copy(record.begin() + l.dataBytes(), record.end(),
              cache.bytes.begin() + base + size_t(l.pageTokens) * l.dataBytes() +
                  i * KvRecordLayout::kScaleBytes);
  }
}

std::vector<double> decodeKvRow(const KvCache& cache, int slot) {
  checkCache(cache, "decodeKvRow");
  require(slot >= 0 && slot < int64_t(cache.pages) * cache.layout.pageTokens, "decodeKvRow",
          "slot out of range");
  return decodeKvRecord(cache.layout, recordAt(cache, slot));
}

// ---------------------------------------------------------------- key lists

std::vector<int> windowKeySlots(int position, const std::vector<int>& blockTable, int pageTokens,
                                int window) {
  require(position >= 0 && pageTokens > 0 && window > 0, "windowKeySlots", "bad arguments");
  require(static_cast<size_t>(position / pageTokens) < blockTable.size(), "windowKeySlots",
          "block table shorter than the position");
  std::vector<int> slots;
  for (int j = std::max(0, position - window + 1); j <= position; ++j)
    slots.push_back(blockTable[j / pageTokens] * pageTokens + j % pageTokens);
  return slots;
}

int compressedKeyCount(int position, int ratio, int topK) {
  require(position >= 0 && ratio >= 0 && topK >= 0, "compressedKeyCount", "bad arguments");
  return ratio == 0 ? 0 : std::min((position + 1) / ratio, topK);
}

std::vector<int> compressedKeySlots(const std::vector<int>& topk, int count,
                                    const std::vector<int>& blockTable, int pageTokens) {
  require(count >= 0 && static_cast<size_t>(count) <= topk.size() && pageTokens > 0,
          "compressedKeySlots", "count exceeds the top-k list");
  std::vector<int> slots;
  for (int i = 0; i < count; ++i) {
    const int row = topk[i];
    require(row >= -1, "compressedKeySlots", "negative row other than -1");
    if (row == -1) {
      slots.push_back(-1);
      continue;
    }
    require(static_cast<size_t>(row / pageTokens) < blockTable.size(), "compressedKeySlots",
            "block table shorter than the row");
    slots.push_back(blockTable[row / pageTokens] * pageTokens + row % pageTokens);
  }
  return slots;
}

std::vector<std::vector<double>> gatherKeys(const KvCache& window, const KvCache* compressed,
                                            const TokenKeys& keys) {
  std::vector<std::vector<double>> rows;
  for (int slot : keys.compressedSlots) {
    if (slot == -1) continue;
    require(compressed != nullptr, "gatherKeys", "compressed slots without a compressed cache");
    require(compressed->layout.headDim() == window.layout.headDim(), "gatherKeys",
            "caches differ in head dim");
    rows.push_back(decodeKvRow(*compressed, slot));
  }
  for (int slot : keys.windowSlots)
    if (slot != -1) rows.push_back(decodeKvRow(window, slot));
  return rows;
}

// ---------------------------------------------------------------- softmax . V

std::vector<double> attentionOnePass(const std::vector<float>& q, const std::vector<float>& sinks,
                                     int heads, const std::vector<std::vector<double>>& keys) {
  require(heads > 0 && q.size() % heads == 0 && sinks.size() == size_t(heads), "attentionOnePass",
          "q is not heads x headDim or sinks not heads long");
  const size_t dim = q.size() / heads;
  for (const auto& k : keys) require(k.size() == dim, "attentionOnePass", "key width != headDim");
  std::vector<double> o(q.size(), 0.0);
  if (keys.empty()) return o;  // the sink alone: every weight goes to it
  const double invSqrtDim = 1.0 / std::sqrt(static_cast<double>(dim));
  std::vector<double> s(keys.size());
  for (int h = 0; h < heads; ++h) {
    double m = sinks[h];
    for (size_t i = 0; i < keys.size(); ++i) {
      s[i] = dot(q.data() + h * dim, keys[i]) * invSqrtDim;
      m = std::max(m, s[i]);
    }
    double z = std::exp(static_cast<double>(sinks[h]) - m);
    double* out = o.data() + h * dim;
    for (size_t i = 0; i < keys.size(); ++i) {
      const double p = std::exp(s[i] - m);
      z += p;
      for (size_t d = 0; d < dim; ++d) out[d] += p * keys[i][d];
    }
    for (size_t d = 0; d < dim; ++d) out[d] /= z;
  }
  return o;
}

SplitKPartial attentionChunk(const std::vector<float>& q, int heads,
                             const std::vector<std::vector<double>>& keys, size_t begin,
                             size_t end) {
  require(heads > 0 && q.size() % heads == 0, "attentionChunk", "q is not heads x headDim");
  require(begin <= end && end <= keys.size(), "attentionChunk", "chunk outside the keys");
  const size_t dim = q.size() / heads;
  const double scale = kLog2e / std::sqrt(static_cast<double>(dim));
  SplitKPartial c{std::vector<double>(heads, -kInf), std::vector<double>(heads, 0.0),
                  std::vector<double>(q.size(), 0.0)};
  std::vector<double> t(end - begin);
  for (int h = 0; h < heads; ++h) {
    for (size_t i = begin; i < end; ++i) {
      require(keys[i].size() == dim, "attentionChunk", "key width != headDim");
      t[i - begin] = dot(q.data() + h * dim, keys[i]) * scale;
      c.m[h] = std::max(c.m[h], t[i - begin]);
    }
    for (size_t i = begin; i < end; ++i) {
      const double p = std::exp2(t[i - begin] - c.m[h]);
      c.l[h] += p;
      for (size_t d = 0; d < dim; ++d) c.p[h * dim + d] += p * keys[i][d];
    }
  }
  return c;
}

std::vector<double> combineChunks(const std::vector<SplitKPartial>& chunks,
                                  const std::vector<float>& sinks, int heads, int headDim) {
  require(heads > 0 && headDim > 0 && sinks.size() == size_t(heads), "combineChunks",
          "sinks not heads long");
  const size_t dim = headDim;
  for (const auto& c : chunks)
    require(c.m.size() == size_t(heads) && c.l.size() == size_t(heads) &&
                c.p.size() == size_t(heads) * dim,
            "combineChunks", "chunk shape");
  std::vector<double> o(size_t(heads) * dim, 0.0);
  for (int h = 0; h < heads; ++h) {
    const double sink = sinks[h] * kLog2e;
    double m = -kInf;  // over the chunks with keys only: an empty one is -inf
    for (const auto& c : chunks)
      if (c.l[h] > 0.0) m = std::max(m, c.m[h]);
    if (m == -kInf) continue;  // no keys: the sink alone, o = 0
    m = std::max(m, sink);
    double l = std::exp2(sink - m);
    double* out = o.data() + h * dim;
    for (const auto& c : chunks) {
      if (c.l[h] == 0.0) continue;
      const double w = std::exp2(c.m[h] - m);
      l += c.l[h] * w;
      for (size_t d = 0; d < dim; ++d) out[d] += c.p[h * dim + d] * w;
    }
    for (size_t d = 0; d < dim; ++d) out[d] /= l;
  }
  return o;
}

// ---------------------------------------------------------------- output side

std::vector<float> inverseRope(const std::vector<float>& o, int rows, int dim, int ropeDim,
                               const std::vector<float>& cosSin, int position) {
  require(rows >= 0 && dim >= ropeDim && ropeDim > 0 && ropeDim % 2 == 0 &&
              o.size() == size_t(rows) * dim && cosSin.size() % ropeDim == 0,
          "inverseRope", "shapes");
  require(position >= 0 && size_t(position) < cosSin.size() / ropeDim, "inverseRope",
          "position outside the table");
  const int half = ropeDim / 2, nope = dim - ropeDim;
  const float* cs = cosSin.data() + size_t(position) * ropeDim;
  std::vector<float> y(o);
  for (int r = 0; r < rows; ++r) {
    float* row = y.data() + size_t(r) * dim + nope;
    const float* in = o.data() + size_t(r) * dim + nope;
    for (int j = 0; j < half; ++j) {
      const double e = in[2 * j], od = in[2 * j + 1], c = cs[j], s = cs[half + j];
      row[2 * j] = static_cast<float>(e * c + od * s);
      row[2 * j + 1] = static_cast<float>(od * c - e * s);
    }
  }
  return y;
}

std::vector<float> groupedLowRank(const std::vector<float>& x, int heads, int headDim,
                                  int headsPerGroup, int groupRank, const BlockScaledE4m3& woA) {
  require(heads > 0 && headsPerGroup > 0 && heads % headsPerGroup == 0 && headDim > 0 &&
              x.size() == size_t(heads) * headDim,
          "groupedLowRank", "x is not heads x headDim in whole groups");
  const int groups = heads / headsPerGroup, width = headsPerGroup * headDim;
  require(groupRank > 0 && groupRank % kMx == 0 && woA.n == groups * groupRank && woA.k == width,
          "groupedLowRank", "woA is not [groups * groupRank][headsPerGroup * headDim]");
  // One MXFP8 row a group: its 32-wide scale groups never straddle two groups.
  const Mxfp8Tensor xq = quantizeMxfp8Rows(x, groups, width, formats::Mxfp8Variant::Standard);
  std::vector<float> z;
  for (int g = 0; g < groups; ++g) {
    const std::vector<float> zg =
        gemvMxfp8xE4m3(tensorRow(xq, g), weightRows(woA, g * groupRank, groupRank));
    z.insert(z.end(), zg.begin(), zg.end());
  }
  return z;
}

std::vector<float> outputPartial(const std::vector<float>& z, const BlockScaledE4m3& woB) {
  require(z.size() % kMx == 0 && woB.k == int(z.size()), "outputPartial",
          "woB is not [hidden][z.size()]");
  return gemvMxfp8xE4m3(
      quantizeMxfp8Rows(z, 1, static_cast<int>(z.size()), formats::Mxfp8Variant::Standard), woB);
}

AttentionBackResult attentionBack(const std::vector<float>& q, int heads, int position,
                                  const std::vector<float>& cosSin, const KvCache& window,
                                  const KvCache* compressed, const TokenKeys& keys,
                                  const AttentionBackWeights& weights) {
  const KvRecordLayout& l = window.layout;
  require(heads > 0 && q.size() == size_t(heads) * l.headDim(), "attentionBack",
          "q is not heads x headDim");
  AttentionBackResult r;
  const std::vector<double> o =
      attentionOnePass(q, weights.sinks, heads, gatherKeys(window, compressed, keys));
  r.o.reserve(o.size());
  for (double v : o) r.o.push_back(roundDoubleToBf16(v));
  r.rotated = inverseRope(r.o, heads, l.headDim(), l.rope, cosSin, position);
  r.z = groupedLowRank(r.rotated, heads, l.headDim(), weights.headsPerGroup, weights.groupRank,
                       weights.woA);
  r.partial = outputPartial(r.z, weights.woB);
  return r;
}

}  // namespace monodc::reference
