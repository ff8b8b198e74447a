mono.launch @partial attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @w weight : f8E4M3FN [8, 2048]
  mono.region @ws weight : f8E8M0FNU [1, 64]
  mono.region @k weight : f8E4M3FN [32, 64]
  mono.region @ks weight : f8E8M0FNU [1, 2]
  mono.region @x input : f8E4M3FN [1, 2048]
  mono.region @xs input : f8E8M0FNU [1, 64]
  mono.region @y input : f8E4M3FN [1, 64]
  mono.region @ys input : f8E8M0FNU [1, 2]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %a = mono.gemv_rows @w scaled @ws[%c0], @x scaled @xs[%c0] tokens 1 : !mono.tile<8, f32>
    %b = mono.gemv_rows @k scaled @ks[%c0], @y scaled @ys[%c0] tokens 1 : !mono.tile<32, f32>
  }
}
