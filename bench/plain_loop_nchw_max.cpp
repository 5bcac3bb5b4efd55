// How close poolkit's channels-first max forward (float32, no indices) comes to a plain loop of the same loads, on
// the channels-first cases of shared/BENCH_CASES.md whose window is its stride, 2 (vgg: 32x128x112x112, 2x2;
// pool3d: 8x64x32^3, 2x2x2). The loop: one OpenMP loop over output rows (dynamic chunks of 1/64 of them); for
// each, the window's input rows (two, or four over two depth slices) read 32 floats at a time, each the even and
// the odd lanes parted by two permutes, folded by the NaN-propagating maximum poolkit's rule asks (a NaN tap wins),
// in poolkit's tap order, into 16 outputs stored plainly. Its output is checked against poolkit's. 2 threads, the
// two calls in turn, each round starting with the other, each timed call right after an untimed one of its kind,
// median of 21 after a warm-up.
// x86-64 with AVX-512; from the repository root, after a release build:
//   g++ -O2 -march=native -fopenmp -std=c++17 -Iinclude bench/plain_loop_nchw_max.cpp
//       build/release/src/libpoolkit.a -lhwy -o /tmp/plain_nchw && /tmp/plain_nchw [vgg|pool3d]...
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "poolkit/poolkit.hpp"
#include "poolkit/threads.hpp"
#include "in_turn.hpp"
#include "max_cases.hpp"

namespace {

// the maximum so far and a tap: a NaN tap wins, a NaN maximum stays
inline __m512 nan_max(__m512 m, __m512 v) {
  return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(m, m, _CMP_UNORD_Q), _mm512_max_ps(m, v), m);
}

// taps (row r, lane 2i) and (row r, lane 2i + 1) of 16 outputs from 32 floats of row r (n of them: the row's
// end), in that order
inline __m512 row_pairs(__m512 m, const float* row, bool first, int64_t n) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
  const __mmask16 lo = n >= 16 ? 0xffff : __mmask16((1u << n) - 1), hi = n >= 32 ? 0xffff : n <= 16 ? 0 :
                       __mmask16((1u << (n - 16)) - 1);
  const __m512 a = _mm512_maskz_loadu_ps(lo, row), b = _mm512_maskz_loadu_ps(hi, row + 16);
  const __m512 e = _mm512_permutex2var_ps(a, even, b), o = _mm512_permutex2var_ps(a, odd, b);
  return nan_max(first ? e : nan_max(m, e), o);
}

void plain_loop(const MaxCase& c, const float* x, float* y) {
  const bool three = c.rank() == 3;
  const int64_t D = three ? c.shape[2] : 1, H = c.shape[2 + three], W = c.shape[3 + three];
  const int64_t OD = three ? D / 2 : 1, OH = H / 2, OW = W / 2;
  const int64_t rows = c.shape[0] * c.shape[1] * OD * OH;
#pragma omp parallel for schedule(dynamic, rows / 64) num_threads(2)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t plane = r / (OD * OH), od = r / OH % OD, oh = r % OH;
    const float* xr = x + ((plane * D + 2 * od * three) * H + 2 * oh) * W;
    float* yr = y + r * OW;
    for (int64_t ow = 0; ow < OW; ow += 16) {
      const int64_t n = std::min<int64_t>(32, W - 2 * ow);
      __m512 m = row_pairs(_mm512_setzero_ps(), xr + 2 * ow, true, n);
      for (int a = 0; a <= int(three); ++a)
        for (int b = 0; b < 2; ++b)
          if (a + b > 0) m = row_pairs(m, xr + (a * H + b) * W + 2 * ow, false, n);
      _mm512_mask_storeu_ps(yr + ow, n >= 32 ? 0xffff : __mmask16((1u << (n / 2)) - 1), m);
    }
  }
}

int run(const MaxCase& c) {
  using namespace poolkit;
  if (c.shape.back() % 2 != 0 || c.k != 2 || c.s != 2 || c.p != 0)
    return std::printf("%s: the loop takes 2-wide stride-2 windows over rows of even length\n", c.name), 1;
  const CaseTensors t(c);
  float *x = t.x.data<float>(), *y = t.y.data<float>();
  const size_t yn = size_t(t.y.numel());
  const Geometry g = c.geometry();
  max_pool_forward(g, t.x, t.y, TensorView{});
  const std::vector<float> expect(y, y + yn);
  std::memset(y, 0, yn * 4);
  plain_loop(c, x, y);
  if (!std::equal(expect.begin(), expect.end(), y)) return std::printf("%s: the plain loop differs\n", c.name), 1;
  print_against_first(c.name, {"poolkit", "plain loop"}, times_in_turn(2, 21, [&](int v) {
                        v == 0 ? max_pool_forward(g, t.x, t.y, TensorView{}) : plain_loop(c, x, y);
                        return true;
                      }));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  poolkit::set_num_threads(2);
  return run_named_cases(argc, argv, {"vgg", "pool3d"}, run);
}
