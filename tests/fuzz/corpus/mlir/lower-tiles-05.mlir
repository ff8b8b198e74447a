mono.launch @notmx attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 2 : i64} {
  mono.region @wb weight : bf16 [32, 2048]
  mono.region @xb input : bf16 [2, 2048]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %a = mono.gemv_rows @wb[%c0], @xb[%c0] tokens 2 lowered to scaled_mfma : !mono.tile<64, f32>
  }
}
