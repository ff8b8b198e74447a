// MX GEMV test data for the matrix-core GEMV tests (DeviceScaledMfmaTest,
// DeviceFp8MfmaTest): MXFP8 tokens, e4m3 and AITER-shuffled MXFP4 weights
// with their dequantized values, mono_gemv_mfma run on one host block, and
// a double reference. Included after HostArch.h and gemv_mfma.h.
#ifndef MONODC_TESTS_DEVICE_MXGEMVDATA_H
#define MONODC_TESTS_DEVICE_MXGEMVDATA_H

#include "monodc/formats/AiterShuffle.h"
#include "monodc/formats/NumberFormats.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace mx_gemv {

namespace fmts = monodc::formats;

/// MXFP8 tokens [tokens][K], each 32-k block quantized from values of its
/// own random magnitude (so that the blocks' scales differ).
struct Tokens {
  std::vector<uint8_t> codes, scales;
  double value(int t, int k, int K) const {
    return double(fmts::e4m3Value(codes[size_t(t) * K + k])) *
           double(fmts::e8m0Value(scales[size_t(t) * (K / 32) + k / 32]));
  }
};
Tokens randomTokens(int tokens, int K, std::mt19937 &rng) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  Tokens x;
  x.codes.resize(size_t(tokens) * K);
  x.scales.resize(size_t(tokens) * (K / 32));
  std::vector<float> row(K);
  for (int t = 0; t < tokens; ++t) {
    for (int k = 0; k < K; ++k)
      row[k] = std::ldexp(u(rng), k % 32 == 0 ? int(rng() % 9) - 4 : 0);
    for (int b = 0; b < K / 32; ++b) {  // one magnitude a block
      const float m = std::ldexp(1.0f, int(rng() % 9) - 4);
      for (int k = 32 * b; k < 32 * b + 32; ++k)
        row[k] *= m;
    }
    fmts::quantizeMxfp8(row.data(), K, x.codes.data() + size_t(t) * K,
                        x.scales.data() + size_t(t) * (K / 32), fmts::Mxfp8Variant::Standard);
  }
  return x;
}

/// A weight in the device's layout and its dequantized values [N][K].
struct Weight {
  std::vector<uint8_t> bytes, scales;
  int scaleCols = 0;
  std::vector<double> values;
  std::vector<double> blockScales;  // [N][K / 32], the E8M0 values
  int blocks = 0;
  double blockScale(int n, int b) const { return blockScales[size_t(n) * blocks + b]; }
};

/// e4m3 codes [N][K] row-major, E8M0 scales [N / 32][K / 32] (a 32 x 32
/// block each), random per block.
Weight e4m3Weight(int N, int K, std::mt19937 &rng) {
  Weight w;
  w.scaleCols = K / 32;
  w.bytes.resize(size_t(N) * K);
  for (uint8_t &b : w.bytes)
    b = fmts::e4m3Bits(std::uniform_real_distribution<float>(-2, 2)(rng));
  w.scales.resize(size_t((N + 31) / 32) * w.scaleCols);
  for (uint8_t &s : w.scales)
    s = uint8_t(118 + rng() % 12);
  for (int n = 0; n < N; ++n)
    for (int k = 0; k < K; ++k)
      w.values.push_back(double(fmts::e4m3Value(w.bytes[size_t(n) * K + k])) *
                         double(fmts::e8m0Value(w.scales[size_t(n / 32) * w.scaleCols + k / 32])));
  w.blocks = K / 32;
  for (int n = 0; n < N; ++n)
    for (int b = 0; b < K / 32; ++b)
      w.blockScales.push_back(double(fmts::e8m0Value(w.scales[size_t(n / 32) * w.scaleCols + b])));
  return w;
}

/// MXFP4 [N][K] quantized from rows whose 32-blocks have random magnitudes,
/// packed, and shuffled (bytes and scales) as AITER leaves them.
Weight mxfp4Weight(int N, int K, std::mt19937 &rng) {
  Weight w;
  std::vector<uint8_t> codes(size_t(N) * K), scales(size_t(N) * (K / 32));
  std::vector<float> row(K);
  for (int n = 0; n < N; ++n) {
    for (int k = 0; k < K; ++k) {
      if (k % 32 == 0)
        w.scaleCols = int(rng() % 9) - 4;  // (reused below) the block's magnitude
      row[k] = std::ldexp(std::uniform_real_distribution<float>(-3, 3)(rng), w.scaleCols);
    }
    fmts::quantizeMxfp4(row.data(), K, codes.data() + size_t(n) * K,
                        scales.data() + size_t(n) * (K / 32));
  }
  for (int n = 0; n < N; ++n)
    for (int k = 0; k < K; ++k)
      w.values.push_back(double(fmts::mxfp4Value(codes[size_t(n) * K + k],
                                                 scales[size_t(n) * (K / 32) + k / 32])));
  w.blocks = K / 32;
  for (uint8_t s : scales)
    w.blockScales.push_back(double(fmts::e8m0Value(s)));
  w.bytes = fmts::shuffleWeight(fmts::packE2m1(codes, N, K), 1, N, K / 2);
  w.scales = fmts::shuffleScales(scales, N, K / 32);
  w.scaleCols = int(fmts::paddedScaleCols(K / 32));
  return w;
}

