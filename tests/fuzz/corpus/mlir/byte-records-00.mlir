mono.launch @insert attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 2 : i64} {
  mono.region @slots input : f32 [2, 1] {index_bound = 4 : i64}
  mono.region @k input : bf16 [2, 48]
  mono.region @cache output : i8 [2, 64]
  mono.stage @put tasks 2 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %c32 = arith.constant 32 : index
    %s = mono.load @slots[%t, %c0] : !mono.tile<1, f32>
    %slot = mono.to_index %s : !mono.tile<1, f32>
    %page = arith.divsi %slot, %c2 : index
    %in = arith.remsi %slot, %c2 : index
    %col = arith.muli %in, %c32 : index
    %k = mono.load @k[%t, %c0] : !mono.tile<48, bf16>
    %f = mono.cast %k : !mono.tile<48, bf16> to !mono.tile<48, f32>
    %lo = mono.slice %f[0] : !mono.tile<48, f32> -> !mono.tile<32, f32>
    %q = mono.cast %lo : !mono.tile<32, f32> to !mono.tile<32, f8E4M3FN>
    mono.store %q, @cache[%page, %col] if %slot : !mono.tile<32, f8E4M3FN>
    %hi = mono.slice %k[32] : !mono.tile<48, bf16> -> !mono.tile<16, bf16>
    %col2 = arith.addi %col, %c0 : index
    mono.store %hi, @cache[%page, %col2] if %slot : !mono.tile<16, bf16>
  }
}
