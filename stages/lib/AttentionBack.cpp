//===- AttentionBack.cpp - split attention, combine, wo_a, wo_b -----------===//
//
// docs/numerics.md section 4, back steps 1-5. Split-K (flash decoding): each task
// keeps base-2 (max, sum, values) of up to 8 heads over one chunk of keys;
// the combine folds the chunks and the sink together per head.
//
//===----------------------------------------------------------------------===//
#include "monodc/stages/AttentionBack.h"

#include "monodc/stages/GemvStage.h"
#include "monodc/stages/PadRows.h"
#include "monodc/stages/Quantize.h"

#include <algorithm>
#include <functional>

using namespace monodc::dsl;
using namespace monodc::stages;

namespace {
constexpr float kLog2e = 1.44269504088896340736f;

ChunkStateRegions declareChunkState(Launch &launch, const ModelConfig &c, int64_t heads,
                                    const std::string &name, int64_t keys) {
  const int64_t rows = launch.options().rows, chunks = keys / ModelConfig::kAttentionChunk;
  return {launch.scratch(name + "_max", f32, {rows * heads, chunks}),
          launch.scratch(name + "_sum", f32, {rows * heads, chunks}),
          launch.scratch(name + "_values", f32, {rows * heads, chunks * c.headDim})};
}
} // namespace

AttentionBackRegions monodc::stages::declareAttentionBack(Launch &launch, const ModelConfig &c,
                                                          int64_t heads) {
  const int64_t rows = launch.options().rows, dim = c.headDim;
  const int64_t groups = heads / c.headsPerGroup, width = c.headsPerGroup * dim;
  AttentionBackRegions r;
  r.q = launch.input("q", bf16, {rows, heads * dim});
  r.cosSin = declareRopeTable(launch, c);
  r.positions = declarePositions(launch, c, r.cosSin);
  r.slotMapping = declareSlotMapping(launch, c);
  r.windowCache = declareCache(launch, c, "kv_cache", CacheUse::Read);
  r.compressedCache = declareCache(launch, c, "compressed_cache", CacheUse::Read);
  r.keyTables = declareKeyTables(launch, c, r.windowCache, r.compressedCache, r.cosSin);
  launch.indexesRowsOf(r.slotMapping, r.windowCache);
  r.sinks = launch.weight("attn_sink", f32, {heads});
  r.windowState = declareChunkState(launch, c, heads, "window", c.windowKeys);
  r.compressedState = declareChunkState(launch, c, heads, "compressed", c.compressedKeys);
  r.o = launch.output("o", bf16, {rows, heads * dim});
  r.oCodes = launch.scratch("oq", e4m3, {groups * rows, width});
  r.oScales = launch.scratch("os", e8m0, {groups * rows, width / 32});
  r.woA = launch.weight("wo_a", e4m3, {groups * c.groupRank, width});
  r.woAScales = launch.weight("wo_a_scale", e8m0, {groups * c.groupRank / 32, width / 32});
  r.zCodes = launch.scratch("zq", e4m3, {rows, groups * c.groupRank});
  r.zScales = launch.scratch("zs", e8m0, {rows, groups * c.groupRank / 32});
  r.woB = launch.weight("wo_b", e4m3, {c.hidden, groups * c.groupRank});
  r.woBScales = launch.weight("wo_b_scale", e8m0, {c.hidden / 32, groups * c.groupRank / 32});
  r.partial = launch.output("partial", bf16, {rows, c.hidden});
  return r;
}

namespace {

/// A chunk's key slots: row `token`'s keys [first, first + count) of one
/// source, -1 masked.
using ChunkKeys = std::function<Tile(Task &, Index token, Index first, int64_t count)>;

/// One split-K chunk per task for every (token, chunk, 8 heads) over `keys`
/// keys of one cache; chunk c lands in column c of the state. A pad row's
/// keys are all masked: it reads no cache.
void addChunks(Launch &launch, const ModelConfig &c, int64_t heads, const std::string &name,
               const Region &q, const Region &cache, int64_t keys, const ChunkKeys &slotsOf,
               const ChunkStateRegions &state) {
  const int64_t rows = launch.options().rows, dim = c.headDim;
  const int64_t chunkKeys = ModelConfig::kAttentionChunk, chunks = keys / chunkKeys;
  const int64_t perTask = std::min<int64_t>(heads, 8), headGroups = heads / perTask;
  launch.stage(name, rows * chunks * headGroups, [&](Task &t) {
    Index token = t.id() / (chunks * headGroups);
    Index chunk = (t.id() / headGroups) % chunks;
    Index firstHead = (t.id() % headGroups) * perTask;
    Tile keySlots = slotsOf(t, token, chunk * chunkKeys, chunkKeys);
    AttentionState s =
        t.attendChunk(q, token, firstHead * dim, perTask, dim, c.ropeDim, cache, keySlots);
    Index row = token * heads + firstHead;
    t.storeRows(state.max, row, chunk, perTask, s.m);
    t.storeRows(state.sum, row, chunk, perTask, s.l);
    t.storeRows(state.values, row, chunk * dim, perTask, s.p);
  });
}

} // namespace

