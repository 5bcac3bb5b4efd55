// The global average of packed channels-first planes (plane_average.hpp). A tile (k planes, several cells of
// each) is loaded as rows and transposed in registers: column i then holds cell c + i of the k planes, added to
// the planes' sums in cell order. No copy of the planes through a block in memory. Tiles of 128 bits go two
// groups of k planes side by side, so that two chains of additions overlap (from memory, four groups ran 1.1x
// slower and one 1.05x, Zen 4); float32's tiles of eight planes go one group at a time (two groups ran 1.5-2x
// slower from memory on Zen 3: twice the lines missed at once). Planes back to back are one range read front to
// back at the coarse level: each group asks for the bytes kPlaneAhead further on into the outer caches, which the
// hardware's prefetchers did not do for this order of access (gap from memory: 1.5-2.3x faster). Also the global
// average of channels-last images (last_average).
#include "plane_average.hpp"

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "prefetch.hpp"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/cpu/kernels_plane_average.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "src/cpu/transpose-inl.h"

HWY_BEFORE_NAMESPACE();
namespace poolkit::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// How far ahead of a group of planes its prefetches reach: 12 KiB ran as fast, 4 KiB 1.05x slower (Zen 4, the
// gap case); into the first-level cache instead (prefetcht0) 1.2-1.4x slower.
constexpr int64_t kPlaneAhead = 8192;

#if HWY_TARGET != HWY_SCALAR
// The planes by groups of k = d's lanes, G groups side by side; tile(row, c, col) reads cells [c, c + kWidth) of
// the group whose planes start at row[0..k) and leaves cell c + i of the k planes in col[i].
template <class D, int64_t kWidth, int64_t G, class Tile>
HWY_INLINE void plane_groups(D d, const PlaneAverageJob& j, const Tile& tile) {
  using T = hn::TFromD<D>;
  using V = hn::Vec<D>;
  constexpr int64_t k = int64_t(hn::MaxLanes(d));
  const T* x = static_cast<const T*>(j.x);
  T* y = static_cast<T*>(j.y);
  const V div = hn::Set(d, T(j.divisor));
  const int64_t cells = j.cells, last = cells - kWidth;  // the last tile's start (it may overlap the one before)
  const int64_t group_bytes = j.x_plane == cells ? G * k * cells * int64_t(sizeof(T)) : 0;
  for (int64_t p0 = 0; p0 < j.planes; p0 += G * k) {
    const uintptr_t ahead = reinterpret_cast<uintptr_t>(x + p0 * cells) + kPlaneAhead;  // (may pass the end)
    for (int64_t b = 0; b < group_bytes; b += 64) prefetch_far(reinterpret_cast<const void*>(ahead + uintptr_t(b)));
    const T* row[G][k];  // planes past the end repeat the last one (their sums are not stored)
    for (int64_t g = 0; g < G; ++g)
      for (int64_t i = 0; i < k; ++i) row[g][i] = x + std::min(p0 + g * k + i, j.planes - 1) * j.x_plane;
    V sum[G];
    for (int64_t g = 0; g < G; ++g) sum[g] = hn::Zero(d);
    // cells [c, c + kWidth) of every group, those from `from` on added in order
    auto add_tile = [&](int64_t c, int64_t from) HWY_ATTR {
#pragma GCC unroll 2
      for (int64_t g = 0; g < G; ++g) {
        V col[kWidth];
        tile(row[g], c, col);
#pragma GCC unroll 16
        for (int64_t i = 0; i < kWidth; ++i)
          if (i >= from) sum[g] = hn::Add(sum[g], col[i]);
      }
    };
    int64_t c = 0;
    for (; c <= last; c += kWidth) add_tile(c, 0);
    if (c < cells) add_tile(last, c - last);
    for (int64_t g = 0; g < G; ++g) {
      const int64_t q0 = p0 + g * k, n = std::min(k, j.planes - q0);
      if (n <= 0) break;
      const V q = hn::Div(sum[g], div);
      if (j.y_plane == 1 && n == k) {
        hn::StoreU(q, d, y + q0);
      } else {
        HWY_ALIGN T lane[k];
        hn::Store(q, d, lane);
        for (int64_t i = 0; i < n; ++i) y[(q0 + i) * j.y_plane] = lane[i];
      }
    }
  }
}
#endif

