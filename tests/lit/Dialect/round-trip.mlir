// RUN: monodc-opt %s | monodc-opt | FileCheck %s
// The printed form parses back to the same IR.

// CHECK-LABEL: mono.launch @front
// CHECK-SAME: arch = "gfx950"
mono.launch @front attributes {arch = "gfx950", grid = 256 : i64, block = 256 : i64, rows = 2 : i64} {
  // CHECK: mono.region @u input : bf16 [2, 64]
  mono.region @u input : bf16 [2, 64]
  // CHECK: mono.region @w weight : f8E4M3FN [32, 64]
  mono.region @w weight : f8E4M3FN [32, 64]
  // CHECK: mono.region @ws weight : f8E8M0FNU [1, 2]
  mono.region @ws weight : f8E8M0FNU [1, 2]
  mono.region @g weight : bf16 [32, 64]
  mono.region @q scratch : f4E2M1FN [2, 64]
  mono.region @y output : bf16 [2, 32]
  // CHECK: mono.region @table input : i32 [2, 8] {index_bound = 64 : i64}
  mono.region @table input : i32 [2, 8] {index_bound = 64 : i64}
  // CHECK: mono.region @positions input : i64 [2, 1] {index_bound = 256 : i64}
  mono.region @positions input : i64 [2, 1] {index_bound = 256 : i64}
  // A decode step's memory flow: handed from K1, read by the step's caller.
  // CHECK: mono.region @q_in input : bf16 [2, 32] {handed_from = @k1::@q}
  mono.region @q_in input : bf16 [2, 32] {handed_from = @k1::@q}
  // CHECK: mono.region @out output : bf16 [2, 32] {step_result}
  mono.region @out output : bf16 [2, 32] {step_result}
  // A cache whose pages the caller gives at each launch.
  // CHECK: mono.region @cache input : i8 [4, 64] {rows_at_launch}
  mono.region @cache input : i8 [4, 64] {rows_at_launch}
  // Its pages through a block table: the bound grows with them.
  // CHECK: mono.region @cache_pages input : i32 [2, 8] {index_bound = 4 : i64, indexes = @cache}
  mono.region @cache_pages input : i32 [2, 8] {index_bound = 4 : i64, indexes = @cache}
  // A block table whose pages a row the caller gives at each launch.
  // CHECK: mono.region @long_table input : i32 [2, 8] {cols_at_launch, index_bound = 4 : i64}
  mono.region @long_table input : i32 [2, 8] {index_bound = 4 : i64, cols_at_launch}
  // A RoPE table as long as the positions the caller serves.
  // CHECK: mono.region @rope weight : f32 [16, 64] {rows_at_launch}
  mono.region @rope weight : f32 [16, 64] {rows_at_launch}
  // CHECK: mono.stage @s tasks 2
  mono.stage @s tasks 2 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    // CHECK: mono.load @table[%{{.*}}, %{{.*}}] : <8, f32>
    %pages = mono.load @table[%t, %c0] : !mono.tile<8, f32>
    // CHECK: mono.region_rows @cache : <1, f32>
    %cache_pages = mono.region_rows @cache : !mono.tile<1, f32>
    // CHECK: mono.region_cols @long_table : <1, f32>
    %table_cols = mono.region_cols @long_table : !mono.tile<1, f32>
    // CHECK: mono.load_at @long_table[%{{.*}}] cols %{{.*}} : <8, f32> -> <8, f32>
    %long_pages = mono.load_at @long_table[%t] cols %pages : !mono.tile<8, f32> -> !mono.tile<8, f32>
    // CHECK: mono.iota %{{.*}} : <64, f32>
    %keys = mono.iota %c0 : !mono.tile<64, f32>
    // CHECK: mono.floor %{{.*}} : <8, f32>
    %whole = mono.floor %pages : !mono.tile<8, f32>
    %u = mono.load @u[%t, %c0] : !mono.tile<64, bf16>
    %x = mono.cast %u : !mono.tile<64, bf16> to !mono.tile<64, f32>
    // CHECK: mono.constant 9.99999968E-21 : <1, f32>
    %eps = mono.constant 1.0e-20 : !mono.tile<1, f32>
    %sq = mono.mul %x, %x : !mono.tile<64, f32>, !mono.tile<64, f32> -> !mono.tile<64, f32>
    // CHECK: mono.reduce sum
    %s = mono.reduce sum %sq : !mono.tile<64, f32> -> !mono.tile<1, f32>
    %m = mono.reduce absmax %x : !mono.tile<64, f32> -> !mono.tile<1, f32>
    // CHECK: mono.slice %{{.*}}[16] {block = 16 : i64, stride = 32 : i64} : <64, f32> -> <32, f32>
    %up = mono.slice %x[16] {stride = 32 : i64, block = 16 : i64} : !mono.tile<64, f32> -> !mono.tile<32, f32>
    // CHECK: mono.slice %{{.*}}[0] via shuffle : <64, f32> -> <8, f32>
    %lo = mono.slice %x[0] via shuffle : !mono.tile<64, f32> -> !mono.tile<8, f32>
    // CHECK: mono.expert_groups %{{.*}} group 8 : <64, f32> -> <64, f32>, <64, f32>, <64, f32>, <64, f32>
    %se, %sf, %sc, %pr = mono.expert_groups %x group 8 : !mono.tile<64, f32> -> !mono.tile<64, f32>, !mono.tile<64, f32>, !mono.tile<64, f32>, !mono.tile<64, f32>
    %a = mono.add %s, %eps : !mono.tile<1, f32>, !mono.tile<1, f32> -> !mono.tile<1, f32>
    %r = mono.rsqrt %a : !mono.tile<1, f32>
    %e = mono.exp2 %r : !mono.tile<1, f32>
    %g = mono.sigmoid %e : !mono.tile<1, f32>
    %d = mono.div %m, %g : !mono.tile<1, f32>, !mono.tile<1, f32> -> !mono.tile<1, f32>
    %y = mono.mul %x, %d : !mono.tile<64, f32>, !mono.tile<1, f32> -> !mono.tile<64, f32>
    // CHECK: mono.quantize_mxfp8 standard
    %codes, %scales = mono.quantize_mxfp8 standard %y : !mono.tile<64, f32> -> !mono.tile<64, f8E4M3FN>, !mono.tile<2, f8E8M0FNU>
    // CHECK: mono.gemv @w scaled @ws[%{{.*}}], %{{.*}}, %{{.*}} :
    %o = mono.gemv @w scaled @ws [%c0], %codes, %scales : !mono.tile<64, f8E4M3FN>, !mono.tile<2, f8E8M0FNU> -> !mono.tile<32, f32>
    // CHECK: mono.gemv @g[%{{.*}}], %{{.*}} : <64, f32> -> <32, f32>
    %o2 = mono.gemv @g [%c0], %y : !mono.tile<64, f32> -> !mono.tile<32, f32>
    %f4 = mono.cast %y : !mono.tile<64, f32> to !mono.tile<64, f4E2M1FN>
    mono.store %f4, @q[%t, %c0] : !mono.tile<64, f4E2M1FN>
    %sum = mono.add %o, %o2 : !mono.tile<32, f32>, !mono.tile<32, f32> -> !mono.tile<32, f32>
    %ob = mono.cast %sum : !mono.tile<32, f32> to !mono.tile<32, bf16>
    // CHECK: mono.store
    mono.store %ob, @y[%t, %c0] : !mono.tile<32, bf16>
  }
}

