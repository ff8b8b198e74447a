// Lane-exact host models of the gfx950 matrix instructions the device
// library uses (docs/gfx950-matrix-cores.md): v_mfma_scale_f32_16x16x128_
// f8f6f4 first, v_mfma_f32_16x16x32_bf16 at the end; the 64 lanes'
// registers in, each lane's four results out. Written from the layout facts alone (the device library's own
// code is not used), so that a device layout and this model agree only if
// both follow those facts.
//
// Layouts (lane l, g = l / 16, r = l % 16; byte p counts little-endian over
// the lane's 8 registers):
//   e4m3 operand: byte p of lane l is A[r][16 g + p % 16 + 64 (p / 16)]
//                 (B[k][r] the same), two runs of 16 k per lane;
//   e2m1 operand: nibble n (0 = bits 3..0) of byte p is A[r][32 g + 2 p + n],
//                 bytes 16..31 unused;
//   scales:       byte `opsel` of lane l's scale word is the E8M0 scale of A
//                 row (B column) r, k block g (k 32 g .. 32 g + 31);
//   C and D:      value v of lane l is D[4 g + v][r].
//
// Arithmetic (an assumption: CDNA4's internal alignment and rounding are not
// public): every product is exact, each 32-k block's sum is multiplied by
// 2^(sa - 127) 2^(sb - 127), the four blocks and C are summed exactly, and
// the total is rounded once to f32, to nearest even (overflow to infinity).
// A NaN code (e4m3 0x7F, 0xFF), a scale byte 0xFF or a NaN C gives NaN; an
// infinite C is returned as is. Scale byte 0 means 2^-127. An exact zero
// total takes IEEE's sign rule for the sum of C and the products.
#ifndef MONODC_TESTS_DEVICE_HOSTMFMA_H
#define MONODC_TESTS_DEVICE_HOSTMFMA_H

#include "monodc/formats/ExactSum.h"
#include "monodc/formats/NumberFormats.h"

#include <array>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace host_mfma {

inline constexpr int kLanes = 64;
inline constexpr int kFormatE4m3 = 0;
inline constexpr int kFormatE2m1 = 4;

/// One wave's operands, lane by lane, as the instruction reads them.
struct WaveOperands {
  uint32_t a[kLanes][8] = {};
  uint32_t b[kLanes][8] = {};
  float c[kLanes][4] = {};
  uint32_t scaleA[kLanes] = {};
  uint32_t scaleB[kLanes] = {};
};
using WaveResult = std::array<std::array<float, 4>, kLanes>;

inline void checkFormat(int code, const char *operand) {
  if (code != kFormatE4m3 && code != kFormatE2m1)
    throw std::invalid_argument(std::string("scaled MFMA model: ") + operand + " format code " +
                                std::to_string(code) +
                                " is not modelled (0 e4m3 and 4 e2m1 are; 1 e5m2, 2 e2m3, 3 e3m2 "
                                "are not, fp6 packing being unconfirmed)");
}

/// Where byte `byte`, nibble `nibble` (e2m1 only) of lane `lane` goes in
/// the operand: row of A (column of B) `index`, depth `k`; index -1 when
/// the byte carries no value.
struct Place {
  int index, k;
};
inline Place operandPlace(int format, int lane, int byte, int nibble) {
  const int g = lane >> 4, r = lane & 15;
  if (format == kFormatE4m3)
    return {r, 16 * g + (byte & 15) + 64 * (byte >> 4)};
  if (byte >= 16)
    return {-1, -1};
  return {r, 32 * g + 2 * byte + nibble};
}

/// The inverse of operandPlace for one format, built from it once; every
/// (index, k) of the 16 x 128 operand must be held exactly once.
struct Slot {
  uint8_t lane = 0, byte = 0, nibble = 0;
  bool held = false;
};
struct OperandMap {
  Slot slot[16][128];
};
inline OperandMap buildOperandMap(int format) {
  OperandMap map;
  const int nibbles = format == kFormatE2m1 ? 2 : 1;
  for (int lane = 0; lane < kLanes; ++lane)
    for (int byte = 0; byte < 32; ++byte)
      for (int n = 0; n < nibbles; ++n) {
        const Place p = operandPlace(format, lane, byte, n);
        if (p.index < 0)
          continue;
        Slot &s = map.slot[p.index][p.k];
        if (s.held)
          throw std::logic_error("scaled MFMA model: an operand value is held twice");
        s = {uint8_t(lane), uint8_t(byte), uint8_t(n), true};
      }
  for (auto &row : map.slot)
    for (const Slot &s : row)
      if (!s.held)
        throw std::logic_error("scaled MFMA model: an operand value is held nowhere");
  return map;
}
inline const OperandMap &operandMap(int format) {
  static const OperandMap e4m3 = buildOperandMap(kFormatE4m3);
  static const OperandMap e2m1 = buildOperandMap(kFormatE2m1);
  return format == kFormatE4m3 ? e4m3 : e2m1;
}