constexpr int kE4m3Weights = 0, kMxfp4Weights = 3;

/// mono_gemv_mfma on one block: outputs [TOKENS][N] for rows n0.. and
/// tokens t0.., in the shared memory the shape asks for (NaN at first).
template <int N, int K, int TOKENS, int WKIND>
std::vector<float> deviceGemv(const Weight &w, const Tokens &x, int count = TOKENS, int n0 = 0,
                              int t0 = 0) {
  constexpr int SO = (TOKENS * N + MONO_BLOCK - 1) / MONO_BLOCK;
  std::vector<uint32_t> lds((mono_gemv_mfma_shared_bytes(N, TOKENS, MONO_BLOCK) + 3) / 4,
                            0x7FC00000u);
  std::vector<float> out(TOKENS * N);
  host_arch::runBlock([&] {
    float o[SO];
    mono_gemv_mfma<SO, N, K, TOKENS, WKIND>(w.bytes.data(), w.scales.data(), w.scaleCols, n0,
                                            x.codes.data(), x.scales.data(), t0, o,
                                            reinterpret_cast<float *>(lds.data()), count);
    for (int s = 0; s < SO; ++s)
      if (s * MONO_BLOCK + mono_tid() < TOKENS * N)
        out[size_t(s * MONO_BLOCK + mono_tid())] = o[s];
  });
  return out;
}

/// The exact result [tokens][N] (tokens past `count` 0), summed in double
/// from the dequantized operands.
std::vector<float> cpuGemv(const Weight &w, const Tokens &x, int tokens, int N, int K, int count,
                           int n0 = 0, int t0 = 0) {
  std::vector<float> want(size_t(tokens) * N, 0.0f);
  for (int t = 0; t < count; ++t)
    for (int n = 0; n < N; ++n) {
      double s = 0;
      for (int k = 0; k < K; ++k)
        s += x.value(t0 + t, k, K) * w.values[size_t(n0 + n) * K + k];
      want[size_t(t) * N + n] = float(s);
    }
  return want;
}

/// max |got - want| / max |want| (0 when both are all zero; infinite where a
/// value is not finite).
double relativeError(const std::vector<float> &got, const std::vector<float> &want) {
  double err = 0, ref = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    if (!std::isfinite(got[i]))
      return std::numeric_limits<double>::infinity();
    err = std::max(err, std::fabs(double(got[i]) - double(want[i])));
    ref = std::max(ref, std::fabs(double(want[i])));
  }
  return ref > 0 ? err / ref : (err > 0 ? std::numeric_limits<double>::infinity() : 0.0);
}

constexpr double kMfmaBound = 1e-5;

/// Both weight kinds of a shape at `count` tokens, each within kMfmaBound of
/// the exact product; the device results, e4m3 then MXFP4.
template <int N, int K, int TOKENS>
std::pair<std::vector<float>, std::vector<float>>
gemvBothKindsWithinBound(const Tokens &x, const Weight &e, const Weight &m, int count) {
  std::vector<float> gotE = deviceGemv<N, K, TOKENS, kE4m3Weights>(e, x, count);
  std::vector<float> gotM = deviceGemv<N, K, TOKENS, kMxfp4Weights>(m, x, count);
  EXPECT_LT(relativeError(gotE, cpuGemv(e, x, TOKENS, N, K, count)), kMfmaBound)
      << "e4m3 N " << N << " K " << K << " tokens " << TOKENS << " count " << count;
  EXPECT_LT(relativeError(gotM, cpuGemv(m, x, TOKENS, N, K, count)), kMfmaBound)
      << "mxfp4 N " << N << " K " << K << " tokens " << TOKENS << " count " << count;
  return {std::move(gotE), std::move(gotM)};
}

/// Rows 64..127 of a 128-row weight against tokens 3..8 of 9, both kinds.
inline void expectSliceOfALargerWeight(uint32_t seed) {
  std::mt19937 rng(seed);
  const Tokens x = randomTokens(9, 1024, rng);
  const Weight e = e4m3Weight(128, 1024, rng), m = mxfp4Weight(128, 1024, rng);
  EXPECT_LT(relativeError((deviceGemv<64, 1024, 6, kE4m3Weights>(e, x, 6, 64, 3)),
                          cpuGemv(e, x, 6, 64, 1024, 6, 64, 3)),
            kMfmaBound);
  EXPECT_LT(relativeError((deviceGemv<64, 1024, 6, kMxfp4Weights>(m, x, 6, 64, 3)),
                          cpuGemv(m, x, 6, 64, 1024, 6, 64, 3)),
            kMfmaBound);
}

/// A count of 0 gives zeros.
inline void expectCountZeroGivesZeros(uint32_t seed) {
  std::mt19937 rng(seed);
  const Tokens x = randomTokens(6, 256, rng);
  const Weight m = mxfp4Weight(64, 256, rng);
  for (float v : deviceGemv<64, 256, 6, kMxfp4Weights>(m, x, 0))
    EXPECT_EQ(v, 0.0f);
}

} // namespace mx_gemv

#endif
