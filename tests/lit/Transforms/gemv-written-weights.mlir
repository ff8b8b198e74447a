// RUN: monodc-opt %s -split-input-file -mono-check-handoffs -mono-place-tasks -mono-plan-memory -mono-materialize-sync -mono-hoist-loads -mono-plan-waits -verify-diagnostics | FileCheck %s
// A GEMV's weights (and their scales) in a region the launch writes are a
// hand-off: the GEMV waits for the tasks that write the rows it reads, and
// they are not prefetched (loaded before that wait). Read-only weights are
// (plan-waits.mlir).

// @use's task t reads weight rows [4t, 4t + 4), which @fill's tasks 4t..4t+3
// write: it waits for those four flags, then reads the weights.
// CHECK-LABEL: mono.launch @rows
// CHECK: mono.stage @use
// CHECK: %[[COUNT:.*]] = arith.constant 4 : index
// CHECK-NEXT: %[[STRIDE:.*]] = arith.constant 4 : index
// CHECK-NEXT: %[[FIRST:.*]] = arith.muli %arg0, %[[STRIDE]] : index
// CHECK: mono.wait @fill.flags[%[[FIRST]], %[[COUNT]]] {mono.regions = ["w"]}
// CHECK-NEXT: mono.gemv_rows @w[%{{.*}}], @x[%{{.*}}] tokens 1 : <4, f32>
mono.launch @rows attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @src input : bf16 [8, 64]
  mono.region @x input : bf16 [1, 64]
  mono.region @w scratch : bf16 [8, 64]
  mono.region @y output : f32 [2, 4]
  mono.stage @fill tasks 8 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %v = mono.load @src[%t, %c0] : !mono.tile<64, bf16>
    mono.store %v, @w[%t, %c0] : !mono.tile<64, bf16>
  }
  mono.stage @use tasks 2 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %row = arith.muli %t, %c4 : index
    %o = mono.gemv_rows @w[%row], @x[%c0] tokens 1 : <4, f32>
    mono.store %o, @y[%t, %c0] : !mono.tile<4, f32>
  }
}

// -----

// E4m3 weights (read-only) with scales a stage writes: a scale row covers 32
// weight rows, so @use's task t (rows [32t, 32t + 32)) waits for @scale's
// task t alone, the writer of scale row t.
// CHECK-LABEL: mono.launch @scales
// CHECK: mono.stage @use
// CHECK: %[[ONE:.*]] = arith.constant 1 : index
// CHECK: mono.wait @scale.flags[%arg0, %[[ONE]]] {mono.regions = ["ws"]}
// CHECK-NEXT: mono.gemv_rows @w scaled @ws[%{{.*}}], @xq scaled @xs[%{{.*}}] tokens 1 : <32, f32>
mono.launch @scales attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @wsrc input : f8E8M0FNU [2, 4]
  mono.region @xq input : f8E4M3FN [1, 128]
  mono.region @xs input : f8E8M0FNU [1, 4]
  mono.region @w weight : f8E4M3FN [64, 128]
  mono.region @ws scratch : f8E8M0FNU [2, 4]
  mono.region @y output : f32 [2, 32]
  mono.stage @scale tasks 2 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %v = mono.load @wsrc[%t, %c0] : !mono.tile<4, f8E8M0FNU>
    mono.store %v, @ws[%t, %c0] : !mono.tile<4, f8E8M0FNU>
  }
  mono.stage @use tasks 2 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %c32 = arith.constant 32 : index
    %row = arith.muli %t, %c32 : index
    %o = mono.gemv_rows @w scaled @ws[%row], @xq scaled @xs[%c0] tokens 1 : <32, f32>
    mono.store %o, @y[%t, %c0] : !mono.tile<32, f32>
  }
}

// -----

