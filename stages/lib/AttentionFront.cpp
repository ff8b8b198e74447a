//===- AttentionFront.cpp - seam norm, wqkv and the q/kv norms ------------===//
//
// docs/numerics.md section 3 step 6 (seam norm) and section 4, front steps 1-2.
//
//===----------------------------------------------------------------------===//
#include "monodc/stages/AttentionFront.h"

#include "monodc/stages/PadRows.h"

#include "monodc/stages/GemvStage.h"
#include "monodc/stages/Quantize.h"

using namespace monodc::dsl;
using namespace monodc::stages;

void monodc::stages::addSeamNorm(Launch &launch, const ModelConfig &config,
                                 const std::string &name, const SeamNormRegions &r) {
  const int64_t width = config.hidden;
  launch.stage(name, launch.options().rows, [&](Task &t) {
    Tile u = t.loadRow(r.u, t.id()).to(f32);
    Tile inverseRms = rsqrt(sum(u * u) / static_cast<float>(width) + config.normEps);
    Tile w = t.loadRow(r.weight, t.index(0)).to(f32);
    Tile y = (u * inverseRms * w).to(bf16);  // the one rounding
    t.store(r.y, t.id(), 0, y);
    Mxfp8Tile q = t.quantizeMxfp8(y.to(f32));
    t.store(r.codes, t.id(), 0, q.codes);
    t.store(r.scales, t.id(), 0, q.scales);
  });
}

GemvStage monodc::stages::wqkvGemvStage(const Launch &launch, const WqkvRegions &r) {
  // A task a block of weight rows, every token: on a grid of 66, 1792 rows
  // give 56 tasks of 32 rows (scaledGemvRowsPerTask). Steps wider than a
  // token tile size wqkv for half the grid: K1 runs the seam's mixes (24 a
  // token group: 192 tasks at rows 48) on the CTAs wqkv leaves idle when it
  // leaves half of them (Launches.cpp); before the norm they would hold
  // the norm up.
  const int64_t rows = launch.options().rows, grid = launch.options().grid;
  const int64_t rowsPerTask =
      scaledGemvRowsPerTask(r.weight.rows(), rows > kGemvTokenTile ? grid / 2 : grid);
  return {"front.wqkv", r.weight, r.weightScales, r.codes, r.scales, r.qkv,
          rowsPerTask, bf16, /*everyToken=*/true};
}

void monodc::stages::addWqkvGemv(Launch &launch, const ModelConfig &, const WqkvRegions &r) {
  addGemvStage(launch, wqkvGemvStage(launch, r));
}

void monodc::stages::addRowNorm(Launch &launch, const ModelConfig &config,
                                const std::string &name, const RowNormRegions &r) {
  launch.stage(name, launch.options().rows, [&](Task &t) {
    Tile x = t.load(r.source, t.id(), r.col, r.width).to(f32);
    Tile inverseRms = rsqrt(sum(x * x) / static_cast<float>(r.width) + config.normEps);
    Tile w = t.loadRow(r.weight, t.index(0)).to(f32);
    Tile out = (x * inverseRms * w).to(bf16);
    t.store(r.out, t.id(), 0, out);
    if (!r.codes.name().empty()) {
      Mxfp8Tile q = t.quantizeMxfp8(out.to(f32));
      t.store(r.codes, t.id(), 0, q.codes);
      t.store(r.scales, t.id(), 0, q.scales);
    }
  });
}

