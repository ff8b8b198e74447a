//===- Quantize.h - MXFP8 of activation rows --------------------*- C++ -*-===//
#ifndef MONODC_STAGES_QUANTIZE_H
#define MONODC_STAGES_QUANTIZE_H

#include "monodc/dsl/Launch.h"

namespace monodc::stages {

/// Columns a task of a per-token elementwise stage ending in MXFP8 takes:
/// the widest multiple of 32 (whole quantizer groups) up to 1024 that
/// divides `width`. A row of 5120 in one task is a chain of block-wide steps
/// that took one CTA 13-20 us on the H200 (seam norms, routed.xq); in
/// column slices its tasks run side by side, and the values are the same.
int64_t mxfp8RowSlice(int64_t width);

/// codes, scales = MXFP8(x) for every row of x, a task a (row, column
/// slice of mxfp8RowSlice) (DSV41.md §2): the activation a following e4m3
/// or e2m1 GEMV reads.
void addMxfp8Rows(dsl::Launch &launch, const std::string &name, const dsl::Region &x,
                  const dsl::Region &codes, const dsl::Region &scales,
                  dsl::Mxfp8Flavour flavour = dsl::Mxfp8Flavour::Standard);

} // namespace monodc::stages

#endif
