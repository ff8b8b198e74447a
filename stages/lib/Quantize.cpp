//===- Quantize.cpp - MXFP8 of activation rows ----------------------------===//
#include "monodc/stages/Quantize.h"

using namespace monodc::dsl;

void monodc::stages::addMxfp8Rows(Launch &l, const std::string &name, const Region &x,
                                  const Region &codes, const Region &scales,
                                  Mxfp8Flavour flavour) {
  l.stage(name, x.rows(), [&](Task &t) {
    Mxfp8Tile q = t.quantizeMxfp8(t.loadRow(x, t.id()).to(f32), flavour);
    t.store(codes, t.id(), 0, q.codes);
    t.store(scales, t.id(), 0, q.scales);
  });
}
