mono.launch @amd attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 2 : i64} {
  mono.region @w weight : f8E4M3FN [32, 2048]
  mono.region @ws weight : f8E8M0FNU [1, 64]
  mono.region @w4 weight : f4E2M1FN [32, 2048]
  mono.region @ws4 weight : f8E8M0FNU [256, 64]
  mono.region @x input : f8E4M3FN [2, 2048]
  mono.region @xs input : f8E8M0FNU [2, 64]
  mono.region @wb weight : bf16 [32, 2048]
  mono.region @xb input : bf16 [2, 2048]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %a = mono.gemv_rows @w scaled @ws[%c0], @x scaled @xs[%c0] tokens 2 : !mono.tile<64, f32>
    %b = mono.gemv_rows @w4 scaled @ws4[%c0], @x scaled @xs[%c0] tokens 2 : !mono.tile<64, f32>
    %c = mono.gemv_rows @wb[%c0], @xb[%c0] tokens 2 : !mono.tile<64, f32>
  }
}
