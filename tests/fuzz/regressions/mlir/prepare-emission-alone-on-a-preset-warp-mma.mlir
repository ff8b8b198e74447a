mono.launch @nowarpmma attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 2 : i64} {
  mono.region @w weight : f8E4M3FN [32, 2048]
  mono.region @ws weight : f8E8M0FNU [1, 64]
  mono.region @x input : f8E4M3FN [2, 2048]
  mono.region @xs input : f8E8M0FNU [2, 64]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %a = mono.gemv_rows @w scaled @ws[%c0], @x scaled @xs[%c0] tokens 2 lowered to warp_mma : !mono.tile<28, f32>
  }
}
