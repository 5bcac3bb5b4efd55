#include "linear_rows.hpp"

#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define PKMEX_AVX2 1
#include <immintrin.h>
#endif

namespace pkmex {

// (xs[i] - first is exact where xs[i] is a whole number below 2^53, and a whole number only where xs[i] is one.)
static int64_t slab_offsets_scalar(const double* xs, int64_t n, double first, int64_t out, int32_t* offs) {
  for (int64_t i = 0; i < n; ++i) {
    const double d = xs[i] - first;
    if (!(d >= 0 && d < double(out) && d == double(int32_t(d)))) return i;
    offs[i] = int32_t(d);
  }
  return n;
}

#if PKMEX_AVX2
bool have_avx2() {
  static const bool yes = __builtin_cpu_supports("avx2");
  return yes;
}

__attribute__((target("avx2"))) void linear_row_avx2(const uint8_t* taps, int64_t n, double base,
                                                     const int32_t* lead, const int32_t* tap, double* out) {
  auto one = [&](int64_t k) { out[k] = base + double(lead[k] + tap[taps[k] < 7 ? taps[k] : 7]); };
  int64_t k = 0;
  for (; k < n && (reinterpret_cast<uintptr_t>(out + k) & 31); ++k) one(k);  // (streamed stores: 32-byte aligned)
  const __m256i table = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(tap)), last = _mm256_set1_epi32(7);
  const __m256d b = _mm256_set1_pd(base);
  for (; k + 8 <= n; k += 8) {
    int64_t eight;
    std::memcpy(&eight, taps + k, 8);
    const __m256i t = _mm256_min_epu32(_mm256_cvtepu8_epi32(_mm_cvtsi64_si128(eight)), last);
    const __m256i o = _mm256_add_epi32(_mm256_permutevar8x32_epi32(table, t),
                                       _mm256_loadu_si256(reinterpret_cast<const __m256i*>(lead + k)));
    _mm256_stream_pd(out + k, _mm256_add_pd(_mm256_cvtepi32_pd(_mm256_castsi256_si128(o)), b));
    _mm256_stream_pd(out + k + 4, _mm256_add_pd(_mm256_cvtepi32_pd(_mm256_extracti128_si256(o, 1)), b));
  }
  for (; k < n; ++k) one(k);
}

void stream_fence() { _mm_sfence(); }

// The eight cells of 16 at p that are pairs' first (even) and second (odd) cells: lanes 0-7 of `first` and
// `second` (float: one vector each; double: four lanes in each of two).
__attribute__((target("avx2"))) static void split_pairs(const float* p, __m256* first, __m256* second) {
  const __m256i split = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);  // a vector's even cells, then its odd ones
  const __m256 a = _mm256_permutevar8x32_ps(_mm256_loadu_ps(p), split),
               b = _mm256_permutevar8x32_ps(_mm256_loadu_ps(p + 8), split);
  first[0] = _mm256_permute2f128_ps(a, b, 0x20), second[0] = _mm256_permute2f128_ps(a, b, 0x31);
}
__attribute__((target("avx2"))) static void split_pairs(const double* p, __m256d* first, __m256d* second) {
  for (int h = 0; h < 2; ++h) {
    const __m256d a = _mm256_loadu_pd(p + 8 * h), b = _mm256_loadu_pd(p + 8 * h + 4);
    // (unpack: cells 0, 4, 2, 6 and 1, 5, 3, 7 of the eight; the 64-bit permute puts them in order)
    first[h] = _mm256_permute4x64_pd(_mm256_unpacklo_pd(a, b), 0xD8);
    second[h] = _mm256_permute4x64_pd(_mm256_unpackhi_pd(a, b), 0xD8);
  }
}

// 8 taps as four-byte lanes (float), or as two vectors of four eight-byte lanes (double).
__attribute__((target("avx2"))) static void tap_lanes(__m256i t, __m256i* lanes, float) { lanes[0] = t; }
__attribute__((target("avx2"))) static void tap_lanes(__m256i t, __m256i* lanes, double) {
  lanes[0] = _mm256_cvtepi32_epi64(_mm256_castsi256_si128(t));
  lanes[1] = _mm256_cvtepi32_epi64(_mm256_extracti128_si256(t, 1));
}

