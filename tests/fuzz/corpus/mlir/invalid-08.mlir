mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @w weight : bf16 [32, 64]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %a = mono.constant 1.0 : !mono.tile<32, f32>
    %o = mono.gemv @w [%c0], %a : !mono.tile<32, f32> -> !mono.tile<32, f32>
  }
}
