mono.launch @overlap attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @s scratch : f32 [1, 64]
  mono.stage @w tasks 2 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %col = arith.muli %t, %c16 : index
    %v = mono.constant 1.0 : !mono.tile<32, f32>
    mono.store %v, @s[%c0, %col] : !mono.tile<32, f32>
  }
}