template <class T>
void plane_average(const PlaneAverageJob& j) {
#if HWY_TARGET == HWY_SCALAR
  for (int64_t p = 0; p < j.planes; ++p) {
    const T* x = static_cast<const T*>(j.x) + p * j.x_plane;
    T sum = T(0);
    for (int64_t c = 0; c < j.cells; ++c) sum += x[c];
    static_cast<T*>(j.y)[p * j.y_plane] = sum / T(j.divisor);
  }
#else
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
  // float32 planes eight to a 256-bit vector, a 4 x 4 tile in each 128-bit block: planes i and i + 4 of the eight
  // loaded into the two blocks of one vector (an insert from memory, which any of three ports runs), then the
  // tiles transposed in their blocks (in-block shuffles, two ports): about half the shuffles an element of the
  // 128-bit tiles below, whose shuffles bound them (and 512-bit tiles alike). In the cache 1.35-1.6x faster, the
  // gap case from the last-level cache 1.05x (Intel Xeon).
  if constexpr (std::is_same_v<T, float>) {
    const hn::Full256<float> d;
    const hn::Full128<float> h;
    const hn::Repartition<double, decltype(d)> d64;
    using V = hn::Vec<decltype(d)>;
    auto pairs = [&](V a, V b, bool upper) HWY_ATTR {  // 64-bit halves of a and b's blocks, interleaved
      const auto a64 = hn::BitCast(d64, a), b64 = hn::BitCast(d64, b);
      return hn::BitCast(d, upper ? hn::InterleaveUpper(d64, a64, b64) : hn::InterleaveLower(d64, a64, b64));
    };
    return plane_groups<decltype(d), 4, 1>(d, j, [&](const float* const* row, int64_t c, V* col) HWY_ATTR {
      V r[4];
#pragma GCC unroll 4
      for (int64_t i = 0; i < 4; ++i) r[i] = hn::Combine(d, hn::LoadU(h, row[i + 4] + c), hn::LoadU(h, row[i] + c));
      const V t0 = hn::InterleaveLower(d, r[0], r[1]), t1 = hn::InterleaveUpper(d, r[0], r[1]);
      const V t2 = hn::InterleaveLower(d, r[2], r[3]), t3 = hn::InterleaveUpper(d, r[2], r[3]);
      col[0] = pairs(t0, t2, false), col[1] = pairs(t0, t2, true), col[2] = pairs(t1, t3, false);
      col[3] = pairs(t1, t3, true);
    });
  }
#endif
  // k x k tiles of 128-bit vectors, transposed whole
  const hn::Full128<T> d;
  constexpr int64_t k = int64_t(hn::MaxLanes(d));
  plane_groups<decltype(d), k, 2>(d, j, [&](const T* const* row, int64_t c, hn::Vec<decltype(d)>* col) HWY_ATTR {
#pragma GCC unroll 16
    for (int64_t i = 0; i < k; ++i) col[i] = hn::LoadU(d, row[i] + c);
    transpose_tile(d, col);
  });
#endif
}

template <class T>
void block_average(const BlockAverageJob& j) {
  const hn::ScalableTag<T> d;
  const int64_t N = int64_t(hn::Lanes(d));
  const T* x = static_cast<const T*>(j.x);
  T* y = static_cast<T*>(j.y);
  for (int64_t l = 0; l < j.lanes; l += N)
    for (int64_t o = 0; o < j.outputs; ++o) {
      auto sum = hn::Zero(d);
      for (int64_t t = j.first[o]; t < j.first[o + 1]; ++t) sum = hn::Add(sum, hn::LoadU(d, x + j.tap[t] + l));
      hn::StoreU(hn::Div(sum, hn::Set(d, T(j.divisor[o]))), d, y + j.out_at[o] + l);
    }
}

template <class T>
void last_average(const LastAverageJob& j) {
  const hn::ScalableTag<T> d;
  const int64_t N = int64_t(hn::Lanes(d)), n = j.channels, vec = n / N * N;
  HWY_ALIGN T sum[kLastChunkBytes / sizeof(T)];
  const T* x = static_cast<const T*>(j.x);
  for (int64_t l = 0; l < vec; l += N) hn::Store(hn::Add(hn::Zero(d), hn::LoadU(d, x + l)), d, sum + l);
  for (int64_t l = vec; l < n; ++l) sum[l] = T(0) + x[l];
  for (int64_t c = 1; c < j.cells; ++c) {
    const T* xc = x + c * j.cell_step;
    for (int64_t l = 0; l < vec; l += N) hn::Store(hn::Add(hn::Load(d, sum + l), hn::LoadU(d, xc + l)), d, sum + l);
    for (int64_t l = vec; l < n; ++l) sum[l] += xc[l];
  }
  T* y = static_cast<T*>(j.y);
  const T div = T(j.divisor);
  for (int64_t l = 0; l < vec; l += N) hn::StoreU(hn::Div(hn::Load(d, sum + l), hn::Set(d, div)), d, y + l);
  for (int64_t l = vec; l < n; ++l) y[l] = sum[l] / div;
}

