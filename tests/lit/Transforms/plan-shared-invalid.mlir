// RUN: monodc-opt %s -mono-plan-shared -verify-diagnostics
// It runs after mono-lower-tiles: a rearrangement without a `via` is refused.
mono.launch @novia attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64, mono.lds_bytes = 4 : i64} {
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %a = mono.constant 1.0 : !mono.tile<128, f32>
    // expected-error @+1 {{'mono.slice' op has no `via`: run mono-lower-tiles before mono-plan-shared}}
    %a0 = mono.slice %a[0] : !mono.tile<128, f32> -> !mono.tile<64, f32>
  }
}
