// RUN: monodc-opt %s -split-input-file -mono-check-handoffs -mono-place-tasks -mono-plan-memory -mono-materialize-sync -mono-hoist-loads -mono-plan-waits -mono-lower-tiles -mono-prepare-emission | FileCheck %s --check-prefix=FUSED
// RUN: monodc-opt %s -split-input-file -mono-check-handoffs -mono-place-tasks -mono-plan-memory -mono-materialize-sync -mono-hoist-loads -mono-plan-waits -mono-lower-tiles -mono-prepare-emission -mono-unfuse | FileCheck %s
// RUN: not monodc-opt %s -split-input-file -mono-unfuse -o /dev/null 2>&1 | FileCheck %s --check-prefix=RAW
// The unfused baseline: the stream orders the stage kernels, so the
// mailboxes inside a rank, the claimed placement, the once-polled waits, the
// weights loaded before a poll and the stage functions go; the memory plan,
// the tags and the shared memory stay, and the launch is marked.

// FUSED: mono.stage @fixed
// FUSED: mono.publish
// FUSED: mono.stage @up {{.*}}mono.claim = 0
// FUSED: mono.wait {{.*}}mono.polled_once
// FUSED: mono.gemv_rows {{.*}}mono.prefetched

// CHECK-LABEL: mono.launch @moe
// CHECK-SAME: mono.lds_bytes =
// CHECK-SAME: mono.scratch_bytes =
// CHECK-SAME: mono.tag_offset = 2
// CHECK-SAME: mono.unfused
// CHECK-NOT: mono.stage_calls
// CHECK: mono.stage @fixed tasks 4 attributes {mono.base = 0 : i64}
// CHECK-NOT: mono.publish
// CHECK: mono.stage @up tasks 8 dynamic attributes {mono.base = 0 : i64}
// CHECK-NOT: mono.wait
// CHECK: mono.gemv_rows
// CHECK-NOT: mono.prefetched
// CHECK-NOT: mono.publish
// CHECK: }
mono.launch @moe attributes {arch = "sm_90", grid = 4 : i64, block = 256 : i64, rows = 1 : i64, mono.step_tag = 2 : i64, mono.ends_step = true} {
  mono.region @x input : f32 [1, 64]
  mono.region @w weight : bf16 [256, 64]
  mono.region @a scratch : f32 [4, 64]
  mono.region @y output : f32 [8, 256]
  mono.stage @fixed tasks 4 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %v = mono.load @x[%c0, %c0] : !mono.tile<64, f32>
    mono.store %v, @a[%t, %c0] : !mono.tile<64, f32>
  }
  mono.stage @up tasks 8 dynamic {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %c3 = arith.constant 3 : index
    %g = mono.gemv_rows @w[%c0], @a[%c3] tokens 1 : !mono.tile<256, f32>
    mono.store %g, @y[%t, %c0] : !mono.tile<256, f32>
  }
}

// -----

// Run on launches that have not been prepared for emission, it refuses each.
// RAW: error: 'mono.launch' op has not been prepared for emission; run mono-unfuse after mono-prepare-emission
// RAW: error: 'mono.launch' op has not been prepared for emission; run mono-unfuse after mono-prepare-emission
mono.launch @raw attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @x input : f32 [1, 64]
  mono.region @y output : f32 [1, 64]
  mono.stage @copy tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %v = mono.load @x[%c0, %c0] : !mono.tile<64, f32>
    mono.store %v, @y[%c0, %c0] : !mono.tile<64, f32>
  }
}
