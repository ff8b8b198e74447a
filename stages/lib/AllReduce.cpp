//===- AllReduce.cpp - the exact tensor-parallel all-reduce ---------------===//
#include "monodc/stages/AllReduce.h"

#include "monodc/stages/PadRows.h"

using namespace monodc::dsl;
using namespace monodc::stages;

void monodc::stages::addAllReduce(Launch &l, const std::string &prefix,
                                  const AllReduceRegions &r) {
  const int64_t ranks = l.options().ranks, width = r.partial.cols();
  l.stage(prefix + ".push", l.options().rows, [&](Task &t) {
    Tile partial = t.loadRow(r.partial, t.id());
    for (int64_t rank = 0; rank < ranks; ++rank)
      t.storePeer(r.peer, rank, t.id(), 0, partial);
  });
  l.stage(prefix + ".reduce", l.options().rows, [&](Task &t) {
    if (!r.slotMapping.name().empty())
      skipPadRow(t, r.slotMapping, t.id());
    Tile sum = t.loadPeer(r.peer, 0, t.id(), 0, width).to(f32);
    for (int64_t rank = 1; rank < ranks; ++rank)
      sum = sum + t.loadPeer(r.peer, rank, t.id(), 0, width).to(f32);
    t.store(r.out, t.id(), 0, sum.to(bf16));
  });
}
