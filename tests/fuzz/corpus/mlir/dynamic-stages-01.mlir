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
  mono.stage @s2 tasks 1 dynamic {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %v = mono.constant 1.0 : !mono.tile<64, f32>
    mono.store %v, @y2[%c0, %c0] : !mono.tile<64, f32>
  }
}
