//===- Quantize.h - MXFP8 of activation rows --------------------*- C++ -*-===//
#ifndef MONODC_STAGES_QUANTIZE_H
#define MONODC_STAGES_QUANTIZE_H

#include "monodc/dsl/Launch.h"

namespace monodc::stages {

/// codes, scales = MXFP8(x) for every row of x, one task a row (docs/numerics.md
/// §2): the activation a following e4m3 or e2m1 GEMV reads.
void addMxfp8Rows(dsl::Launch &launch, const std::string &name, const dsl::Region &x,
                  const dsl::Region &codes, const dsl::Region &scales,
                  dsl::Mxfp8Flavour flavour = dsl::Mxfp8Flavour::Standard);

} // namespace monodc::stages

#endif
