mono.launch @l attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 2 : i64} {
  mono.region @x input : f32 [2, 128]
  mono.region @xq scratch : f8E4M3FN [2, 128]
  mono.region @xs scratch : f8E8M0FNU [2, 4]
  mono.region @w weight : f8E4M3FN [64, 128]
  mono.region @ws weight : f8E8M0FNU [2, 4]
  mono.region @y output : f32 [2, 128]
  mono.region @z output : f32 [2, 128]
  mono.stage @quant tasks 2 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %v = mono.load @x[%t, %c0] : !mono.tile<128, f32>
    %q, %s = mono.quantize_mxfp8 standard %v : !mono.tile<128, f32> -> !mono.tile<128, f8E4M3FN>, !mono.tile<4, f8E8M0FNU>
    mono.store %q, @xq[%t, %c0] : !mono.tile<128, f8E4M3FN>
    mono.store %s, @xs[%t, %c0] : !mono.tile<4, f8E8M0FNU>
  }
  mono.stage @gemv tasks 2 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %c32 = arith.constant 32 : index
    %row = arith.muli %t, %c32 : index
    %o = mono.gemv_rows @w scaled @ws[%row], @xq scaled @xs[%c0] tokens 2 : !mono.tile<64, f32>
    %part = mono.slice %o[0] : !mono.tile<64, f32> -> !mono.tile<32, f32>
    mono.store %part, @y[%t, %row] : !mono.tile<32, f32>
  }
  mono.stage @rowwise tasks 2 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %q = mono.load @xq[%t, %c0] : !mono.tile<128, f8E4M3FN>
    %v = mono.cast %q : !mono.tile<128, f8E4M3FN> to !mono.tile<128, f32>
    mono.store %v, @z[%t, %c0] : !mono.tile<128, f32>
  }
}
