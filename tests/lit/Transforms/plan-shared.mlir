// RUN: monodc-opt %s -split-input-file -mono-lower-tiles -mono-prepare-emission -mono-plan-shared -verify-diagnostics | FileCheck %s
// mono-plan-shared walks a task as a CTA runs it: small rearrangements via
// shared memory take one of three areas (the least recently used of those
// nobody has read since the last barrier) or read a tile an area still
// holds; a mono.sync goes before a rearrangement's write where another user
// has touched shared memory since the last barrier (always before a large
// one), and before any other user while small rearrangements' reads are in
// flight.

// CHECK-LABEL: mono.stage @areas
// CHECK: mono.slice %[[A:.*]][0] via shared {mono.area = 0 : i64}
// CHECK-NEXT: mono.slice %[[B:.*]][0] via shared {mono.area = 1 : i64}
// CHECK-NEXT: mono.slice %[[C:.*]][0] via shared {mono.area = 2 : i64}
// CHECK-NEXT: mono.slice %[[A]][64] via shared {mono.area = 0 : i64, mono.reuse}
// CHECK-NEXT: mono.slice %[[B]][64] via shared {mono.area = 1 : i64, mono.reuse}
// CHECK-NEXT: mono.sync {note = "every area has been read"}
// CHECK-NEXT: mono.slice %{{.*}}[0] via shared {mono.area = 2 : i64}
// CHECK-NEXT: mono.sync {note = "the rearrangements' reads are done"}
// CHECK-NEXT: mono.gemv_rows
// CHECK-NEXT: mono.sync{{$}}
// CHECK-NEXT: mono.slice %[[A]][0] via shared {mono.area = 0 : i64}
// CHECK-NEXT: mono.reduce sum %{{.*}} {mono.area = 1 : i64}
// CHECK-NEXT: mono.sync{{$}}
// CHECK-NEXT: mono.slice %{{.*}}[0] via shared {mono.area = 0 : i64}
// CHECK-NEXT: mono.slice %{{.*}}[0] via shared {mono.area = 1 : i64}
// CHECK-NEXT: mono.store
mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @w weight : bf16 [32, 2048]
  mono.region @x input : bf16 [1, 2048]
  mono.region @y output : f32 [1, 32]
  mono.stage @areas tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %a = mono.constant 1.0 : !mono.tile<128, f32>
    %b = mono.constant 2.0 : !mono.tile<128, f32>
    %c = mono.constant 3.0 : !mono.tile<128, f32>
    %d = mono.constant 4.0 : !mono.tile<128, f32>
    %big = mono.constant 5.0 : !mono.tile<2048, f32>
    %a0 = mono.slice %a[0] : !mono.tile<128, f32> -> !mono.tile<64, f32>
    %b0 = mono.slice %b[0] : !mono.tile<128, f32> -> !mono.tile<64, f32>
    %c0t = mono.slice %c[0] : !mono.tile<128, f32> -> !mono.tile<64, f32>
    %a1 = mono.slice %a[64] : !mono.tile<128, f32> -> !mono.tile<64, f32>
    %b1 = mono.slice %b[64] : !mono.tile<128, f32> -> !mono.tile<64, f32>
    %d0 = mono.slice %d[0] : !mono.tile<128, f32> -> !mono.tile<64, f32>
    %g = mono.gemv_rows @w[%c0], @x[%c0] tokens 1 : !mono.tile<32, f32>
    %a2 = mono.slice %a[0] : !mono.tile<128, f32> -> !mono.tile<32, f32>
    %s = mono.reduce sum %a : !mono.tile<128, f32> -> !mono.tile<1, f32>
    %l = mono.slice %big[0] : !mono.tile<2048, f32> -> !mono.tile<32, f32>
    %e = mono.slice %b[0] : !mono.tile<128, f32> -> !mono.tile<32, f32>
    mono.store %g, @y[%c0, %c0] : !mono.tile<32, f32>
  }
}

// -----

// A skip's block closes at the task's publish (or the body's end): the
// reads in flight inside it are settled there.
// CHECK-LABEL: mono.stage @skips
// CHECK: mono.skip_unless
// CHECK: mono.slice %{{.*}}[0] via shared {mono.area = 0 : i64}
// CHECK-NEXT: mono.sync {note = "the rearrangements' reads are done"}
// CHECK-NEXT: }
mono.launch @skip attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.stage @skips tasks 1 {
  ^bb0(%t: index):
    %n = arith.constant 1 : index
    mono.skip_unless %n
    %a = mono.constant 1.0 : !mono.tile<128, f32>
    %a0 = mono.slice %a[0] : !mono.tile<128, f32> -> !mono.tile<64, f32>
  }
}
