mono.launch @slots attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @counts input : f32 [1, 2]
  mono.region @where input : f32 [1, 1]
  mono.region @d scratch : f32 [8, 16]
  mono.region @y output : f32 [1, 16]
  mono.stage @fill tasks 2 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %n = mono.load @counts[%c0, %t] : !mono.tile<1, f32>
    %count = mono.to_index %n : !mono.tile<1, f32>
    %row = arith.muli %t, %c4 : index
    %v = mono.constant 1.0 : !mono.tile<64, f32>
    mono.store %v, @d[%row, %c0] count %count {rows = 4 : i64} : !mono.tile<64, f32>
  }
  mono.stage @pick tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %w = mono.load @where[%t, %c0] : !mono.tile<1, f32>
    %row = mono.to_index %w : !mono.tile<1, f32>
    %v = mono.load @d[%row, %c0] : !mono.tile<16, f32>
    mono.store %v, @y[%t, %c0] : !mono.tile<16, f32>
  }
}