// Scratch weights that no stage writes: the wait would never end.
mono.launch @unwritten attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @x input : bf16 [1, 64]
  mono.region @w scratch : bf16 [8, 64]
  mono.region @y output : f32 [1, 8]
  mono.stage @use tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{stage 'use' reads scratch region 'w' which no stage of the launch writes}}
    %o = mono.gemv_rows @w[%c0], @x[%c0] tokens 1 : <8, f32>
    mono.store %o, @y[%t, %c0] : !mono.tile<8, f32>
  }
}

// -----

// Weight rows the writer stage leaves unwritten: rows 4..7 of @w.
mono.launch @short attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @src input : bf16 [8, 64]
  mono.region @x input : bf16 [1, 64]
  mono.region @w scratch : bf16 [8, 64]
  mono.region @y output : f32 [1, 8]
  mono.stage @fill tasks 4 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %v = mono.load @src[%t, %c0] : !mono.tile<64, bf16>
    mono.store %v, @w[%t, %c0] : !mono.tile<64, bf16>
  }
  mono.stage @use tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{task 0 of stage 'use' reads row 4 columns [0, 64) of region 'w', which no task of stage 'fill' writes}}
    %o = mono.gemv_rows @w[%c0], @x[%c0] tokens 1 : <8, f32>
    mono.store %o, @y[%t, %c0] : !mono.tile<8, f32>
  }
}

// -----

// A scale row the writer leaves unwritten: weight rows [32, 64) take scale
// row 1, which @scale (one task, row 0) does not write.
mono.launch @short_scales attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @wsrc input : f8E8M0FNU [2, 4]
  mono.region @xq input : f8E4M3FN [1, 128]
  mono.region @xs input : f8E8M0FNU [1, 4]
  mono.region @w weight : f8E4M3FN [64, 128]
  mono.region @ws scratch : f8E8M0FNU [2, 4]
  mono.region @y output : f32 [1, 32]
  mono.stage @scale tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %v = mono.load @wsrc[%t, %c0] : !mono.tile<4, f8E8M0FNU>
    mono.store %v, @ws[%t, %c0] : !mono.tile<4, f8E8M0FNU>
  }
  mono.stage @use tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %c32 = arith.constant 32 : index
    // expected-error @+1 {{task 0 of stage 'use' reads row 1 columns [0, 4) of region 'ws', which no task of stage 'scale' writes}}
    %o = mono.gemv_rows @w scaled @ws[%c32], @xq scaled @xs[%c0] tokens 1 : <32, f32>
    mono.store %o, @y[%t, %c0] : !mono.tile<32, f32>
  }
}

// -----

// The token comes from @quant and the weights from @fill: two waits, and
// the weights are still not prefetched (read-only weights after the same
// waits would be).
// CHECK-LABEL: mono.launch @two_writers
// CHECK: mono.stage @use
// CHECK: mono.wait @fill.flags[%{{.*}}, %{{.*}}] {mono.polled_once, mono.regions = ["w"]}
// CHECK-NEXT: mono.wait @quant.flags[%{{.*}}, %{{.*}}] {mono.polled_once, mono.regions = ["xs"]}
// CHECK-NEXT: mono.gemv_rows @w[%{{.*}}], @xs[%{{.*}}] tokens 1 : <8, f32>
mono.launch @two_writers attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @src input : bf16 [8, 64]
  mono.region @x input : bf16 [1, 64]
  mono.region @w scratch : bf16 [8, 64]
  mono.region @xs scratch : bf16 [1, 64]
  mono.region @y output : f32 [1, 8]
  mono.stage @fill tasks 8 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %v = mono.load @src[%t, %c0] : !mono.tile<64, bf16>
    mono.store %v, @w[%t, %c0] : !mono.tile<64, bf16>
  }
  mono.stage @quant tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %v = mono.load @x[%t, %c0] : !mono.tile<64, bf16>
    mono.store %v, @xs[%t, %c0] : !mono.tile<64, bf16>
  }
  mono.stage @use tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %o = mono.gemv_rows @w[%c0], @xs[%c0] tokens 1 : <8, f32>
    mono.store %o, @y[%t, %c0] : !mono.tile<8, f32>
  }
}
