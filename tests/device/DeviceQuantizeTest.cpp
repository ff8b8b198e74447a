// The device library's MXFP8 quantizer (mono_quantize_mxfp8), run as one
// block of host threads (HostArch.h), against the formats library: codes and
// scales bit for bit. Groups of 32 in rows of at most 4 slots a thread take
// the shuffle path (32 lanes as CUDA's; built as DeviceQuantizeWave64Test
// with MONO_HOST_WARP=64, 64 as the AMD layer's, two groups a wave); groups
// of 64 take it only 64 wide. The rest (a hidden row of 28 slots; groups of
// 64 at 32 lanes) walk the row in shared memory. Rows as the launches have
// them (head slices of 448 and 64, wo_a's z, the hidden row) and values that
// test the amax: NaN (ignored), infinities (saturate), zeros of both signs,
// all-NaN groups.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "monodc/formats/NumberFormats.h"

#include "RandomValues.h"

// clang-format off
#include "prelude.h"
#include "monodc/device/gemv_shape.h"
#include "monodc/device/epoch_shape.h"
#include "HostArch.h"
#include "generic.h"
// clang-format on

namespace {

namespace fmts = monodc::formats;

struct Quantized {
  std::vector<uint8_t> codes, scales;
};

/// The formats library's MXFP8 of `values` in groups of `group`:
/// codes[i] = e4m3(values[i] * 2^(127 - c)), c the group's scale code.
Quantized reference(const std::vector<float> &values, int group, int variant) {
  Quantized q{std::vector<uint8_t>(values.size()), std::vector<uint8_t>(values.size() / group)};
  const auto v = variant ? fmts::Mxfp8Variant::Routed : fmts::Mxfp8Variant::Standard;
  for (size_t g = 0; g < q.scales.size(); ++g) {
    const uint8_t c = fmts::mxfp8ScaleCode(fmts::mxGroupAmax(&values[g * group], group), v);
    q.scales[g] = c;
    for (int j = 0; j < group; ++j)
      q.codes[g * group + j] = fmts::e4m3Bits(std::ldexp(values[g * group + j], 127 - c));
  }
  return q;
}

/// mono_quantize_mxfp8<S, SS, N, G> on one block, its f32 results turned
/// back into codes. Slots past N hold a value that would change a group's
/// scale if it were read.
template <int S, int SS, int N, int G>
Quantized device(const std::vector<float> &values, int variant) {
  std::vector<float> lds(N + N / G + MONO_BLOCK), codes(N, -1.0f), scales(N / G, -1.0f);
  host_arch::runBlock([&] {
    const int tid = mono_tid();
    float x[S], c[S], sc[SS];
    for (int s = 0; s < S; ++s)
      x[s] = s * MONO_BLOCK + tid < N ? values[s * MONO_BLOCK + tid] : 1e30f;
    mono_quantize_mxfp8<S, SS, N, G>(x, c, sc, variant, lds.data());
    for (int s = 0; s < S; ++s)
      if (s * MONO_BLOCK + tid < N)
        codes[s * MONO_BLOCK + tid] = c[s];
    for (int s = 0; s < SS; ++s)
      if (s * MONO_BLOCK + tid < N / G)
        scales[s * MONO_BLOCK + tid] = sc[s];
  });
  Quantized q{std::vector<uint8_t>(N), std::vector<uint8_t>(N / G)};
  for (int i = 0; i < N; ++i)
    q.codes[i] = fmts::e4m3Bits(codes[i]);
  for (int g = 0; g < N / G; ++g)
    q.scales[g] = fmts::e8m0Bits(scales[g]);
  return q;
}

template <int S, int SS, int N, int G>
void expectReference(const std::vector<float> &values, const char *what) {
  for (int variant : {0, 1}) {
    const Quantized want = reference(values, G, variant), got = device<S, SS, N, G>(values, variant);
    for (int g = 0; g < N / G; ++g)
      ASSERT_EQ(got.scales[g], want.scales[g])
          << what << ": N " << N << " G " << G << " variant " << variant << ", group " << g;
    for (int i = 0; i < N; ++i)
      ASSERT_EQ(got.codes[i], want.codes[i]) << what << ": N " << N << " G " << G << " variant "
                                             << variant << ", value " << i << " = " << values[i];
  }
}

template <int S, int SS, int N, int G>
void randomRows(std::mt19937 &rng) {
  expectReference<S, SS, N, G>(randomValues(N, rng, 20, 0), "finite");
  expectReference<S, SS, N, G>(randomValues(N, rng, 20, 16), "with specials");
}

TEST(DeviceQuantize, MatchesTheFormatsLibraryBitForBit) {
  std::mt19937 rng(23);
  randomRows<1, 1, 64, 32>(rng);      // back.combine's rope half of a head
  randomRows<2, 1, 448, 32>(rng);     // its nope part
  randomRows<4, 1, 1024, 32>(rng);    // a group's z
  randomRows<28, 1, 7168, 32>(rng);   // a hidden row
  randomRows<2, 1, 512, 64>(rng);     // groups of 64
  randomRows<1, 1, 96, 32>(rng);      // a slot that ends inside a warp
}

// A group of NaNs and zeros has amax 0 (the floor's scale); an infinity
// gives 254 and saturates its group; a group's max in its first or last
// value counts.
TEST(DeviceQuantize, KeepsTheAmaxEdgeCases) {
  const float nan = std::numeric_limits<float>::quiet_NaN(),
              inf = std::numeric_limits<float>::infinity();
  std::vector<float> v(128, 0.5f);
  for (int j = 0; j < 32; ++j)
    v[j] = j % 2 ? nan : -0.0f;
  v[40] = -inf;
  v[95] = 1e6f;
  v[96] = -3e-30f;
  v[64] = -700.0f;
  expectReference<1, 1, 128, 32>(v, "edge cases");
  std::vector<float> wide(256, 0.25f);
  wide[0] = 9.0f;      // group 0's max in its first value,
  wide[127] = -90.0f;  // group 1's in its last
  wide[160] = 2e-3f;
  expectReference<1, 1, 256, 64>(wide, "edge cases, groups of 64");
}

// The comparison sees a group's max missed: without its one large value the
// group's scale differs, and the device's includes it.
TEST(DeviceQuantize, AWrongScaleIsCaught) {
  std::vector<float> v(64, 1.0f);
  v[20] = 1000.0f;  // only the second half of group 0 holds the max
  const Quantized want = reference(v, 32, 0);
  std::vector<float> firstHalf(v);
  firstHalf[20] = 1.0f;
  const Quantized wrong = reference(firstHalf, 32, 0);
  ASSERT_NE(wrong.scales[0], want.scales[0]);
  EXPECT_EQ((device<1, 1, 64, 32>(v, 0).scales[0]), want.scales[0]);
}

} // namespace