namespace {
/// RoPE of one head or key row (bf16, `dim` values): the first dim - ropeDim
/// values unchanged, the rest rotated as interleaved pairs by the row of the
/// cos/sin table at `position`, in f32 with one bf16 rounding. Stores both
/// parts at (row, col) of `out`.
void storeRotated(Task &t, const ModelConfig &config, const Tile &row, Index position,
                  const Region &cosSin, const Region &out, Index outRow, Index col) {
  const int64_t nope = row.size() - config.ropeDim, pairs = config.ropeDim / 2;
  t.store(out, outRow, col, row.slice(0, nope));
  Tile rope = row.slice(nope, config.ropeDim).to(f32);
  Tile even = rope.slice(0, pairs, 2), odd = rope.slice(1, pairs, 2);
  Tile c = t.load(cosSin, position, 0, pairs), s = t.load(cosSin, position, pairs, pairs);
  Tile rotated = interleave(even * c - odd * s, even * s + odd * c);
  t.store(out, outRow, col + t.index(nope), rotated.to(bf16));
}
} // namespace

void monodc::stages::addKeyRope(Launch &launch, const ModelConfig &config,
                                const KeyRopeRegions &r) {
  launch.stage("front.k_rope", launch.options().rows, [&](Task &t) {
    storeRotated(t, config, t.loadRow(r.kn, t.id()), tableRow(t, r.positions, r.cosSin, t.id()), r.cosSin, r.k, t.id(),
                 t.index(0));
  });
}

void monodc::stages::addKvInsert(Launch &launch, const ModelConfig &config,
                                 const KvInsertRegions &r) {
  const int64_t nope = config.kvNope(), groups = nope / ModelConfig::kKvGroup;
  const int64_t pageTokens = ModelConfig::kKvPageTokens;
  launch.stage("front.kv_insert", launch.options().rows, [&](Task &t) {
    // A slot past the cache the caller gave is skipped as a pad row's is.
    Tile given = t.load(r.slots, t.id(), 0, 1);
    Index slot = t.toIndex(selectLess(given, t.rowsOf(r.cache) * float(pageTokens), given,
                                      t.constant(-1.0f)));
    Index page = slot / pageTokens, inPage = slot % pageTokens;
    Tile k = t.loadRow(r.k, t.id());
    Mxfp8Tile q = t.quantizeMxfp8(k.slice(0, nope).to(f32), Mxfp8Flavour::KvRecord);
    Index data = inPage * config.kvDataBytes();
    t.storeIf(slot, r.cache, page, data, q.codes);
    t.storeIf(slot, r.cache, page, data + t.index(nope), k.slice(nope, config.ropeDim));
    Index scales = inPage * ModelConfig::kKvScaleBytes + t.index(pageTokens * config.kvDataBytes());
    t.storeIf(slot, r.cache, page, scales, q.scales);
    // The unused scale bytes are zero (an e4m3 zero is the byte 0).
    t.storeIf(slot, r.cache, page, scales + t.index(groups),
              t.constant(0.0f, ModelConfig::kKvScaleBytes - groups).to(e4m3));
  });
}

void monodc::stages::addQuery(Launch &launch, const ModelConfig &config, int64_t heads,
                              const QueryRegions &r, bool qnQuantized) {
  const int64_t tokens = launch.options().rows, width = heads * config.headDim;
  const int64_t rowsPerTask = scaledGemvRowsPerTask(width, launch.options().grid);
  if (!qnQuantized)
    addMxfp8Rows(launch, "front.q_quant", r.qn, r.codes, r.scales);
  launch.stage("front.wq_b", rowBlockTasks(width, rowsPerTask), [&](Task &t) {
    requireWholeRowBlocks(t, r.weight, width, rowsPerTask);
    Index first = t.id() * rowsPerTask;
    Tile out = t.gemvRows(r.weight, r.weightScales, first, rowsPerTask, r.codes, r.scales,
                          t.index(0), tokens);
    t.storeRows(r.unrotated, t.index(0), first, tokens, out.to(bf16));
  });
  launch.stage("front.q_rope", tokens * heads, [&](Task &t) {
    Index token = t.id() / heads;
    Index col = (t.id() % heads) * config.headDim;
    storeRotated(t, config, t.load(r.unrotated, token, col, config.headDim),
                 tableRow(t, r.positions, r.cosSin, token), r.cosSin,
                 r.q, token, col);
  });
}
