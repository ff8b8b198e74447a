mono.launch @overlap attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @counts input : f32 [1, 2]
  mono.region @d scratch : f32 [8, 16]
  mono.stage @fill tasks 2 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %c3 = arith.constant 3 : index
    %n = mono.load @counts[%c0, %t] : !mono.tile<1, f32>
    %count = mono.to_index %n : !mono.tile<1, f32>
    %row = arith.muli %t, %c3 : index
    %v = mono.constant 1.0 : !mono.tile<64, f32>
    mono.store %v, @d[%row, %c0] count %count {rows = 4 : i64} : !mono.tile<64, f32>
  }
}
