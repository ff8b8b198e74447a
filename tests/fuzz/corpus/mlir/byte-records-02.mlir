mono.launch @readback attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @slots input : f32 [1, 1] {index_bound = 4 : i64}
  mono.region @cache output : i8 [4, 16]
  mono.region @y output : f32 [1, 16]
  mono.stage @put tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %w = mono.load @slots[%t, %c0] : !mono.tile<1, f32>
    %slot = mono.to_index %w : !mono.tile<1, f32>
    %v = mono.constant 1.0 : !mono.tile<16, f32>
    %q = mono.cast %v : !mono.tile<16, f32> to !mono.tile<16, f8E4M3FN>
    mono.store %q, @cache[%c0, %c0] if %slot : !mono.tile<16, f8E4M3FN>
  }
  mono.stage @get tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %q = mono.load @cache[%c0, %c0] : !mono.tile<16, f8E4M3FN>
    %f = mono.cast %q : !mono.tile<16, f8E4M3FN> to !mono.tile<16, f32>
    mono.store %f, @y[%t, %c0] : !mono.tile<16, f32>
  }
}