void PlaneAverageF32(const PlaneAverageJob& j) { plane_average<float>(j); }
void LastAverageF32(const LastAverageJob& j) { last_average<float>(j); }
void LastAverageF64(const LastAverageJob& j) { last_average<double>(j); }
void BlockAverageF32(const BlockAverageJob& j) { block_average<float>(j); }
void BlockAverageF64(const BlockAverageJob& j) { block_average<double>(j); }
void PlaneAverageF64(const PlaneAverageJob& j) { plane_average<double>(j); }

}  // namespace poolkit::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace poolkit::cpu {

HWY_EXPORT(PlaneAverageF32);
HWY_EXPORT(PlaneAverageF64);
void plane_average_f32(const PlaneAverageJob& j) { HWY_DYNAMIC_DISPATCH(PlaneAverageF32)(j); }
void plane_average_f64(const PlaneAverageJob& j) { HWY_DYNAMIC_DISPATCH(PlaneAverageF64)(j); }
HWY_EXPORT(BlockAverageF32);
HWY_EXPORT(BlockAverageF64);
void block_average_f32(const BlockAverageJob& j) { HWY_DYNAMIC_DISPATCH(BlockAverageF32)(j); }
void block_average_f64(const BlockAverageJob& j) { HWY_DYNAMIC_DISPATCH(BlockAverageF64)(j); }
HWY_EXPORT(LastAverageF32);
HWY_EXPORT(LastAverageF64);
void last_average_f32(const LastAverageJob& j) { HWY_DYNAMIC_DISPATCH(LastAverageF32)(j); }
void last_average_f64(const LastAverageJob& j) { HWY_DYNAMIC_DISPATCH(LastAverageF64)(j); }

bool plane_average_forward(const View5& x, const View5& y, DType dt, int64_t N, int64_t C, int64_t T, int64_t H,
                           int64_t W, double divisor, int64_t work) {
  const int64_t cells = T * H * W, xstep = plane_step(x, N, C), ystep = plane_step(y, N, C), planes = N * C;
  if ((dt != DType::f32 && dt != DType::f64) || cells < 16 / x.esize || xstep < cells ||
      !cells_in_a_row(x, T, H, W) || ystep < 1)
    return false;
  auto kernel = dt == DType::f32 ? plane_average_f32 : plane_average_f64;
  const int64_t chunk = (16384 / cells + 15) / 16 * 16, chunks = (planes + chunk - 1) / chunk;
  return parallel_for(chunks, work, [&](int64_t i) {
    PlaneAverageJob j;
    const int64_t p0 = i * chunk;
    j.x = x.at<char>(p0 * xstep), j.y = y.at<char>(p0 * ystep);
    j.x_plane = xstep, j.y_plane = ystep, j.planes = std::min(chunk, planes - p0), j.cells = cells;
    j.divisor = divisor;
    kernel(j);
    return true;
  });
}

bool last_average_forward(const View5& x, const View5& y, DType dt, int64_t N, int64_t C, int64_t T, int64_t H,
                          int64_t W, double divisor, int64_t work) {
  const int64_t cells = T * H * W;
  const bool packed = x.s[1] == 1 && x.s[4] == C && (H == 1 || x.s[3] == W * C) && (T == 1 || x.s[2] == H * W * C);
  if ((dt != DType::f32 && dt != DType::f64) || !packed || y.s[1] != 1 || x.s[0] < 0 || y.s[0] < 0) return false;
  auto kernel = dt == DType::f32 ? last_average_f32 : last_average_f64;
  // channels in chunks of the sums' room, smaller where few images would leave a thread idle
  const int64_t room = kLastChunkBytes / x.esize, want = std::max<int64_t>(1, (8 + N - 1) / N);
  const int64_t split = std::max<int64_t>(16, (C + want - 1) / want), chunk = std::min(room, (split + 15) / 16 * 16);
  const int64_t chunks = (C + chunk - 1) / chunk;
  return parallel_for(N * chunks, work, [&](int64_t i) {
    const int64_t n = i / chunks, c0 = (i % chunks) * chunk;
    LastAverageJob j;
    j.x = x.at<char>(n * x.s[0] + c0), j.y = y.at<char>(n * y.s[0] + c0);
    j.channels = std::min(chunk, C - c0), j.cells = cells, j.cell_step = C, j.divisor = divisor;
    kernel(j);
    return true;
  });
}

}  // namespace poolkit::cpu
#endif