/// Code values, exact (from the formats library).
inline double codeValue(int format, uint32_t code) {
  static const std::vector<double> e4m3 = [] {
    std::vector<double> v(256);
    for (int c = 0; c < 256; ++c)
      v[size_t(c)] = double(monodc::formats::e4m3Value(uint8_t(c)));
    return v;
  }();
  static const std::vector<double> e2m1 = [] {
    std::vector<double> v(16);
    for (int c = 0; c < 16; ++c)
      v[size_t(c)] = double(monodc::formats::e2m1Value(uint8_t(c)));
    return v;
  }();
  return format == kFormatE4m3 ? e4m3[code & 255u] : e2m1[code & 15u];
}

/// Operand value (index, k) from a wave's registers [lane][8].
inline double operandValue(const uint32_t (*regs)[8], int format, int index, int k) {
  const Slot &s = operandMap(format).slot[index][k];
  const uint32_t byte = (regs[s.lane][s.byte / 4] >> (8 * (s.byte % 4))) & 0xFFu;
  if (format == kFormatE4m3)
    return codeValue(format, byte);
  return codeValue(format, s.nibble ? byte >> 4 : byte & 15u);
}

/// The E8M0 code scaling row (column) `index`, k block `block`.
inline int scaleCode(const uint32_t *scales, int opsel, int index, int block) {
  return int((scales[index + 16 * block] >> (8 * opsel)) & 0xFFu);
}

/// Lane `lane`'s four results.
inline std::array<float, 4> laneResult(const WaveOperands &w, int cbsz, int blgp, int opselA,
                                       int opselB, int lane) {
  checkFormat(cbsz, "A (cbsz)");
  checkFormat(blgp, "B (blgp)");
  if (opselA != 0 || opselB != 0)
    throw std::invalid_argument("scaled MFMA model: only opsel 0 is modelled");
  const int g = lane >> 4, col = lane & 15;
  std::array<float, 4> d{};
  for (int v = 0; v < 4; ++v) {
    const int row = 4 * g + v;
    const float c = w.c[lane][v];
    double scaledBlocks[4];
    bool nan = std::isnan(c);
    for (int block = 0; block < 4; ++block) {
      // 32 products of two e4m3 values are multiples of 2^-18 below 2^23,
      // so this double sum is exact (e2m1 terms even more so).
      double blockSum = -0.0;
      for (int k = 32 * block; k < 32 * block + 32; ++k)
        blockSum += operandValue(w.a, cbsz, row, k) * operandValue(w.b, blgp, col, k);
      const int sa = scaleCode(w.scaleA, opselA, row, block);
      const int sb = scaleCode(w.scaleB, opselB, col, block);
      nan = nan || std::isnan(blockSum) || sa == 255 || sb == 255;
      scaledBlocks[block] = std::ldexp(blockSum, (sa - 127) + (sb - 127));  // exact: |sum| < 2^278
    }
    if (nan)
      d[size_t(v)] = std::numeric_limits<float>::quiet_NaN();
    else if (std::isinf(c))
      d[size_t(v)] = c;
    else
      d[size_t(v)] = monodc::formats::scaledMfmaStep(c, scaledBlocks);
  }
  return d;
}

/// The whole wave's results: lane l value v is D[4 (l / 16) + v][l % 16].
inline WaveResult scaledMfma(const WaveOperands &w, int cbsz, int blgp, int opselA = 0,
                             int opselB = 0) {
  WaveResult d;
  for (int lane = 0; lane < kLanes; ++lane)
    d[size_t(lane)] = laneResult(w, cbsz, blgp, opselA, opselB, lane);
  return d;
}

// The 16x16 bf16 MFMAs over K = 32 (gfx950's v_mfma_f32_16x16x32_bf16) or
// K = 16 (gfx942's v_mfma_f32_16x16x16_bf16). Layout (lane l, g = l / 16,
// r = l % 16): bf16 i of lane l (half i % 2 of register i / 2, the low half
// first) is A[r][K/4 g + i] (B[K/4 g + i][r] the same); value v of lane l is
// D[4 g + v][r]. Arithmetic (the scaled form's assumption): the K products
// are exact, and they and C are summed exactly and rounded once to f32, to
// nearest even. A NaN or infinite term gives the terms' IEEE sum (NaN or
// that infinity).
template <int K>
struct Bf16Operands {
  static constexpr int kRegs = K / 8;  // two bf16 a register, K / 4 a lane
  uint32_t a[kLanes][kRegs] = {};
  uint32_t b[kLanes][kRegs] = {};
  float c[kLanes][4] = {};
};
using Bf16WaveOperands = Bf16Operands<32>;
using Bf16x16WaveOperands = Bf16Operands<16>;

