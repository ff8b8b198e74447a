mono.launch @good attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 2 : i64} {
  mono.region @x input : f32 [2, 64]
  mono.region @s scratch : f32 [2, 64]
  mono.region @y output : f32 [2, 64]
  mono.stage @produce tasks 4 {
  ^bb0(%t: index):
    %c2 = arith.constant 2 : index
    %c32 = arith.constant 32 : index
    %row = arith.divui %t, %c2 : index
    %half = arith.remui %t, %c2 : index
    %col = arith.muli %half, %c32 : index
    %v = mono.load @x[%row, %col] : !mono.tile<32, f32>
    mono.store %v, @s[%row, %col] : !mono.tile<32, f32>
  }
  mono.stage @consume tasks 2 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %v = mono.load @s[%t, %c0] : !mono.tile<64, f32>
    mono.store %v, @y[%t, %c0] : !mono.tile<64, f32>
  }
}