// A gemv_rows over a runtime number of its tokens.
// CHECK-LABEL: mono.launch @counted
// CHECK: mono.gemv_rows @w scaled @ws[%{{.*}}], @x scaled @xs[%{{.*}}] tokens 4 count %{{.*}} : <64, f32>
mono.launch @counted attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 4 : i64} {
  mono.region @w weight : f8E4M3FN [16, 64]
  mono.region @ws weight : f8E8M0FNU [1, 2]
  mono.region @x input : f8E4M3FN [4, 64]
  mono.region @xs input : f8E8M0FNU [4, 2]
  mono.stage @s tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %c3 = arith.constant 3 : index
    %y = mono.gemv_rows @w scaled @ws[%c0], @x scaled @xs[%c0] tokens 4 count %c3 : !mono.tile<64, f32>
  }
}

// A task that skips its work when a count from data is 0.
// CHECK-LABEL: mono.launch @skipping
// CHECK: %[[N:.*]] = mono.to_index
// CHECK-NEXT: mono.skip_unless %[[N]]
// CHECK: mono.store
mono.launch @skipping attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @counts input : f32 [1, 4]
  mono.region @y output : f32 [4, 16]
  mono.stage @s tasks 4 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %n = mono.load @counts[%c0, %t] : !mono.tile<1, f32>
    %count = mono.to_index %n : !mono.tile<1, f32>
    mono.skip_unless %count
    %v = mono.constant 1.0 : !mono.tile<16, f32>
    mono.store %v, @y[%t, %c0] : !mono.tile<16, f32>
  }
}

// The same, where a task that skips says every later task skips too.
// CHECK-LABEL: mono.launch @skipping_rest
// CHECK: %[[N:.*]] = mono.to_index
// CHECK-NEXT: mono.skip_unless %[[N]] rest
// CHECK: mono.store
mono.launch @skipping_rest attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @counts input : f32 [1, 4]
  mono.region @y output : f32 [4, 16]
  mono.stage @s tasks 4 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %n = mono.load @counts[%c0, %t] : !mono.tile<1, f32>
    %count = mono.to_index %n : !mono.tile<1, f32>
    mono.skip_unless %count rest
    %v = mono.constant 1.0 : !mono.tile<16, f32>
    mono.store %v, @y[%t, %c0] : !mono.tile<16, f32>
  }
}

// A pad row's task: its rows hold nothing anyone reads.
// CHECK-LABEL: mono.launch @skipping_pad
// CHECK: mono.skip_unless %{{.*}} pad
mono.launch @skipping_pad attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 4 : i64} {
  mono.region @slot_mapping input : f32 [4, 1]
  mono.region @y output : f32 [4, 16]
  mono.stage @s tasks 4 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %n = mono.load @slot_mapping[%t, %c0] : !mono.tile<1, f32>
    %count = mono.to_index %n : !mono.tile<1, f32>
    mono.skip_unless %count pad
    %v = mono.constant 1.0 : !mono.tile<16, f32>
    mono.store %v, @y[%t, %c0] : !mono.tile<16, f32>
  }
}
