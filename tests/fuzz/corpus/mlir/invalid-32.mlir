mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @y output : f32 [4, 16]
  mono.stage @s tasks 4 {
  ^bb0(%t: index):
    %c1 = arith.constant 1 : index
    mono.skip_unless %c1
    mono.skip_unless %c1
  }
}
