// RUN: monodc-opt %s -split-input-file -mono-check-handoffs -mono-place-tasks -mono-plan-memory -mono-materialize-sync -verify-diagnostics | FileCheck %s
// Dynamic stages claim their tasks through the step's counters: materialize-
// sync numbers them (two a launch at most). A launch that declares its place
// in the step (mono.step_tag, mono.ends_step) overrides the pass options.

// CHECK-LABEL: mono.launch @moe
// CHECK-SAME: mono.advance_epoch = true
// CHECK-SAME: mono.tag_offset = 2
// CHECK: mono.stage @fixed tasks 4 attributes {mono.base = 0 : i64}
// @up's task ends with its publish (@down reads it): the publish hands the
// block its next task (mono.hand_over); @down publishes nothing.
// CHECK: mono.stage @up tasks 8 dynamic attributes {mono.base = {{[0-9]+}} : i64, mono.claim = 0 : i64, mono.hand_over}
// CHECK: mono.stage @down tasks 8 dynamic attributes {mono.base = {{[0-9]+}} : i64, mono.claim = 1 : i64}
mono.launch @moe attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64, mono.step_tag = 2 : i64, mono.ends_step = true} {
  mono.region @x input : f32 [1, 64]
  mono.region @a scratch : f32 [4, 64]
  mono.region @b scratch : f32 [8, 64]
  mono.region @y output : f32 [8, 64]
  mono.stage @fixed tasks 4 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %v = mono.load @x[%c0, %c0] : !mono.tile<64, f32>
    mono.store %v, @a[%t, %c0] : !mono.tile<64, f32>
  }
  mono.stage @up tasks 8 dynamic {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %r = arith.remui %t, %c4 : index
    %v = mono.load @a[%r, %c0] : !mono.tile<64, f32>
    mono.store %v, @b[%t, %c0] : !mono.tile<64, f32>
  }
  mono.stage @down tasks 8 dynamic {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %v = mono.load @b[%t, %c0] : !mono.tile<64, f32>
    mono.store %v, @y[%t, %c0] : !mono.tile<64, f32>
  }
}

// -----

mono.launch @three attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @y0 output : f32 [1, 64]
  mono.region @y1 output : f32 [1, 64]
  mono.region @y2 output : f32 [1, 64]
  mono.stage @s0 tasks 1 dynamic {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %v = mono.constant 1.0 : !mono.tile<64, f32>
    mono.store %v, @y0[%c0, %c0] : !mono.tile<64, f32>
  }
  mono.stage @s1 tasks 1 dynamic {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %v = mono.constant 1.0 : !mono.tile<64, f32>
    mono.store %v, @y1[%c0, %c0] : !mono.tile<64, f32>
  }
  // expected-error @+1 {{is the launch's third dynamic stage; a launch has 2 task counters a step}}
  mono.stage @s2 tasks 1 dynamic {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %v = mono.constant 1.0 : !mono.tile<64, f32>
    mono.store %v, @y2[%c0, %c0] : !mono.tile<64, f32>
  }
}
