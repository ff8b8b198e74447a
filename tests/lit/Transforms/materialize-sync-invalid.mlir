// RUN: monodc-opt %s -split-input-file -mono-materialize-sync -verify-diagnostics
// RUN: not monodc-opt %s -split-input-file -mono-plan-memory -mono-materialize-sync=tag-offset=3 2>&1 | FileCheck %s --check-prefix=OFFSET
// materialize-sync needs plan-memory first and accepts tags 2e+1 and 2e+2 only.

// expected-error @+1 {{'mono.launch' op needs mono-plan-memory before mono-materialize-sync}}
mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
}
// OFFSET: tag offset must be 1 (K1) or 2 (K2/FFN), got 3
