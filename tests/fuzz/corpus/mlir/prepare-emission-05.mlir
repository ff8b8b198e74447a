mono.launch @mma4 attributes {arch = "sm_90", grid = 4 : i64, block = 256 : i64, rows = 2 : i64} {
  mono.region @w weight : f4E2M1FN [32, 2048]
  mono.region @ws weight : f8E8M0FNU [256, 64]
  mono.region @x input : f8E4M3FN [2, 2048]
  mono.region @xs input : f8E8M0FNU [2, 64]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %y = mono.gemv_rows @w scaled @ws[%c0], @x scaled @xs[%c0] tokens 2 : !mono.tile<64, f32>
  }
}
