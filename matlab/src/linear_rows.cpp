#include "linear_rows.hpp"

#include <cstring>

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
#endif

int64_t slab_offsets(const double* xs, int64_t n, double first, int64_t out, int32_t* offs) {
#if PKMEX_AVX2
  if (have_avx2()) return slab_offsets_avx2(xs, n, first, out, offs);
#endif
  return slab_offsets_scalar(xs, n, first, out, offs);
}

}  // namespace pkmex
