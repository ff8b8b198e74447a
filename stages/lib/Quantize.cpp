//===- Quantize.cpp - MXFP8 of activation rows ----------------------------===//
#include "monodc/stages/Quantize.h"

using namespace monodc::dsl;

int64_t monodc::stages::mxfp8RowSlice(int64_t width) {
  constexpr int64_t kGroup = 32, kWidest = 1024;
  for (int64_t slice = kWidest; slice > kGroup; slice -= kGroup)
    if (width % slice == 0)
      return slice;
  return width % kGroup == 0 ? kGroup : width;
}

void monodc::stages::addMxfp8Rows(Launch &l, const std::string &name, const Region &x,
                                  const Region &codes, const Region &scales,
                                  Mxfp8Flavour flavour) {
  const int64_t slice = mxfp8RowSlice(x.cols()), slices = x.cols() / slice;
  l.stage(name, x.rows() * slices, [&](Task &t) {
    Index row = t.id() / slices;
    Index col = (t.id() % slices) * slice;
    Mxfp8Tile q = t.quantizeMxfp8(t.load(x, row, col, slice).to(f32), flavour);
    t.store(codes, row, col, q.codes);
    t.store(scales, row, col / 32, q.scales);
  });
}
