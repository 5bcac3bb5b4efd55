// How close poolkit's channels-last max forward (float32, no indices) comes to the plainest loop of the same loads,
// on the channels-last cases of shared/BENCH_CASES.md: vgg (32x128x112x112, 2x2 s2), resnet-stem (32x64x112x112,
// 3x3 s2 p1) and pool3d (8x64x32^3, 2x2x2 s2). The loop: one OpenMP loop over output rows (dynamic chunks of
// 1/64 of them), for each output pixel its taps' channels by 16-float vectors, each tap by the NaN-propagating
// maximum poolkit's rule asks (a NaN tap wins), the window's size and whether it has padding known at compile time
// (as inductor's generated loops know them): without, the first tap starts the maximum; with, -inf does and
// padding taps are skipped. Stores ordinary or streaming. Its output is checked against poolkit's. 2 threads, the
// three calls in turn, each round starting one further on, each timed call right after an untimed one of
// the same kind, median of 21 after a warm-up.
// x86-64 with AVX-512; from the repository root, after a release build:
//   g++ -O2 -march=native -fopenmp -std=c++17 -Iinclude bench/plain_loop_nhwc_max.cpp
//       build/release/src/libpoolkit.a -lhwy -o /tmp/plain_loop && /tmp/plain_loop [vgg|resnet-stem|pool3d]...
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
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

template <int KD, int K, bool kPad, bool kStream>
void plain_loop(const MaxCase& c, const float* x, float* y) {
  const std::vector<int64_t> o = c.out_shape();
  const int t = c.rank() - 2;  // (2-D cases: a depth of 1, a window of 1 along it)
  const int64_t C = c.shape[1], D = t ? c.shape[2] : 1, H = c.shape[2 + t], W = c.shape[3 + t];
  const int64_t OD = t ? o[2] : 1, OH = o[2 + t], OW = o[3 + t], s = c.s;
  const int64_t pd = KD > 1 ? c.p : 0, rows = c.shape[0] * OD * OH;
#pragma omp parallel for schedule(dynamic, rows / 64) num_threads(2)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t n = r / (OD * OH), od = r / OH % OD, oh = r % OH;
    float* yr = y + r * OW * C;
    for (int64_t ow = 0; ow < OW; ++ow)
      for (int64_t ch = 0; ch < C; ch += 16) {
        const float* at = x + (((n * D + od * s - pd) * H + oh * s - c.p) * W + ow * s - c.p) * C + ch;
        __m512 m = kPad ? _mm512_set1_ps(-INFINITY) : _mm512_loadu_ps(at);
        for (int a = 0; a < KD; ++a)
          for (int b = 0; b < K; ++b)
            for (int e = 0; e < K; ++e) {
              const int64_t id = od * s - pd + a, ih = oh * s - c.p + b, iw = ow * s - c.p + e;
              if (kPad && (id < 0 || id >= D || ih < 0 || ih >= H || iw < 0 || iw >= W)) continue;
              if (kPad || a + b + e > 0) m = nan_max(m, _mm512_loadu_ps(at + ((a * H + b) * W + e) * C));
            }
        if (kStream) _mm512_stream_ps(yr + ow * C + ch, m);
        else _mm512_storeu_ps(yr + ow * C + ch, m);
      }
  }
}

template <bool kStream>
void plain(const MaxCase& c, const float* x, float* y) {
  if (c.rank() == 3) return plain_loop<2, 2, false, kStream>(c, x, y);  // (the cases' windows)
  if (c.k == 3) return plain_loop<1, 3, true, kStream>(c, x, y);
  plain_loop<1, 2, false, kStream>(c, x, y);
}

int run(const MaxCase& c) {
  using namespace poolkit;
  const CaseTensors t(c, Layout::ChannelsLast);
  float *x = t.x.data<float>(), *y = t.y.data<float>();
  const size_t yn = size_t(t.y.numel());
  const Geometry g = c.geometry();
  max_pool_forward(g, t.x, t.y, TensorView{});
  const std::vector<float> expect(y, y + yn);
  for (bool stream : {false, true}) {
    std::memset(y, 0, yn * 4);
    stream ? plain<true>(c, x, y) : plain<false>(c, x, y);
    if (!std::equal(expect.begin(), expect.end(), y)) return std::printf("%s: the plain loop differs\n", c.name), 1;
  }
  const auto ms = times_in_turn(3, 21, [&](int v) {
    if (v == 0) max_pool_forward(g, t.x, t.y, TensorView{});
    else if (v == 1) plain<false>(c, x, y);
    else plain<true>(c, x, y);
    return true;
  });
  print_against_first(c.name, {"poolkit", "plain loop, ordinary stores", "plain loop, streaming stores"}, ms);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  poolkit::set_num_threads(2);
  return run_named_cases(argc, argv, {"vgg", "resnet-stem", "pool3d"}, run);
}
