mono.launch @twowriters attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @s scratch : f32 [1, 64]
  mono.stage @a tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %v = mono.constant 1.0 : !mono.tile<64, f32>
    mono.store %v, @s[%t, %c0] : !mono.tile<64, f32>
  }
  mono.stage @b tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %v = mono.constant 2.0 : !mono.tile<64, f32>
    mono.store %v, @s[%t, %c0] : !mono.tile<64, f32>
  }
}
