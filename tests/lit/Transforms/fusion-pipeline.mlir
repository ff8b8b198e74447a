// RUN: monodc-opt %s -mono-place-tasks | FileCheck %s --check-prefix=PLACE
// RUN: monodc-opt %s -mono-place-tasks -mono-plan-memory | FileCheck %s --check-prefix=PLAN
// RUN: monodc-opt %s -mono-check-handoffs -mono-place-tasks -mono-plan-memory -mono-materialize-sync | FileCheck %s --check-prefix=SYNC
// RUN: monodc-opt %s -mono-place-tasks -mono-plan-memory -mono-materialize-sync=tag-offset=2\ advance-epoch=false | FileCheck %s --check-prefix=TAG2

mono.launch @l attributes {arch = "gfx950", grid = 5 : i64, block = 256 : i64, rows = 2 : i64} {
  mono.region @x input : f32 [2, 64]
  mono.region @s scratch : f32 [2, 64]
  mono.region @t scratch : bf16 [2, 64]
  mono.region @y output : f32 [2, 64]
  mono.stage @produce tasks 4 {
  ^bb0(%t: index):
    %c2 = arith.constant 2 : index
    %c32 = arith.constant 32 : index
    %row = arith.divui %t, %c2 : index
    %half = arith.remui %t, %c2 : index
    %col = arith.muli %half, %c32 : index
    %v = mono.load @x[%row, %col] : !mono.tile<32, f32>
    mono.store %v, @s[%row, %col] : !mono.tile<32, f32>
    %b = mono.cast %v : !mono.tile<32, f32> to !mono.tile<32, bf16>
    mono.store %b, @t[%row, %col] : !mono.tile<32, bf16>
  }
  mono.stage @consume tasks 2 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %v = mono.load @s[%t, %c0] : !mono.tile<64, f32>
    mono.store %v, @y[%t, %c0] : !mono.tile<64, f32>
  }
}

// Bases rotate: the second stage starts after the 4 CTAs the first used.
// PLACE: mono.stage @produce tasks 4 attributes {mono.base = 0 : i64}
// PLACE: mono.stage @consume tasks 2 attributes {mono.base = 4 : i64}

// Scratch regions 256 B aligned, then a flags region per stage (8 B a task)
// and the epoch buffer (2 + grid + 256 words).
// PLAN: mono.launch @l attributes {{{.*}}mono.scratch_bytes = 1280 : i64
// PLAN: mono.region @s scratch : f32 [2, 64] {mono.offset = 0 : i64}
// PLAN: mono.region @t scratch : bf16 [2, 64] {mono.offset = 512 : i64}
// PLAN: mono.region @produce.flags flags : i64 [4] {mono.offset = 768 : i64}
// PLAN: mono.region @consume.flags flags : i64 [2] {mono.offset = 1024 : i64}
// PLAN: mono.region @epoch epoch : i32 [271]

// The producer publishes; the consumer task t waits on producer tasks
// [2t, 2t + 2) before it reads.
// SYNC: mono.launch @l attributes {{{.*}}mono.advance_epoch = true{{.*}}mono.tag_offset = 1 : i64
// SYNC: mono.stage @produce
// SYNC: mono.publish @produce.flags[%arg0]
// SYNC-NEXT: }
// SYNC: mono.stage @consume
// SYNC: %[[C2:.*]] = arith.constant 2 : index
// SYNC: %[[FIRST:.*]] = arith.muli %arg0, %[[C2]] : index
// SYNC: %[[COUNT:.*]] = arith.constant 2 : index
// SYNC: mono.wait @produce.flags[%[[FIRST]], %[[COUNT]]] {mono.regions = ["s"]}
// SYNC-NEXT: mono.load @s
// SYNC-NOT: mono.publish

// The K2 flavour: tags 2e+2, and this launch does not end the step.
// TAG2: mono.launch @l attributes {{{.*}}mono.advance_epoch = false{{.*}}mono.tag_offset = 2 : i64
