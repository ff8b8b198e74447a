// RUN: monodc-opt %s -split-input-file -mono-check-handoffs -mono-place-tasks -mono-plan-memory -mono-materialize-sync -verify-diagnostics | FileCheck %s
// Tasks that skip their work (mono.skip_unless: a slot with no tokens) write
// nothing then, so what they store after the skip is read as a counted
// store's: at rows given by data, or at fixed rows by a gemv_rows counted
// by the very word the writer skipped on (a skipped writer's rows are then
// never read). The skipping task still publishes.

// Two slots of 4 tokens; @up quantizes a slot's tokens unless its count is
// 0, @down reads them through a gemv_rows counted by the same @counts word.
// CHECK-LABEL: mono.launch @slots
// CHECK: mono.stage @up
// CHECK: mono.skip_unless
// CHECK: mono.store
// CHECK: mono.publish @up.flags
// CHECK: mono.stage @down
// CHECK: mono.wait @up.flags
// CHECK-NEXT: mono.gemv_rows
mono.launch @slots attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @counts input : f32 [1, 2]
  mono.region @w weight : f8E4M3FN [16, 64]
  mono.region @ws weight : f8E8M0FNU [1, 2]
  mono.region @h scratch : f8E4M3FN [8, 64]
  mono.region @hs scratch : f8E8M0FNU [8, 2]
  mono.region @y output : f32 [2, 64]
  mono.stage @up tasks 2 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %n = mono.load @counts[%c0, %t] : !mono.tile<1, f32>
    %count = mono.to_index %n : !mono.tile<1, f32>
    mono.skip_unless %count
    %row = arith.muli %t, %c4 : index
    %v = mono.constant 1.0 : !mono.tile<256, f32>
    %codes, %scales = mono.quantize_mxfp8 standard %v : !mono.tile<256, f32> -> !mono.tile<256, f8E4M3FN>, !mono.tile<8, f8E8M0FNU>
    mono.store %codes, @h[%row, %c0] {rows = 4 : i64} : !mono.tile<256, f8E4M3FN>
    mono.store %scales, @hs[%row, %c0] {rows = 4 : i64} : !mono.tile<8, f8E8M0FNU>
  }
  mono.stage @down tasks 2 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %n = mono.load @counts[%c0, %t] : !mono.tile<1, f32>
    %count = mono.to_index %n : !mono.tile<1, f32>
    %row = arith.muli %t, %c4 : index
    %d = mono.gemv_rows @w scaled @ws[%c0], @h scaled @hs[%row] tokens 4 count %count : !mono.tile<64, f32>
    %first = mono.slice %d[0] : !mono.tile<64, f32> -> !mono.tile<16, f32>
    mono.store %first, @y[%t, %c0] : !mono.tile<16, f32>
  }
}

// -----

// A plain load at a fixed row could read a skipped writer's row.
mono.launch @fixed attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @counts input : f32 [1, 2]
  mono.region @d scratch : f32 [8, 16]
  mono.region @y output : f32 [1, 16]
  mono.stage @fill tasks 2 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %n = mono.load @counts[%c0, %t] : !mono.tile<1, f32>
    %count = mono.to_index %n : !mono.tile<1, f32>
    mono.skip_unless %count
    %row = arith.muli %t, %c4 : index
    %v = mono.constant 1.0 : !mono.tile<64, f32>
    mono.store %v, @d[%row, %c0] {rows = 4 : i64} : !mono.tile<64, f32>
  }
  mono.stage @pick tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %c5 = arith.constant 5 : index
    // expected-error @+1 {{task 0 of stage 'pick' reads region 'd' at fixed row 5, but stage 'fill' writes it in tasks that may skip (mono.skip_unless); read it at rows given by data, or through a gemv_rows counted by the same word as the writer's skip}}
    %v = mono.load @d[%c5, %c0] : !mono.tile<16, f32>
    mono.store %v, @y[%t, %c0] : !mono.tile<16, f32>
  }
}

// -----

// A gemv_rows counted by another word than the writer's skip: the writer
// may have skipped rows the reader reads.
mono.launch @otherword attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @counts input : f32 [2, 2]
  mono.region @w weight : f8E4M3FN [16, 64]
  mono.region @ws weight : f8E8M0FNU [1, 2]
  mono.region @h scratch : f8E4M3FN [8, 64]
  mono.region @hs scratch : f8E8M0FNU [8, 2]
  mono.region @y output : f32 [2, 64]
  mono.stage @up tasks 2 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %n = mono.load @counts[%c0, %t] : !mono.tile<1, f32>
    %count = mono.to_index %n : !mono.tile<1, f32>
    mono.skip_unless %count
    %row = arith.muli %t, %c4 : index
    %v = mono.constant 1.0 : !mono.tile<256, f32>
    %codes, %scales = mono.quantize_mxfp8 standard %v : !mono.tile<256, f32> -> !mono.tile<256, f8E4M3FN>, !mono.tile<8, f8E8M0FNU>
    mono.store %codes, @h[%row, %c0] {rows = 4 : i64} : !mono.tile<256, f8E4M3FN>
    mono.store %scales, @hs[%row, %c0] {rows = 4 : i64} : !mono.tile<8, f8E8M0FNU>
  }
  mono.stage @down tasks 2 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %n = mono.load @counts[%c1, %t] : !mono.tile<1, f32>
    %count = mono.to_index %n : !mono.tile<1, f32>
    %row = arith.muli %t, %c4 : index
    // expected-error @+1 {{task 0 of stage 'down' reads region 'h' at fixed row 0, but stage 'up' writes it in tasks that may skip}}
    %d = mono.gemv_rows @w scaled @ws[%c0], @h scaled @hs[%row] tokens 4 count %count : !mono.tile<64, f32>
    %first = mono.slice %d[0] : !mono.tile<64, f32> -> !mono.tile<16, f32>
    mono.store %first, @y[%t, %c0] : !mono.tile<16, f32>
  }
}

// -----

// A pad row's task (skip_unless pad) leaves rows nobody reads for a real
// row: a later stage reads them at fixed rows, as it would any row. The
// same stages without `pad` are refused above (@fixed).
// CHECK-LABEL: mono.launch @pad_rows
// CHECK: mono.skip_unless %{{.*}} pad
// CHECK: mono.stage @next
// CHECK: mono.wait @norm.flags
// CHECK: mono.load @u
mono.launch @pad_rows attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 4 : i64} {
  mono.region @slot_mapping input : f32 [4, 1]
  mono.region @u scratch : f32 [4, 16]
  mono.region @y output : f32 [4, 16]
  mono.stage @norm tasks 4 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %n = mono.load @slot_mapping[%t, %c0] : !mono.tile<1, f32>
    %count = mono.to_index %n : !mono.tile<1, f32>
    mono.skip_unless %count pad
    %v = mono.constant 1.0 : !mono.tile<16, f32>
    mono.store %v, @u[%t, %c0] : !mono.tile<16, f32>
  }
  mono.stage @next tasks 4 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %v = mono.load @u[%t, %c0] : !mono.tile<16, f32>
    mono.store %v, @y[%t, %c0] : !mono.tile<16, f32>
  }
}
