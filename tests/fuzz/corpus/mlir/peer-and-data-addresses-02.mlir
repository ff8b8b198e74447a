mono.launch @holes attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @where input : f32 [1, 1]
  mono.region @s scratch : f32 [4, 64]
  mono.region @y output : f32 [1, 64]
  mono.stage @fill tasks 2 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %v = mono.constant 1.0 : !mono.tile<64, f32>
    mono.store %v, @s[%t, %c0] : !mono.tile<64, f32>
  }
  mono.stage @pick tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %w = mono.load @where[%t, %c0] : !mono.tile<1, f32>
    %row = mono.to_index %w : !mono.tile<1, f32>
    %v = mono.load @s[%row, %c0] : !mono.tile<64, f32>
    mono.store %v, @y[%t, %c0] : !mono.tile<64, f32>
  }
}