// out = v in the lanes whose tap is `which`; a vector's values to d (streamed where d is 32-byte aligned).
__attribute__((target("avx2"))) static void pick(__m256& out, __m256 v, __m256i taps, int which) {
  out = _mm256_blendv_ps(out, v, _mm256_castsi256_ps(_mm256_cmpeq_epi32(taps, _mm256_set1_epi32(which))));
}
__attribute__((target("avx2"))) static void pick(__m256d& out, __m256d v, __m256i taps, int which) {
  out = _mm256_blendv_pd(out, v, _mm256_castsi256_pd(_mm256_cmpeq_epi64(taps, _mm256_set1_epi64x(which))));
}
__attribute__((target("avx2"))) static void put(float* d, __m256 v, bool aligned) {
  aligned ? _mm256_stream_ps(d, v) : _mm256_storeu_ps(d, v);
}
__attribute__((target("avx2"))) static void put(double* d, __m256d v, bool aligned) {
  aligned ? _mm256_stream_pd(d, v) : _mm256_storeu_pd(d, v);
}
__attribute__((target("avx2"))) static __m256 zeros(float) { return _mm256_setzero_ps(); }
__attribute__((target("avx2"))) static __m256d zeros(double) { return _mm256_setzero_pd(); }

template <class T>
__attribute__((target("avx2"))) static int64_t pair_row(const uint8_t* taps, int64_t n, int cells, const T* src,
                                                        const int32_t* tap, T* dst) {
  constexpr int kParts = std::is_same_v<T, float> ? 1 : 2, kPart = 8 / kParts;  // vectors of eight outputs
  const bool aligned = reinterpret_cast<uintptr_t>(dst) % 32 == 0;
  const __m256i top = _mm256_set1_epi32(cells - 1);
  int64_t k = 0;
  for (; k + 8 <= n; k += 8) {
    int64_t eight;
    std::memcpy(&eight, taps + k, 8);
    const __m256i t = _mm256_cvtepu8_epi32(_mm_cvtsi64_si128(eight));
    if (!_mm256_testz_si256(_mm256_cmpgt_epi32(t, top), _mm256_set1_epi32(-1))) return k;
    __m256i lanes[kParts];
    tap_lanes(t, lanes, T{});
    decltype(zeros(T{})) out[kParts], first[kParts], second[kParts];
    for (int h = 0; h < kParts; ++h) out[h] = zeros(T{});
    for (int r = 0; 2 * r < cells; ++r) {
      const T* cells_at = src + 2 * k + tap[2 * r];
      _mm_prefetch(reinterpret_cast<const char*>(cells_at) + kGatherAhead, _MM_HINT_T0);
      split_pairs(cells_at, first, second);
      for (int h = 0; h < kParts; ++h) pick(out[h], first[h], lanes[h], 2 * r), pick(out[h], second[h], lanes[h], 2 * r + 1);
    }
    for (int h = 0; h < kParts; ++h) put(dst + k + h * kPart, out[h], aligned);
  }
  for (; k < n; ++k) {
    if (taps[k] >= cells) return k;
    dst[k] = src[2 * k + tap[taps[k]]];
  }
  return n;
}

int64_t pair_row_avx2(const uint8_t* taps, int64_t n, int cells, const float* src, const int32_t* tap, float* dst) {
  return pair_row(taps, n, cells, src, tap, dst);
}
int64_t pair_row_avx2(const uint8_t* taps, int64_t n, int cells, const double* src, const int32_t* tap,
                      double* dst) {
  return pair_row(taps, n, cells, src, tap, dst);
}

__attribute__((target("avx2"))) static int64_t slab_offsets_avx2(const double* xs, int64_t n, double first,
                                                                 int64_t out, int32_t* offs) {
  const __m256d f = _mm256_set1_pd(first), end = _mm256_set1_pd(double(out)), zero = _mm256_setzero_pd();
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const __m256d d = _mm256_sub_pd(_mm256_loadu_pd(xs + i), f);  // exact: see slab_offsets_scalar
    const __m256d whole = _mm256_cmp_pd(_mm256_round_pd(d, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC), d, _CMP_EQ_OQ);
    const __m256d in = _mm256_and_pd(_mm256_cmp_pd(d, zero, _CMP_GE_OQ), _mm256_cmp_pd(d, end, _CMP_LT_OQ));
    if (_mm256_movemask_pd(_mm256_and_pd(whole, in)) != 15) break;
    _mm_storeu_si128(reinterpret_cast<__m128i*>(offs + i), _mm256_cvttpd_epi32(d));
  }
  return i + slab_offsets_scalar(xs + i, n - i, first, out, offs + i);
}
#else
bool have_avx2() { return false; }
void linear_row_avx2(const uint8_t*, int64_t, double, const int32_t*, const int32_t*, double*) {}
void stream_fence() {}
int64_t pair_row_avx2(const uint8_t*, int64_t, int, const float*, const int32_t*, float*) { return 0; }
int64_t pair_row_avx2(const uint8_t*, int64_t, int, const double*, const int32_t*, double*) { return 0; }
#endif

int64_t slab_offsets(const double* xs, int64_t n, double first, int64_t out, int32_t* offs) {
#if PKMEX_AVX2
  if (have_avx2()) return slab_offsets_avx2(xs, n, first, out, offs);
#endif
  return slab_offsets_scalar(xs, n, first, out, offs);
}

}  // namespace pkmex
