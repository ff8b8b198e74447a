mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @d output : f32 [8, 16]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %v = mono.constant 1.0 : !mono.tile<64, f32>
    mono.store %v, @d[%c0, %c0] if %c0 count %c2 {rows = 4 : i64} : !mono.tile<64, f32>
  }
}
