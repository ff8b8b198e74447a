// Shared by the attention-front tests (see AttentionFrontFixture.h).
#include "AttentionFrontFixture.h"

#include "monodc/Transforms/Passes.h"
#include "monodc/formats/NumberFormats.h"
#include "monodc/reference/Attention.h"
#include "monodc/stages/Launches.h"

#include "FusedLaunch.h"
#include "MemoryInputs.h"
#include "RandomValues.h"
#include "RopeTable.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

using namespace monodc;
namespace ref = monodc::reference;
using monodc::testing::setBytes;
using monodc::testing::setValues;

namespace monodc::testing {

FrontInputs makeFrontInputs(const stages::ModelConfig &c, int rows, unsigned seed) {
  std::mt19937 rng(seed);
  FrontInputs in;
  in.u = normalValues(rng, size_t(rows) * c.hidden, 0.0f, 1.0f, true);
  // Rows of very different magnitudes: the norm must not care.
  for (int r = 0; r < rows; ++r)
    for (int64_t d = 0; d < c.hidden; ++d)
      in.u[r * c.hidden + d] =
          formats::roundToBf16(in.u[r * c.hidden + d] * std::ldexp(1.0f, (r % 7) * 3 - 9));
  in.attnNorm = normalValues(rng, c.hidden, 1.0f, 0.1f, true);
  in.qNorm = normalValues(rng, c.qRank, 1.0f, 0.1f, true);
  in.kvNorm = normalValues(rng, c.kvDim, 1.0f, 0.1f, true);
  // Positions anywhere in the table (0 included: one key), and a table of
  // cos/sin of rotation angles.
  std::uniform_int_distribution<int> position(0, int(c.ropePositions) - 1);
  for (int r = 0; r < rows; ++r)
    in.positions.push_back(r == 0 ? 0.0f : float(position(rng)));
  in.cosSin = monodc::testing::ropeTable(c);
  std::normal_distribution<float> w(0.0f, 0.02f);
  std::vector<float> dense(size_t(c.qkvWidth()) * c.hidden);
  for (float &x : dense)
    x = w(rng);
  in.wqkv = ref::quantizeBlockE4m3(dense, int(c.qkvWidth()), int(c.hidden));
  // Slots: 33 r + 31 steps over page ends and starts (33 and the slot count,
  // a power of two, are coprime: the slots are distinct); token 1 a pad when
  // rows > 2.
  const int64_t pages = c.kvCachePages, slotCount = pages * c.kKvPageTokens;
  for (int r = 0; r < rows; ++r)
    in.slots.push_back(float((33 * r + 31) % slotCount));
  if (rows > 2)
    in.slots[1] = -1.0f;
  std::uniform_int_distribution<int> byte(0, 255);
  in.cacheBefore.resize(size_t(pages * c.kvPageBytes()));
  for (uint8_t &b : in.cacheBefore)
    b = uint8_t(byte(rng));
  return in;
}

void loadFrontInputs(sim::LaunchMemory &memory, const FrontInputs &in) {
  setValues(memory, "u", in.u);
  setValues(memory, "attn_norm", in.attnNorm);
  setValues(memory, "q_norm", in.qNorm);
  setValues(memory, "kv_norm", in.kvNorm);
  setValues(memory, "positions", in.positions);
  setValues(memory, "cos_sin", in.cosSin);
  setBytes(memory, "wqkv", in.wqkv.codes);
  setBytes(memory, "wqkv_scale", in.wqkv.scales);
  setValues(memory, "slot_mapping", in.slots);
  setBytes(memory, "kv_cache", in.cacheBefore);
}

FrontOutputs readFrontOutputs(const sim::LaunchMemory &memory) {
  return {memory.values("y"), memory.values("qkv"), memory.values("qn"), memory.values("kn"),
          memory.values("k"), memory.bytes("xq"), memory.bytes("xs"), memory.bytes("kv_cache")};
}

FrontOutputs simulateFront(const stages::ModelConfig &c, int rows, const FrontInputs &in,
                           const sim::Schedule &schedule, const stages::ModelConfig *built) {
  mlir::MLIRContext ctx;
  auto module = monodc::testing::buildFusedLaunch(ctx, "attention_front", built ? *built : c, rows);
  if (!module)
    return {};
  auto launch = monodc::testing::launchOf(*module);
  sim::LaunchMemory memory(launch);
  // The cache is the engine's: the launch takes its pages as given.
  EXPECT_FALSE(static_cast<bool>(memory.setRows("kv_cache", c.kvCachePages)));
  loadFrontInputs(memory, in);
  auto run = sim::simulate(launch, memory, schedule);
  EXPECT_TRUE(succeeded(run) && !run->deadlock) << (succeeded(run) ? run->describe() : "");
  return readFrontOutputs(memory);
}

std::vector<uint8_t> referenceCache(const stages::ModelConfig &c, int rows, const FrontInputs &in,
                                    const std::vector<float> &k) {
  ref::KvRecordLayout layout{int(c.kvNope()), int(c.ropeDim), int(c.kKvPageTokens)};
  ref::KvCache cache{layout, int(c.kvCachePages), in.cacheBefore};
  std::vector<int> slots(in.slots.begin(), in.slots.end());
  ref::insertKv(cache, k, rows, slots);
  return cache.bytes;
}

/// The reference chain, from docs/numerics.md, on the reference's own intermediates.
FrontOutputs referenceFront(const stages::ModelConfig &c, int rows, const FrontInputs &in) {
  FrontOutputs out;
  const int h = int(c.hidden), qr = int(c.qRank), kv = int(c.kvDim), w = int(c.qkvWidth());
  out.y = ref::rmsNorm(in.u, rows, h, in.attnNorm, c.normEps);
  ref::Mxfp8Tensor xq = ref::quantizeMxfp8Rows(out.y, rows, h, formats::Mxfp8Variant::Standard);
  out.xq = xq.codes;
  out.xs = xq.scales;
  out.qkv = ref::gemvMxfp8xE4m3(xq, in.wqkv);
  std::vector<float> q(size_t(rows) * qr), k(size_t(rows) * kv);
  for (int r = 0; r < rows; ++r) {
    std::copy_n(out.qkv.begin() + size_t(r) * w, qr, q.begin() + size_t(r) * qr);
    std::copy_n(out.qkv.begin() + size_t(r) * w + qr, kv, k.begin() + size_t(r) * kv);
  }
  out.qn = ref::rmsNorm(q, rows, qr, in.qNorm, c.normEps);
  out.kn = ref::rmsNorm(k, rows, kv, in.kvNorm, c.normEps);
  out.k = ref::keyRope(out.kn, in.positions, in.cosSin, rows, kv, int(c.ropeDim));
  out.cache = referenceCache(c, rows, in, out.k);
  return out;
}


} // namespace monodc::testing
