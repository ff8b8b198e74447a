// RUN: monodc-opt %s -split-input-file -mono-hoist-loads | FileCheck %s
// RUN: monodc-opt %s -split-input-file -mono-check-handoffs -mono-place-tasks -mono-plan-memory -mono-materialize-sync -mono-hoist-loads | FileCheck %s --check-prefix=SYNC

// A task that reduces one hand-off, stores, then reads a second hand-off
// and a weight. The weight's load and the index arithmetic go to the top
// (past the reduction's barrier and the store; independent movers may end
// up in the reverse of their order, which nothing depends on); the second
// hand-off's load passes the tile operations but not the store.
mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 2 : i64} {
  mono.region @x input : f32 [2, 64]
  mono.region @w weight : f32 [1, 64]
  mono.region @a scratch : f32 [2, 64]
  mono.region @b scratch : f32 [2, 64]
  mono.region @y output : f32 [2, 64]
  mono.region @z output : f32 [2, 64]
  mono.stage @produce tasks 2 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %v = mono.load @x[%t, %c0] : !mono.tile<64, f32>
    mono.store %v, @a[%t, %c0] : !mono.tile<64, f32>
    mono.store %v, @b[%t, %c0] : !mono.tile<64, f32>
  }
  mono.stage @consume tasks 2 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %a = mono.load @a[%t, %c0] : !mono.tile<64, f32>
    %m = mono.reduce max %a : !mono.tile<64, f32> -> !mono.tile<1, f32>
    %d = mono.sub %a, %m : !mono.tile<64, f32>, !mono.tile<1, f32> -> !mono.tile<64, f32>
    mono.store %d, @y[%t, %c0] : !mono.tile<64, f32>
    %c1 = arith.constant 1 : index
    %row = arith.subi %c1, %t : index
    %b = mono.load @b[%row, %c0] : !mono.tile<64, f32>
    %w = mono.load @w[%c0, %c0] : !mono.tile<64, f32>
    %s = mono.add %b, %w : !mono.tile<64, f32>, !mono.tile<64, f32> -> !mono.tile<64, f32>
    mono.store %s, @z[%t, %c0] : !mono.tile<64, f32>
  }
}

// CHECK-LABEL: mono.stage @consume
// CHECK-NEXT: ^bb0(%[[T:.*]]: index):
// CHECK-NEXT: %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[ROW:.*]] = arith.subi %[[C1]], %[[T]]
// CHECK-NEXT: %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[W:.*]] = mono.load @w[%[[C0]], %[[C0]]]
// CHECK-NEXT: %[[A:.*]] = mono.load @a[%[[T]], %[[C0]]]
// CHECK-NEXT: mono.reduce max %[[A]]
// CHECK-NEXT: mono.sub
// CHECK-NEXT: mono.store {{.*}} @y
// CHECK-NEXT: %[[B:.*]] = mono.load @b[%[[ROW]], %[[C0]]]
// CHECK-NEXT: mono.add %[[B]], %[[W]]

// With the hand-offs' wait in place (one for both: one producer), the
// weight still goes first (a wait orders hand-offs only) and the hand-offs'
// loads stay after it.
// SYNC-LABEL: mono.stage @consume
// SYNC: mono.load @w
// SYNC-NEXT: mono.wait @produce.flags{{.*}}["a", "b"]
// SYNC-NEXT: mono.load @a
// SYNC: mono.store {{.*}} @y
// SYNC-NEXT: mono.load @b
