// RUN: monodc-opt %s -split-input-file -mono-check-handoffs -mono-place-tasks -mono-plan-memory -mono-materialize-sync -verify-diagnostics | FileCheck %s
// Byte records (the KV cache): a guarded store at an address that depends on
// data is accepted into an output no stage of the launch reads; it needs no
// flag. Into scratch it is refused, and so is a later stage's read of it.

// CHECK-LABEL: mono.launch @insert
// CHECK: mono.region @cache output : i8 [2, 64]
// CHECK: mono.stage @put
// CHECK: mono.store %{{.*}}, @cache[%{{.*}}, %{{.*}}] if %{{.*}} : <32, f8E4M3FN>
// CHECK: mono.store %{{.*}}, @cache[%{{.*}}, %{{.*}}] if %{{.*}} : <16, bf16>
// CHECK-NOT: mono.publish
// CHECK: }
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

// -----

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
    // expected-error @+1 {{writes scratch region 's' at an address that depends on data (or under a guard); only an output region, read by a later launch, may be written so}}
    mono.store %q, @s[%slot, %c0] : !mono.tile<16, f8E4M3FN>
  }
}

// -----

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
    // expected-error @+1 {{stage 'get' reads region 'cache', which stage 'put' writes at addresses that depend on data; only a later launch may read it}}
    %q = mono.load @cache[%c0, %c0] : !mono.tile<16, f8E4M3FN>
    %f = mono.cast %q : !mono.tile<16, f8E4M3FN> to !mono.tile<16, f32>
    mono.store %f, @y[%t, %c0] : !mono.tile<16, f32>
  }
}

// -----

// Attention over a cache the same launch inserts into is refused: the keys'
// rows come from data, and the insert's words are known only to the host.
mono.launch @attend_own attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @slots input : f32 [1, 1] {index_bound = 64 : i64}
  mono.region @q input : bf16 [1, 256]
  mono.region @cache output : i8 [2, 6400]
  mono.region @m output : f32 [1, 2]
  mono.stage @put tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %w = mono.load @slots[%t, %c0] : !mono.tile<1, f32>
    %slot = mono.to_index %w : !mono.tile<1, f32>
    %v = mono.constant 1.0 : !mono.tile<16, f32>
    %q = mono.cast %v : !mono.tile<16, f32> to !mono.tile<16, f8E4M3FN>
    mono.store %q, @cache[%c0, %c0] if %slot : !mono.tile<16, f8E4M3FN>
  }
  mono.stage @attend tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %s = mono.load @slots[%t, %c0] : !mono.tile<1, f32>
    // expected-error @+1 {{stage 'attend' reads region 'cache', which stage 'put' writes at addresses that depend on data; only a later launch may read it}}
    %m, %l, %p = mono.attend_chunk @q[%t, %c0], @cache[%s] {heads = 2 : i64, headDim = 128 : i64, ropeDim = 64 : i64} : !mono.tile<1, f32> -> !mono.tile<2, f32>, !mono.tile<2, f32>, !mono.tile<256, f32>
    mono.store %m, @m[%t, %c0] : !mono.tile<2, f32>
  }
}

// -----

// Attention over an input cache: the query rows are handed over by an
// earlier stage and waited for; the keys need no flag.
// CHECK-LABEL: mono.launch @attend
// CHECK: mono.stage @attend
// CHECK: mono.wait @fillq.flags
// CHECK-NEXT: mono.attend_chunk @q2[%{{.*}}, %{{.*}}], @cache[%{{.*}}]
mono.launch @attend attributes {arch = "gfx950", grid = 4 : i64, block = 256 : i64, rows = 1 : i64} {
  mono.region @slots input : f32 [1, 64] {index_bound = 64 : i64}
  mono.region @q input : bf16 [1, 256]
  mono.region @q2 scratch : bf16 [1, 256]
  mono.region @cache input : i8 [2, 6400]
  mono.region @m output : f32 [1, 2]
  mono.stage @fillq tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %q = mono.load @q[%t, %c0] : !mono.tile<256, bf16>
    mono.store %q, @q2[%t, %c0] : !mono.tile<256, bf16>
  }
  mono.stage @attend tasks 1 {
  ^bb0(%t: index):
    %c0 = arith.constant 0 : index
    %s = mono.load @slots[%t, %c0] : !mono.tile<64, f32>
    %m, %l, %p = mono.attend_chunk @q2[%t, %c0], @cache[%s] {heads = 2 : i64, headDim = 128 : i64, ropeDim = 64 : i64} : !mono.tile<64, f32> -> !mono.tile<2, f32>, !mono.tile<2, f32>, !mono.tile<256, f32>
    mono.store %m, @m[%t, %c0] : !mono.tile<2, f32>
  }
}
