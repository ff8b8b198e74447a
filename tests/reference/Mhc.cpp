// The mHC seam (docs/numerics.md section 3), written from the contract.
#include "monodc/reference/Mhc.h"

#include "monodc/reference/Reference.h"

#include <cmath>
#include <stdexcept>

namespace monodc::reference {

namespace {
constexpr int kStreams = 4;
constexpr int kMixes = 24;

double sigmoid(double v) { return 1.0 / (1.0 + std::exp(-v)); }

// One R' value before rounding: `streams` points at R[0][d], stream h at
// streams[h * stride].
float foldValue(float post, float x, const float *comb, int o, const float *streams,
                int stride) {
  float mixed = comb[o] * streams[0];
  for (int s = 1; s < kStreams; ++s)
    mixed = std::fma(comb[s * 4 + o], streams[s * stride], mixed);
  const float px = post * x;
  return px + mixed;
}

void check(bool ok, const char *what) {
  if (!ok)
    throw std::invalid_argument(std::string("mhcSeam: ") + what);
}
} // namespace

MhcOutputs mhcSeam(const MhcInputs &in) {
  const int rows = in.rows, h = in.hidden, flat = kStreams * h;
  check(in.residual.size() == size_t(rows) * flat, "residual is not rows x 4 x hidden");
  check(in.x.size() == size_t(rows) * h, "x is not rows x hidden");
  check(in.post.size() == size_t(rows) * 4 && in.preIn.size() == size_t(rows) * 4, "post/pre");
  check(in.comb.size() == size_t(rows) * 16, "comb is not rows x 4 x 4");
  check(in.fn.size() == size_t(kMixes) * flat && in.base.size() == kMixes, "fn/base");
  check(in.scale.size() == 3 && in.normWeight.size() == size_t(h), "scale/norm weight");

  MhcOutputs out;
  out.residual.resize(in.residual.size());
  out.u.resize(in.x.size());
  out.pre.resize(size_t(rows) * 4);
  out.post.resize(size_t(rows) * 4);
  out.comb.resize(size_t(rows) * 16);
  for (int r = 0; r < rows; ++r) {
    const float *R = in.residual.data() + size_t(r) * flat;
    const float *x = in.x.data() + size_t(r) * h;
    const float *post = in.post.data() + r * 4, *pre = in.preIn.data() + r * 4;
    const float *comb = in.comb.data() + r * 16;
    float *Rp = out.residual.data() + size_t(r) * flat;
    // 1. Fold, in f32: s = comb[0][o] R0, then s = fma(comb[h][o], Rh, s)
    //    for h = 1, 2, 3; R' = bf16(f32(post[o] x) + s).
    for (int o = 0; o < kStreams; ++o)
      for (int d = 0; d < h; ++d)
        Rp[o * h + d] = roundDoubleToBf16(foldValue(post[o], x[d], comb, o, R + d, h));
    // 2. Collapse with the incoming pre, in h order (f32).
    for (int d = 0; d < h; ++d) {
      float acc = pre[0] * Rp[d];
      for (int s = 1; s < kStreams; ++s) {
        float product = pre[s] * Rp[s * h + d];
        acc = acc + product;
      }
      out.u[size_t(r) * h + d] = roundDoubleToBf16(acc);
    }
    // 3. Mixes and the rms of R'.
    double ss = 0.0;
    for (int i = 0; i < flat; ++i)
      ss += double(Rp[i]) * Rp[i];
    const double inverseRms = 1.0 / std::sqrt(ss / flat + in.eps);
    double v[kMixes];
    for (int j = 0; j < kMixes; ++j) {
      double m = 0.0;
      for (int i = 0; i < flat; ++i)
        m += double(in.fn[size_t(j) * flat + i]) * Rp[i];
      v[j] = m * inverseRms;
    }
    // 4. Gates.
    for (int s = 0; s < kStreams; ++s) {
      out.pre[r * 4 + s] = float(sigmoid(v[s] * in.scale[0] + in.base[s]) + in.hcEps);
      out.post[r * 4 + s] =
          float(in.postMultiplier * sigmoid(v[4 + s] * in.scale[1] + in.base[4 + s]));
    }
    double c[4][4];
    for (int a = 0; a < 4; ++a)
      for (int b = 0; b < 4; ++b)
        c[a][b] = v[8 + 4 * a + b] * in.scale[2] + in.base[8 + 4 * a + b];
    // 5. Sinkhorn: row softmax + eps, columns once, then 19 x (rows, columns).
    for (int a = 0; a < 4; ++a) {
      double mx = c[a][0];
      for (int b = 1; b < 4; ++b)
        mx = std::max(mx, c[a][b]);
      double sum = 0.0;
      for (int b = 0; b < 4; ++b)
        sum += (c[a][b] = std::exp(c[a][b] - mx));
      for (int b = 0; b < 4; ++b)
        c[a][b] = c[a][b] / sum + in.hcEps;
    }
    auto normalizeColumns = [&] {
      for (int b = 0; b < 4; ++b) {
        double sum = 0.0;
        for (int a = 0; a < 4; ++a)
          sum += c[a][b];
        for (int a = 0; a < 4; ++a)
          c[a][b] /= sum + in.hcEps;
      }
    };
    normalizeColumns();
    for (int it = 1; it < in.sinkhornIterations; ++it) {
      for (int a = 0; a < 4; ++a) {
        double sum = c[a][0] + c[a][1] + c[a][2] + c[a][3];
        for (int b = 0; b < 4; ++b)
          c[a][b] /= sum + in.hcEps;
      }
      normalizeColumns();
    }
    for (int a = 0; a < 4; ++a)
      for (int b = 0; b < 4; ++b)
        out.comb[r * 16 + a * 4 + b] = float(c[a][b]);
  }
  // 6. Norm of u for the next sublayer.
  out.y = rmsNorm(out.u, rows, h, in.normWeight, in.eps);
  return out;
}

} // namespace monodc::reference
