mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @w weight : f4E2M1FN [24, 128]
  mono.region @ws weight : f8E8M0FNU [256, 8]
  mono.region @x input : f8E4M3FN [1, 128]
  mono.region @xs input : f8E8M0FNU [1, 4]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %y = mono.gemv_rows @w scaled @ws[%c0], @x scaled @xs[%c0] tokens 1 : !mono.tile<8, f32>
  }
}
