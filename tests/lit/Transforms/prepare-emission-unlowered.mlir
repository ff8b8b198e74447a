// RUN: monodc-opt %s -mono-prepare-emission -verify-diagnostics

// A gemv_rows or attend_chunk whose building block mono-lower-tiles has not
// chosen is refused: the printer decides nothing.
mono.launch @unlowered attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @w weight : bf16 [32, 128]
  mono.region @x input : bf16 [1, 128]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{'mono.gemv_rows' op has no lowering: mono-lower-tiles chooses its building block before the emission is prepared}}
    %y = mono.gemv_rows @w[%c0], @x[%c0] tokens 1 : !mono.tile<32, f32>
  }
}

mono.launch @unloweredattend attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @slots input : f32 [1, 64] {index_bound = 64 : i64}
  mono.region @q input : bf16 [1, 256]
  mono.region @cache input : i8 [2, 6400]
  mono.stage @attend tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %s = mono.load @slots[%t, %c0] : !mono.tile<64, f32>
    // expected-error @+1 {{'mono.attend_chunk' op has no lowering: mono-lower-tiles chooses its building block before the emission is prepared}}
    %m, %l, %p = mono.attend_chunk @q[%t, %c0], @cache[%s] {heads = 2 : i64, headDim = 128 : i64, ropeDim = 64 : i64} : !mono.tile<64, f32> -> !mono.tile<2, f32>, !mono.tile<2, f32>, !mono.tile<256, f32>
  }
}

// A preset lowering the target cannot run is refused here too, with
// lower-tiles' reason, before its shape is sized (run alone, prepare-emission
// used to divide by zero on this one: rows below a tile).
mono.launch @presetwarpmma attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @w weight : bf16 [8, 128]
  mono.region @x input : bf16 [1, 128]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{'mono.gemv_rows' op lowered to warp_mma: the 16x8x16 f16 warp mma path does not serve this GEMV on gfx950}}
    %y = mono.gemv_rows @w[%c0], @x[%c0] tokens 1 lowered to warp_mma : !mono.tile<8, f32>
  }
}

// A rearrangement whose `via` mono-lower-tiles has not chosen is refused
// too, and a preset one it cannot take, with lower-tiles' reason.
mono.launch @unloweredvia attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %x = mono.constant 1.0 : !mono.tile<64, f32>
    // expected-error @+1 {{'mono.slice' op has no `via`: mono-lower-tiles chooses how it moves its values before the emission is prepared}}
    %a = mono.slice %x[0] : !mono.tile<64, f32> -> !mono.tile<32, f32>
  }
}

mono.launch @presetvia attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %x = mono.constant 1.0 : !mono.tile<64, f32>
    // expected-error @+1 {{'mono.slice' op via shuffle: shuffles need an input of at most a wave (64 values) and a result of 2 to 64 values}}
    %a = mono.slice %x[3] via shuffle : !mono.tile<64, f32> -> !mono.tile<1, f32>
  }
}

// A reduction marked to print with an expand that does not take its result
// alone is refused.
mono.launch @badpair attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %x = mono.constant 1.0 : !mono.tile<64, f32>
    // expected-error @+1 {{'mono.reduce' op is paired with an expand (mono.with_expand), but no expand of the same shape and axis takes its result alone}}
    %m = mono.reduce max %x via shuffle {shape = array<i64: 4, 16>, axis = 1 : i64, mono.with_expand} : !mono.tile<64, f32> -> !mono.tile<4, f32>
  }
}