void monodc::stages::addAttentionBack(Launch &launch, const ModelConfig &c, int64_t heads,
                                      int64_t ratio, const AttentionBackRegions &r) {
  const int64_t rows = launch.options().rows, dim = c.headDim;
  const int64_t nope = dim - c.ropeDim, pairs = c.ropeDim / 2;
  const int64_t groups = heads / c.headsPerGroup, hpg = c.headsPerGroup;
  addChunks(launch, c, heads, "back.window", r.q, r.windowCache, c.windowKeys,
            [&](Task &t, Index token, Index first, int64_t count) {
              return windowKeySlots(t, c, r.positions, r.slotMapping, r.keyTables, r.windowCache,
                                    token, first, count);
            },
            r.windowState);
  addChunks(launch, c, heads, "back.compressed", r.q, r.compressedCache, c.compressedKeys,
            [&](Task &t, Index token, Index first, int64_t count) {
              return compressedKeySlots(t, c, ratio, r.positions, r.slotMapping, r.keyTables,
                                        r.compressedCache, token, first, count);
            },
            r.compressedState);

  // Combine, one task a (token, head): the sink joins the denominator only.
  // A pad row's tasks skip. Every load comes first, as mono-hoist-loads
  // would place them anyway: a load after a block barrier (every tile
  // operation through shared memory has one) could not start before it.
  launch.stage("back.combine", rows * heads, [&](Task &t) {
    Index token = t.id() / heads, head = t.id() % heads;
    skipPadRow(t, r.slotMapping, token);
    const ChunkStateRegions *sources[] = {&r.windowState, &r.compressedState};
    Tile sink = t.load(r.sinks, t.index(0), head, 1) * kLog2e;
    Index position = tableRow(t, r.positions, r.cosSin, token);
    Tile cs = t.load(r.cosSin, position, 0, pairs), sn = t.load(r.cosSin, position, pairs, pairs);
    struct Loaded {
      int64_t chunks;
      Tile max, sum, values;
    } loaded[2];
    for (int i = 0; i < 2; ++i)
      loaded[i] = {sources[i]->max.cols(), t.loadRow(sources[i]->max, t.id()),
                   t.loadRow(sources[i]->sum, t.id()), t.loadRow(sources[i]->values, t.id())};
    Tile top = sink;
    for (const Loaded &s : loaded)
      top = max(top, maxOf(s.max));
    // Window then compressed, each summed in chunk order.
    Tile z = exp2(sink - top), numerator = t.constant(0.0f, dim);
    for (const Loaded &s : loaded) {
      Tile weights = exp2(s.max - top);
      z = z + sum(s.sum * weights);
      Tile values = s.values * expand(weights, s.chunks, dim, 1);
      numerator = numerator + sumAlong(values, s.chunks, dim, 0);
    }
    Tile o = (numerator / z).to(bf16);
    t.store(r.o, token, head * dim, o);

    // Inverse RoPE of the bf16 o in f32 (not rounded again), then MXFP8 per
    // head: 32-value groups never straddle the nope/rope boundary.
    Tile of = o.to(f32), rope = of.slice(nope, c.ropeDim);
    Tile even = rope.slice(0, pairs, 2), odd = rope.slice(1, pairs, 2);
    Mxfp8Tile front = t.quantizeMxfp8(of.slice(0, nope));
    Mxfp8Tile back = t.quantizeMxfp8(interleave(even * cs + odd * sn, odd * cs - even * sn));
    Index row = (head / hpg) * rows + token, col = (head % hpg) * dim;
    t.store(r.oCodes, row, col, front.codes);
    t.store(r.oCodes, row, col + t.index(nope), back.codes);
    Index scaleCol = (head % hpg) * (dim / 32);
    t.store(r.oScales, row, scaleCol, front.scales);
    t.store(r.oScales, row, scaleCol + t.index(nope / 32), back.scales);
  });

  // wo_a: group g's rows [g R, (g + 1) R) against its own MXFP8(o_g) rows.
  // A task's rows (32, 64 or 128) are whole 32-value blocks of each token's
  // z, so it quantizes its own z (token-major: the flat groups of 32 are
  // those blocks) and wo_b waits for wo_a alone, not for a quantizing stage
  // after it.
  const int64_t grid = launch.options().grid;
  const int64_t woARowsPerTask = scaledGemvRowsPerTask(c.groupRank, grid, groups);
  const int64_t tasksPerGroup = rowBlockTasks(c.groupRank, woARowsPerTask);
  launch.stage("back.wo_a", groups * tasksPerGroup, [&](Task &t) {
    requireWholeRowBlocks(t, r.woA, c.groupRank, woARowsPerTask, "rows a group");
    if (woARowsPerTask % 32 != 0)
      t.fail("wo_a tasks of " + std::to_string(woARowsPerTask) +
             " rows: MXFP8(z) needs whole 32-value blocks a task");
    Index first = t.id() * woARowsPerTask;
    Tile out = t.gemvRows(r.woA, r.woAScales, first, woARowsPerTask, r.oCodes, r.oScales,
                          (t.id() / tasksPerGroup) * rows, rows);
    Mxfp8Tile z = t.quantizeMxfp8(out.to(bf16).to(f32));
    t.storeRows(r.zCodes, t.index(0), first, rows, z.codes);
    t.storeRows(r.zScales, t.index(0), t.id() * (woARowsPerTask / 32), rows, z.scales);
  });
  const int64_t woBRowsPerTask = scaledGemvRowsPerTask(c.hidden, grid);
  launch.stage("back.wo_b", rowBlockTasks(c.hidden, woBRowsPerTask), [&](Task &t) {
    requireWholeRowBlocks(t, r.woB, c.hidden, woBRowsPerTask);
    Index first = t.id() * woBRowsPerTask;
    Tile out = t.gemvRows(r.woB, r.woBScales, first, woBRowsPerTask, r.zCodes, r.zScales,
                          t.index(0), rows);
    t.storeRows(r.partial, t.index(0), first, rows, out.to(bf16));
  });
}
