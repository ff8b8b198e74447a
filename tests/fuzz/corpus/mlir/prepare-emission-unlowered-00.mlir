mono.launch @unlowered attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @w weight : bf16 [32, 128]
  mono.region @x input : bf16 [1, 128]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %y = mono.gemv_rows @w[%c0], @x[%c0] tokens 1 : !mono.tile<32, f32>
  }
}
