#include "linear_rows.hpp"

#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define PKMEX_AVX2 1
#include <immintrin.h>
#endif

namespace pkmex {

#if PKMEX_AVX2
bool have_avx2() {
  static const bool yes = __builtin_cpu_supports("avx2");
  return yes;
}

__attribute__((target("avx2"))) void linear_row_avx2(const uint8_t* taps, int64_t n, double base,
                                                     const int32_t* lead, const int32_t* tap, double* out) {
  auto one = [&](int64_t k) { out[k] = base + double(lead[k] + tap[taps[k] < 7 ? taps[k] : 7]); };
  int64_t k = 0;
  for (; k < n && (reinterpret_cast<uintptr_t>(out + k) & 31); ++k) one(k);  // up to the first 32-byte line part
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
#else
bool have_avx2() { return false; }
void linear_row_avx2(const uint8_t*, int64_t, double, const int32_t*, const int32_t*, double*) {}
void stream_fence() {}
#endif

}  // namespace pkmex
