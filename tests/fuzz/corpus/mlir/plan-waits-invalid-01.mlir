mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @p.flags flags : i64 [4]
  mono.region @w weight : bf16 [32, 128]
  mono.region @x input : bf16 [1, 128]
  mono.stage @s tasks 4 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    mono.wait @p.flags[%c0, %c4]
    %c32 = arith.constant 32 : index
    %row = arith.muli %t, %c32 : index
    %y = mono.gemv_rows @w[%row], @x[%c0] tokens 1 {mono.prefetched} : !mono.tile<32, f32>
  }
}
