// RUN: monodc-opt %s -split-input-file -mono-prepare-emission -verify-diagnostics | FileCheck %s
// The prepare pass records the shared memory a launch needs and refuses what
// the printer cannot serve.

// A gemv of k = 64 into 32 outputs needs (64 + 2 + 256 + 32) floats.
// CHECK: mono.launch @ok attributes {{{.*}}mono.lds_bytes = 1416 : i64
mono.launch @ok attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @g weight : bf16 [32, 64]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %y = mono.constant 1.0 : !mono.tile<64, f32>
    %o = mono.gemv @g [%c0], %y : !mono.tile<64, f32> -> !mono.tile<32, f32>
  }
}

// -----

// expected-error @+1 {{'mono.launch' op unsupported arch 'gfx1100' (supported: gfx950, gfx942, gfx90a, sm_90)}}
mono.launch @bad attributes {arch = "gfx1100", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
}

// -----

mono.launch @big attributes {arch = "gfx950", grid = 4 : i64, block = 32 : i64, rows = 1 : i64} {
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    // expected-error @+1 {{'mono.constant' op tile of 4096 values needs 128 registers per thread at block 32 (limit 64)}}
    %y = mono.constant 1.0 : !mono.tile<4096, f32>
  }
}
