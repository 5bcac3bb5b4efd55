#include "block_scatter.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "linear_rows.hpp"
#include "poolkit/threads.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define PKMEX_BLOCKS_AVX2 1
#include <immintrin.h>
#endif

namespace pkmex {
namespace {

std::atomic<int64_t> done{0}, gathered{0};

// The output as columns of its first dimension (s0 cells each); the source element of a column's cells 2k and
// 2k + 1 is k past the column's source base, which moves by the source's stride of a dimension d >= 1 each time
// that dimension's index crosses a multiple of r_d.
struct Blocks {
  std::vector<int64_t> size, r, stride;  // output size, factors, source strides (dimensions 1..)
  int64_t s0 = 0, columns = 1, count = 1;
};

bool plan_blocks(const std::vector<int64_t>& xsize, const std::vector<int64_t>& size, Blocks& b) {
  const size_t rank = std::max(xsize.size(), size.size());
  int64_t stride = 1;
  for (size_t d = 0; d < rank; ++d) {
    const int64_t x = d < xsize.size() ? xsize[d] : 1, s = d < size.size() ? size[d] : 1;
    if (x < 1 || s % x != 0) return false;
    if (d == 0) {
      if (s != 2 * x || s % 8 != 0) return false;  // (cells 2k, 2k + 1 of a column, four sources a step)
      b.s0 = s;
    } else {
      b.size.push_back(s), b.r.push_back(s / x), b.stride.push_back(stride);
      b.columns *= s;
    }
    stride *= x, b.count *= x;
  }
  return true;
}

#if PKMEX_BLOCKS_AVX2
// Cells [z, z + 8) of a column from sources [k, k + 4) at x / ix: cell 2k + e (e = 0, 1) holds x[k] where
// ix[k] names it (1-based `first` is cell z's number), else +0; Add adds +0 to each (dX(indx) += dY from zeros:
// -0 becomes +0). Streamed; returns how many of the four indices named a cell here.
template <bool Add>
__attribute__((target("avx2"))) inline int eight(const double* ix, const float* x, float* z, double first) {
  const __m256d id = _mm256_loadu_pd(ix), e0 = _mm256_add_pd(_mm256_set1_pd(first), _mm256_set_pd(6, 4, 2, 0));
  const __m256d m0 = _mm256_cmp_pd(id, e0, _CMP_EQ_OQ);
  const __m256d m1 = _mm256_cmp_pd(id, _mm256_add_pd(e0, _mm256_set1_pd(1)), _CMP_EQ_OQ);
  const __m256i low = _mm256_set_epi32(7, 5, 3, 1, 6, 4, 2, 0);  // each 64-bit mask lane's low half, in order
  const __m128 k0 = _mm_castsi128_ps(_mm256_castsi256_si128(_mm256_permutevar8x32_epi32(_mm256_castpd_si256(m0), low)));
  const __m128 k1 = _mm_castsi128_ps(_mm256_castsi256_si128(_mm256_permutevar8x32_epi32(_mm256_castpd_si256(m1), low)));
  const __m128 xv = _mm_loadu_ps(x), v0 = _mm_and_ps(xv, k0), v1 = _mm_and_ps(xv, k1);
  __m128 lo = _mm_unpacklo_ps(v0, v1), hi = _mm_unpackhi_ps(v0, v1);
  if constexpr (Add) lo = _mm_add_ps(lo, _mm_setzero_ps()), hi = _mm_add_ps(hi, _mm_setzero_ps());
  _mm_stream_ps(z, lo), _mm_stream_ps(z + 4, hi);
  return __builtin_popcount(unsigned(_mm256_movemask_pd(m0) | _mm256_movemask_pd(m1)));
}

template <bool Add>
__attribute__((target("avx2"))) inline int eight(const double* ix, const double* x, double* z, double first) {
  const __m256d id = _mm256_loadu_pd(ix), e0 = _mm256_add_pd(_mm256_set1_pd(first), _mm256_set_pd(6, 4, 2, 0));
  const __m256d m0 = _mm256_cmp_pd(id, e0, _CMP_EQ_OQ);
  const __m256d m1 = _mm256_cmp_pd(id, _mm256_add_pd(e0, _mm256_set1_pd(1)), _CMP_EQ_OQ);
  const __m256d xv = _mm256_loadu_pd(x), v0 = _mm256_and_pd(xv, m0), v1 = _mm256_and_pd(xv, m1);
  __m256d a = _mm256_unpacklo_pd(v0, v1), b = _mm256_unpackhi_pd(v0, v1);  // cells 0, 1, 4, 5 and 2, 3, 6, 7
  if constexpr (Add) a = _mm256_add_pd(a, _mm256_setzero_pd()), b = _mm256_add_pd(b, _mm256_setzero_pd());
  _mm_stream_pd(z, _mm256_castpd256_pd128(a)), _mm_stream_pd(z + 2, _mm256_castpd256_pd128(b));
  _mm_stream_pd(z + 4, _mm256_extractf128_pd(a, 1)), _mm_stream_pd(z + 6, _mm256_extractf128_pd(b, 1));
  return __builtin_popcount(unsigned(_mm256_movemask_pd(m0) | _mm256_movemask_pd(m1)));
}

// Columns [c0, c1) of the output; returns the matches.
template <bool Add, class T>
__attribute__((target("avx2"))) int64_t columns(const Blocks& b, const double* ix, const T* src, T* dst, int64_t c0,
                                                int64_t c1) {
  const size_t dims = b.size.size();
  std::vector<int64_t> j(dims), rem(dims);
  int64_t base = 0;  // the source base of column c0
  for (size_t d = 0, c = c0; d < dims; ++d) {
    j[d] = c % b.size[d], c /= b.size[d];
    rem[d] = j[d] % b.r[d], base += j[d] / b.r[d] * b.stride[d];
  }
  int64_t matches = 0;
  for (int64_t c = c0; c < c1; ++c) {
    const int64_t z = c * b.s0;
    for (int64_t k = 0; k < b.s0 / 2; k += 4)
      matches += eight<Add>(ix + base + k, src + base + k, dst + z + 2 * k, double(z + 2 * k + 1));
    for (size_t d = 0; d < dims; ++d) {  // the next column: dimension 1 first, carrying into the next
      if (++rem[d] == b.r[d]) rem[d] = 0, base += b.stride[d];
      if (++j[d] < b.size[d]) break;
      base -= b.size[d] / b.r[d] * b.stride[d], j[d] = 0, rem[d] = 0;
    }
  }
  _mm_sfence();
  return matches;
}

// The gather's four outputs from one column of the output's cells [z, z + 8) at x (1-based `first` is cell z's
// number): out = x's cell 2k + e in the lanes whose index ix[k] names it (others unchanged). Returns how many of
// the four did.
__attribute__((target("avx2"))) inline int pick_four(const double* ix, const float* x, double first, __m128& out) {
  const __m256d id = _mm256_loadu_pd(ix), e0 = _mm256_add_pd(_mm256_set1_pd(first), _mm256_set_pd(6, 4, 2, 0));
  const __m256d m0 = _mm256_cmp_pd(id, e0, _CMP_EQ_OQ);
  const __m256d m1 = _mm256_cmp_pd(id, _mm256_add_pd(e0, _mm256_set1_pd(1)), _CMP_EQ_OQ);
  const __m256i low = _mm256_set_epi32(7, 5, 3, 1, 6, 4, 2, 0);  // (as in eight: the 64-bit lanes' low halves)
  const __m128 k0 = _mm_castsi128_ps(_mm256_castsi256_si128(_mm256_permutevar8x32_epi32(_mm256_castpd_si256(m0), low)));
  const __m128 k1 = _mm_castsi128_ps(_mm256_castsi256_si128(_mm256_permutevar8x32_epi32(_mm256_castpd_si256(m1), low)));
  const __m256 v = _mm256_permutevar8x32_ps(_mm256_loadu_ps(x), low);  // first cells in the low half, second high
  out = _mm_blendv_ps(_mm_blendv_ps(out, _mm256_castps256_ps128(v), k0), _mm256_extractf128_ps(v, 1), k1);
  return __builtin_popcount(unsigned(_mm256_movemask_pd(m0) | _mm256_movemask_pd(m1)));
}
__attribute__((target("avx2"))) inline int pick_four(const double* ix, const double* x, double first, __m256d& out) {
  const __m256d id = _mm256_loadu_pd(ix), e0 = _mm256_add_pd(_mm256_set1_pd(first), _mm256_set_pd(6, 4, 2, 0));
  const __m256d m0 = _mm256_cmp_pd(id, e0, _CMP_EQ_OQ);
  const __m256d m1 = _mm256_cmp_pd(id, _mm256_add_pd(e0, _mm256_set1_pd(1)), _CMP_EQ_OQ);
  const __m256d a = _mm256_loadu_pd(x), b = _mm256_loadu_pd(x + 4);  // (unpack: cells 0, 4, 2, 6 and 1, 5, 3, 7)
  out = _mm256_blendv_pd(out, _mm256_permute4x64_pd(_mm256_unpacklo_pd(a, b), 0xD8), m0);
  out = _mm256_blendv_pd(out, _mm256_permute4x64_pd(_mm256_unpackhi_pd(a, b), 0xD8), m1);
  return __builtin_popcount(unsigned(_mm256_movemask_pd(m0) | _mm256_movemask_pd(m1)));
}
__attribute__((target("avx2"))) inline void put_four(float* d, __m128 v) { _mm_stream_ps(d, v); }
__attribute__((target("avx2"))) inline void put_four(double* d, __m256d v) {
  _mm_stream_pd(d, _mm256_castpd256_pd128(v)), _mm_stream_pd(d + 2, _mm256_extractf128_pd(v, 1));
}
__attribute__((target("avx2"))) inline __m128 four_zeros(float) { return _mm_setzero_ps(); }
__attribute__((target("avx2"))) inline __m256d four_zeros(double) { return _mm256_setzero_pd(); }

// The gather's columns [c0, c1) of the values' (dst's) columns: each output's block is the same rows of
// r_1 x r_2 x ... output columns (`block`: their offsets from the first, in cells). Returns the matches.
template <class T>
__attribute__((target("avx2"))) int64_t gather_columns(const Blocks& b, const std::vector<int64_t>& block,
                                                       const double* ix, const T* src, T* dst, int64_t c0,
                                                       int64_t c1) {
  const size_t dims = b.size.size();
  const int64_t h = b.s0 / 2;  // a values' column
  std::vector<int64_t> j(dims), step(dims);  // the column's coordinates; a block's step along each, in cells
  int64_t first = 0;  // the output cell of column c0's first block
  for (size_t d = 0, c = c0, cells = b.s0; d < dims; cells *= b.size[d], ++d) {
    const int64_t n = b.size[d] / b.r[d];
    j[d] = c % n, c /= n, step[d] = b.r[d] * cells, first += j[d] * step[d];
  }
  int64_t matches = 0;
  for (int64_t c = c0; c < c1; ++c) {
    for (int64_t k = 0; k < h; k += 4) {
      auto out = four_zeros(T{});
      _mm_prefetch(reinterpret_cast<const char*>(ix + c * h + k) + kGatherAhead, _MM_HINT_T0);
      for (int64_t o : block) {
        const T* cells = src + first + o + 2 * k;
        _mm_prefetch(reinterpret_cast<const char*>(cells) + kGatherAhead, _MM_HINT_T0);
        matches += pick_four(ix + c * h + k, cells, double(first + o + 2 * k + 1), out);
      }
      put_four(dst + c * h + k, out);
    }
    for (size_t d = 0; d < dims; ++d) {  // the next column: dimension 1 first, carrying into the next
      first += step[d];
      if (++j[d] < b.size[d] / b.r[d]) break;
      first -= j[d] * step[d], j[d] = 0;
    }
  }
  _mm_sfence();
  return matches;
}
#endif

}  // namespace

template <bool Add, class T>
bool scatter_blocks(const double* ix, const T* src, T* dst, const std::vector<int64_t>& xsize,
                    const std::vector<int64_t>& size) {
#if PKMEX_BLOCKS_AVX2
  Blocks b;
  if (!have_avx2() || reinterpret_cast<uintptr_t>(dst) % 16 != 0 || !plan_blocks(xsize, size, b)) return false;
  int64_t matches = 0;
#pragma omp parallel reduction(+ : matches) num_threads(poolkit::num_threads())
  {
    const int64_t threads = omp_get_num_threads(), t = omp_get_thread_num();
    matches += columns<Add>(b, ix, src, dst, b.columns * t / threads, b.columns * (t + 1) / threads);
  }
  if (matches != b.count) return false;
  done.fetch_add(1, std::memory_order_relaxed);
  return true;
#else
  (void)ix, (void)src, (void)dst, (void)xsize, (void)size;
  return false;
#endif
}

template <class T>
bool gather_blocks(const double* ix, const T* src, T* dst, const std::vector<int64_t>& xsize,
                   const std::vector<int64_t>& size) {
#if PKMEX_BLOCKS_AVX2
  Blocks b;
  if (!have_avx2() || reinterpret_cast<uintptr_t>(dst) % 16 != 0 || !plan_blocks(xsize, size, b)) return false;
  std::vector<int64_t> block{0};  // a block's output columns, as offsets in cells from its first
  for (size_t d = 0, cells = b.s0; d < b.size.size(); cells *= b.size[d], ++d) {
    std::vector<int64_t> wider;
    for (int64_t q = 0; q < b.r[d]; ++q)
      for (int64_t o : block) wider.push_back(o + q * cells);
    block = std::move(wider);
  }
  const int64_t columns = b.count / (b.s0 / 2);
  int64_t matches = 0;
#pragma omp parallel reduction(+ : matches) num_threads(poolkit::num_threads())
  {
    const int64_t threads = omp_get_num_threads(), t = omp_get_thread_num();
    matches += gather_columns(b, block, ix, src, dst, columns * t / threads, columns * (t + 1) / threads);
  }
  if (matches != b.count) return false;
  gathered.fetch_add(1, std::memory_order_relaxed);
  return true;
#else
  (void)ix, (void)src, (void)dst, (void)xsize, (void)size;
  return false;
#endif
}

int64_t block_scatters() { return done.load(std::memory_order_relaxed); }
int64_t block_gathers() { return gathered.load(std::memory_order_relaxed); }

template bool scatter_blocks<false, float>(const double*, const float*, float*, const std::vector<int64_t>&,
                                           const std::vector<int64_t>&);
template bool scatter_blocks<false, double>(const double*, const double*, double*, const std::vector<int64_t>&,
                                            const std::vector<int64_t>&);
template bool scatter_blocks<true, float>(const double*, const float*, float*, const std::vector<int64_t>&,
                                          const std::vector<int64_t>&);
template bool scatter_blocks<true, double>(const double*, const double*, double*, const std::vector<int64_t>&,
                                           const std::vector<int64_t>&);

template bool gather_blocks(const double*, const float*, float*, const std::vector<int64_t>&,
                            const std::vector<int64_t>&);
template bool gather_blocks(const double*, const double*, double*, const std::vector<int64_t>&,
                            const std::vector<int64_t>&);

}  // namespace pkmex
