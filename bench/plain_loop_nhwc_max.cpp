// How close poolkit's channels-last 2x2 stride-2 max forward (vgg's case: 32x128x112x112 float32, no indices)
// comes to the plainest loop of the same loads: for each output pixel, its four taps' channels by 16-float vectors,
// their maximum stored by streaming stores (what poolkit stores here too), one OpenMP loop over output rows. The
// plain loop ignores poolkit's NaN rule (a NaN tap is dropped), so it is a floor, not a peer; its output is
// checked against poolkit's on finite data. 2 threads, the three calls alternated, median of 21 after a warm-up.
// x86-64 with AVX-512; from the repository root, after a release build:
//   g++ -O2 -march=native -fopenmp -std=c++17 -Iinclude bench/plain_loop_nhwc_max.cpp \
//       build/release/src/libpoolkit.a -lhwy -o /tmp/plain_loop && /tmp/plain_loop
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "poolkit/poolkit.hpp"
#include "poolkit/threads.hpp"

namespace {

constexpr int64_t N = 32, C = 128, H = 112, W = 112, OH = H / 2, OW = W / 2;

template <bool kStream>
void plain_loop(const float* x, float* y) {
#pragma omp parallel for schedule(static) num_threads(2)
  for (int64_t r = 0; r < N * OH; ++r) {
    const float* x0 = x + (r / OH * H + 2 * (r % OH)) * W * C;  // the output row's two input rows
    const float* x1 = x0 + W * C;
    float* yr = y + r * OW * C;
    for (int64_t ow = 0; ow < OW; ++ow)
      for (int64_t c = 0; c < C; c += 16) {
        const int64_t at = 2 * ow * C + c;
        const __m512 m = _mm512_max_ps(_mm512_max_ps(_mm512_loadu_ps(x0 + at), _mm512_loadu_ps(x0 + at + C)),
                                       _mm512_max_ps(_mm512_loadu_ps(x1 + at), _mm512_loadu_ps(x1 + at + C)));
        if (kStream) _mm512_stream_ps(yr + ow * C + c, m);
        else _mm512_storeu_ps(yr + ow * C + c, m);
      }
  }
}

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

}  // namespace

int main() {
  using namespace poolkit;
  set_num_threads(2);
  const size_t xn = size_t(N * C * H * W), yn = size_t(N * C * OH * OW);
  float* x = static_cast<float*>(std::aligned_alloc(64, xn * 4));
  float* y = static_cast<float*>(std::aligned_alloc(64, yn * 4));
  for (size_t i = 0; i < xn; ++i) x[i] = float((i * 2654435761u) % 1000);
  std::memset(y, 0, yn * 4);
  const TensorView xv(x, DType::f32, Shape{N, C, H, W}, Layout::ChannelsLast);
  const TensorView yv(y, DType::f32, Shape{N, C, OH, OW}, Layout::ChannelsLast);
  const Geometry g = torch_geometry({H, W}, {2, 2}, {2, 2}, {0, 0}, {1, 1}, false);

  max_pool_forward(g, xv, yv, TensorView{});
  const std::vector<float> expect(y, y + yn);
  plain_loop<true>(x, y);
  if (!std::equal(expect.begin(), expect.end(), y)) return std::puts("the plain loop differs from poolkit"), 1;

  const char* names[3] = {"poolkit max_pool_forward", "plain loop, ordinary stores", "plain loop, streaming stores"};
  std::vector<double> ms[3];
  for (int rep = 0; rep < 22; ++rep)
    for (int v = 0; v < 3; ++v) {
      const double t0 = now();
      if (v == 0) max_pool_forward(g, xv, yv, TensorView{});
      else if (v == 1) plain_loop<false>(x, y);
      else plain_loop<true>(x, y);
      if (rep > 0) ms[v].push_back(1e3 * (now() - t0));
    }
  for (int v = 0; v < 3; ++v) {
    std::sort(ms[v].begin(), ms[v].end());
    std::printf("%-30s median %.2f ms  min %.2f ms\n", names[v], ms[v][ms[v].size() / 2], ms[v][0]);
  }
  std::free(x);
  std::free(y);
}
