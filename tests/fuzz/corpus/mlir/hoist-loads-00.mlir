mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 2 : i64} {
  mono.region @x input : f32 [2, 64]
  mono.region @w weight : f32 [1, 64]
  mono.region @a scratch : f32 [2, 64]
  mono.region @b scratch : f32 [2, 64]
  mono.region @y output : f32 [2, 64]
  mono.region @z output : f32 [2, 64]
  mono.stage @produce tasks 2 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %v = mono.load @x[%t, %c0] : !mono.tile<64, f32>
    mono.store %v, @a[%t, %c0] : !mono.tile<64, f32>
    mono.store %v, @b[%t, %c0] : !mono.tile<64, f32>
  }
  mono.stage @consume tasks 2 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %a = mono.load @a[%t, %c0] : !mono.tile<64, f32>
    %m = mono.reduce max %a : !mono.tile<64, f32> -> !mono.tile<1, f32>
    %d = mono.sub %a, %m : !mono.tile<64, f32>, !mono.tile<1, f32> -> !mono.tile<64, f32>
    mono.store %d, @y[%t, %c0] : !mono.tile<64, f32>
    %c1 = arith.constant 1 : index
    %row = arith.subi %c1, %t : index
    %b = mono.load @b[%row, %c0] : !mono.tile<64, f32>
    %w = mono.load @w[%c0, %c0] : !mono.tile<64, f32>
    %s = mono.add %b, %w : !mono.tile<64, f32>, !mono.tile<64, f32> -> !mono.tile<64, f32>
    mono.store %s, @z[%t, %c0] : !mono.tile<64, f32>
  }
}
