mono.launch @scratchy attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @slots input : f32 [1, 1] {index_bound = 4 : i64}
  mono.region @s scratch : i8 [4, 16]
  mono.stage @put tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %w = mono.load @slots[%t, %c0] : !mono.tile<1, f32>
    %slot = mono.to_index %w : !mono.tile<1, f32>
    %v = mono.constant 1.0 : !mono.tile<16, f32>
    %q = mono.cast %v : !mono.tile<16, f32> to !mono.tile<16, f8E4M3FN>
    mono.store %q, @s[%slot, %c0] : !mono.tile<16, f8E4M3FN>
  }
}
