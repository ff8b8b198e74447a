// RUN: monodc-opt %s -split-input-file -mono-check-handoffs -mono-place-tasks -mono-plan-memory -mono-materialize-sync -verify-diagnostics | FileCheck %s
// Counted stores (a task writes only the first `count` of its rows): each
// task's window is its whole block of rows, so one writer a word is still a
// static proof; which rows hold data is known at run time only, so a later
// stage may read the region at rows given by data and nowhere else.

// Two slots of 4 rows, each writing as many rows as @counts says; @pick
// reads a row from data and waits for both @fill tasks.
// CHECK-LABEL: mono.launch @slots
// CHECK: mono.stage @fill
// CHECK: mono.store %{{.*}}, @d[%{{.*}}, %{{.*}}] count %{{.*}} {rows = 4 : i64}
// CHECK: mono.stage @pick
// CHECK: mono.to_index
// CHECK-NEXT: %[[FIRST:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[COUNT:.*]] = arith.constant 2 : index
// CHECK-NEXT: mono.wait @fill.flags[%[[FIRST]], %[[COUNT]]] {mono.regions = ["d"]}
// CHECK-NEXT: mono.load @d[%{{.*}}, %{{.*}}]
mono.launch @slots attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @counts input : f32 [1, 2]
  mono.region @where input : f32 [1, 1]
  mono.region @d scratch : f32 [8, 16]
  mono.region @y output : f32 [1, 16]
  mono.stage @fill tasks 2 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %n = mono.load @counts[%c0, %t] : !mono.tile<1, f32>
    %count = mono.to_index %n : !mono.tile<1, f32>
    %row = arith.muli %t, %c4 : index
    %v = mono.constant 1.0 : !mono.tile<64, f32>
    mono.store %v, @d[%row, %c0] count %count {rows = 4 : i64} : !mono.tile<64, f32>
  }
  mono.stage @pick tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %w = mono.load @where[%t, %c0] : !mono.tile<1, f32>
    %row = mono.to_index %w : !mono.tile<1, f32>
    %v = mono.load @d[%row, %c0] : !mono.tile<16, f32>
    mono.store %v, @y[%t, %c0] : !mono.tile<16, f32>
  }
}

// -----

// A read at a fixed row could land past the count.
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
    %row = arith.muli %t, %c4 : index
    %v = mono.constant 1.0 : !mono.tile<64, f32>
    mono.store %v, @d[%row, %c0] count %count {rows = 4 : i64} : !mono.tile<64, f32>
  }
  mono.stage @pick tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    // expected-error @+1 {{task 0 of stage 'pick' reads region 'd' at fixed row 1, but stage 'fill' writes it with counted stores (rows past a task's count are left unwritten); read it at rows given by data}}
    %v = mono.load @d[%c1, %c0] : !mono.tile<16, f32>
    mono.store %v, @y[%t, %c0] : !mono.tile<16, f32>
  }
}

// -----

// The windows are whole: tasks 0 and 1 both claim row 3 even if the counts
// would keep them apart.
// expected-error @+4 {{tasks 0 and 1 of stage 'fill' both write region 'd' row 3 column 0}}
mono.launch @overlap attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @counts input : f32 [1, 2]
  mono.region @d scratch : f32 [8, 16]
  mono.stage @fill tasks 2 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %c3 = arith.constant 3 : index
    %n = mono.load @counts[%c0, %t] : !mono.tile<1, f32>
    %count = mono.to_index %n : !mono.tile<1, f32>
    %row = arith.muli %t, %c3 : index
    %v = mono.constant 1.0 : !mono.tile<64, f32>
    mono.store %v, @d[%row, %c0] count %count {rows = 4 : i64} : !mono.tile<64, f32>
  }
}
