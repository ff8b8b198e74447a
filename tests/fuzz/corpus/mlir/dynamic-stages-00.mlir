mono.launch @moe attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64, mono.step_tag = 2 : i64, mono.ends_step = true} {
  mono.region @x input : f32 [1, 64]
  mono.region @a scratch : f32 [4, 64]
  mono.region @b scratch : f32 [8, 64]
  mono.region @y output : f32 [8, 64]
  mono.stage @fixed tasks 4 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %v = mono.load @x[%c0, %c0] : !mono.tile<64, f32>
    mono.store %v, @a[%t, %c0] : !mono.tile<64, f32>
  }
  mono.stage @up tasks 8 dynamic {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %r = arith.remui %t, %c4 : index
    %v = mono.load @a[%r, %c0] : !mono.tile<64, f32>
    mono.store %v, @b[%t, %c0] : !mono.tile<64, f32>
  }
  mono.stage @down tasks 8 dynamic {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %v = mono.load @b[%t, %c0] : !mono.tile<64, f32>
    mono.store %v, @y[%t, %c0] : !mono.tile<64, f32>
  }
}