/// Operand value (index, k) of a 16 x K bf16 operand from a wave's
/// registers [lane][K / 8].
template <int K>
inline double bf16OperandValue(const uint32_t (*regs)[K / 8], int index, int k) {
  const int lane = index + 16 * (k / (K / 4)), i = k % (K / 4);
  const uint32_t bits = (regs[lane][i / 2] >> (16 * (i % 2))) & 0xFFFFu;
  return double(std::bit_cast<float>(bits << 16));
}

template <int K>
inline std::array<float, 4> bf16LaneResult(const Bf16Operands<K> &w, int lane) {
  const int g = lane >> 4, col = lane & 15;
  std::array<float, 4> d{};
  for (int v = 0; v < 4; ++v) {
    const int row = 4 * g + v;
    double products[K];  // exact: two 8-bit significands
    for (int k = 0; k < K; ++k)
      products[k] = bf16OperandValue<K>(w.a, row, k) * bf16OperandValue<K>(w.b, col, k);
    d[size_t(v)] = monodc::formats::bf16MfmaStep(w.c[lane][v], products);
  }
  return d;
}

/// The whole wave's results: lane l value v is D[4 (l / 16) + v][l % 16].
template <int K>
inline WaveResult bf16Mfma(const Bf16Operands<K> &w) {
  WaveResult d;
  for (int lane = 0; lane < kLanes; ++lane)
    d[size_t(lane)] = bf16LaneResult(w, lane);
  return d;
}

// gfx942's v_mfma_f32_16x16x32_fp8_fp8 (no scales). Layout (AMD's matrix
// instruction calculator for CDNA3): byte p of lane l's two registers (p = 4
// register + byte) is A[r][8 g + p] (B[8 g + p][r] the same); value v of
// lane l is D[4 g + v][r]. Codes are FNUZ e4m3 (LLVM's Float8E4M3FNUZ: bias
// 8, no infinity, 0x80 the only NaN, no -0). Arithmetic (the assumption of
// the models above): the 32 exact products and C summed exactly and
// rounded once to f32, to nearest even; a NaN operand gives NaN.
struct Fp8WaveOperands {
  uint32_t a[kLanes][2] = {};
  uint32_t b[kLanes][2] = {};
  float c[kLanes][4] = {};
};

/// An FNUZ e4m3 code's value, from the format's definition.
inline double fnuzValue(uint32_t code) {
  code &= 0xFFu;
  if (code == 0x80u)
    return std::numeric_limits<double>::quiet_NaN();
  const int exponent = int(code >> 3) & 15, mantissa = int(code) & 7;
  const double magnitude = exponent == 0 ? std::ldexp(mantissa, 1 - 8 - 3)
                                         : std::ldexp(8 + mantissa, exponent - 8 - 3);
  return (code & 0x80u) ? -magnitude : magnitude;
}

/// Operand value (index, k) of a 16 x 32 fp8 operand from [lane][2].
inline double fp8OperandValue(const uint32_t (*regs)[2], int index, int k) {
  const int lane = index + 16 * (k / 8), p = k % 8;
  return fnuzValue(regs[lane][p / 4] >> (8 * (p % 4)));
}

inline std::array<float, 4> fp8LaneResult(const Fp8WaveOperands &w, int lane) {
  const int g = lane >> 4, col = lane & 15;
  std::array<float, 4> d{};
  for (int v = 0; v < 4; ++v) {
    const int row = 4 * g + v;
    double products[32];  // exact: two 4-bit significands
    for (int k = 0; k < 32; ++k)
      products[k] = fp8OperandValue(w.a, row, k) * fp8OperandValue(w.b, col, k);
    d[size_t(v)] = monodc::formats::bf16MfmaStep(w.c[lane][v], products);
  }
  return d;
}

/// The whole wave's results: lane l value v is D[4 (l / 16) + v][l % 16].
inline WaveResult fp8Mfma(const Fp8WaveOperands &w) {
  WaveResult d;
  for (int lane = 0; lane < kLanes; ++lane)
    d[size_t(lane)] = fp8LaneResult(w, lane);
  return d;
}

} // namespace host_mfma

#endif
