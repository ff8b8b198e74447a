mono.launch @slots attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @counts input : f32 [1, 2]
  mono.region @w weight : f8E4M3FN [16, 64]
  mono.region @ws weight : f8E8M0FNU [1, 2]
  mono.region @h scratch : f8E4M3FN [8, 64]
  mono.region @hs scratch : f8E8M0FNU [8, 2]
  mono.region @y output : f32 [2, 64]
  mono.stage @up tasks 2 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %n = mono.load @counts[%c0, %t] : !mono.tile<1, f32>
    %count = mono.to_index %n : !mono.tile<1, f32>
    mono.skip_unless %count
    %row = arith.muli %t, %c4 : index
    %v = mono.constant 1.0 : !mono.tile<256, f32>
    %codes, %scales = mono.quantize_mxfp8 standard %v : !mono.tile<256, f32> -> !mono.tile<256, f8E4M3FN>, !mono.tile<8, f8E8M0FNU>
    mono.store %codes, @h[%row, %c0] {rows = 4 : i64} : !mono.tile<256, f8E4M3FN>
    mono.store %scales, @hs[%row, %c0] {rows = 4 : i64} : !mono.tile<8, f8E8M0FNU>
  }
  mono.stage @down tasks 2 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %n = mono.load @counts[%c0, %t] : !mono.tile<1, f32>
    %count = mono.to_index %n : !mono.tile<1, f32>
    %row = arith.muli %t, %c4 : index
    %d = mono.gemv_rows @w scaled @ws[%c0], @h scaled @hs[%row] tokens 4 count %count : !mono.tile<64, f32>
    %first = mono.slice %d[0] : !mono.tile<64, f32> -> !mono.tile<16, f32>
    mono.store %first, @y[%t, %c0] : !mono.tile<16, f32>
  }
}
