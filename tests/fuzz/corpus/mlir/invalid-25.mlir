mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 4 : i64} {
  mono.region @w weight : f8E4M3FN [16, 64]
  mono.region @ws weight : f8E8M0FNU [1, 2]
  mono.region @x input : f8E4M3FN [4, 64]
  mono.region @xs input : f8E8M0FNU [4, 2]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %c5 = arith.constant 5 : index
    %y = mono.gemv_rows @w scaled @ws[%c0], @x scaled @xs[%c0] tokens 4 count %c5 : !mono.tile<64, f32>
  }
}
