// RUN: monodc-opt %s -split-input-file -mono-plan-waits -verify-diagnostics

// A wait marked polled once whose flags depend on the task is refused: its
// later tasks need other flags.
mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @p.flags flags : i64 [4]
  mono.stage @s tasks 4 {
  ^bb0(%t: index):
    %c1 = arith.constant 1 : index
    // expected-error @+1 {{'mono.wait' op is marked polled once, but its flags depend on the task}}
    mono.wait @p.flags[%t, %c1] {mono.polled_once}
  }
}

// -----

// A GEMV marked prefetched needs a run of waits right before it with its
// weight row known before them.
mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @p.flags flags : i64 [4]
  mono.region @w weight : bf16 [32, 128]
  mono.region @x input : bf16 [1, 128]
  mono.stage @s tasks 4 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    mono.wait @p.flags[%c0, %c4]
    %c32 = arith.constant 32 : index
    %row = arith.muli %t, %c32 : index
    // expected-error @+1 {{'mono.gemv_rows' op is marked prefetched, but no run of waits precedes it with its weight row and count known before them}}
    %y = mono.gemv_rows @w[%row], @x[%c0] tokens 1 {mono.prefetched} : !mono.tile<32, f32>
  }
}

// -----

// A GEMV whose weights a stage of the launch writes (scratch) cannot be
// prefetched: the weights would be read before the wait for their writer.
mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @fill.flags flags : i64 [4]
  mono.region @w scratch : bf16 [32, 128]
  mono.region @x input : bf16 [1, 128]
  mono.stage @use tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    mono.wait @fill.flags[%c0, %c4] {mono.regions = ["w"]}
    // expected-error @+1 {{'mono.gemv_rows' op in stage 'use' is marked prefetched, but its weights 'w' are a scratch region the launch writes; they may be read only after the wait for their writer}}
    %y = mono.gemv_rows @w[%c0], @x[%c0] tokens 1 {mono.prefetched} : !mono.tile<32, f32>
  }
}
