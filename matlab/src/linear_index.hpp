#pragma once
// MATLAB's linear indices (1-based doubles) applied in parallel with MATLAB's own results:
//   scatter:  Z = zeros(n); Z(indx) = X      (the last of repeated indices wins)
//             dX = zeros(n); dX(indx) += dY  (repeated indices add up in index order)
//   gather:   dX = dZ(indx)
// A scatter splits the OUTPUT between threads: each thread zeroes its own part, then reads every index in order
// and applies those that land in its part, so each cell sees exactly the writes, in the order, of the serial
// loop. Every index is checked (a whole number in 1..n) before anything is written through it.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>

namespace pkmex {

// The position of the first invalid index, or -1.
inline int64_t first_bad_linear(const double* ix, int64_t count, int64_t n) {
  int64_t bad = std::numeric_limits<int64_t>::max();
#pragma omp parallel for schedule(static) reduction(min : bad)
  for (int64_t i = 0; i < count; ++i) {
    double d = ix[i];
    if (!(d >= 1 && d <= double(n) && d == double(int64_t(d)))) bad = std::min(bad, i);
  }
  return bad == std::numeric_limits<int64_t>::max() ? -1 : bad;
}

// dst[0..n) = 0, then dst[ix[i] - 1] = src[i] (add: +=) for i in order. The indices must have passed
// first_bad_linear.
template <bool Add, class T>
void scatter_linear(const double* ix, int64_t count, const T* src, T* dst, int64_t n) {
#pragma omp parallel
  {
    int64_t threads = omp_get_num_threads(), t = omp_get_thread_num();
    int64_t lo = n * t / threads, hi = n * (t + 1) / threads;
    std::memset(static_cast<void*>(dst + lo), 0, size_t(hi - lo) * sizeof(T));
    for (int64_t i = 0; i < count; ++i) {
      int64_t o = int64_t(ix[i]) - 1;
      if (o >= lo && o < hi) {
        if constexpr (Add) dst[o] += src[i];
        else dst[o] = src[i];
      }
    }
  }
}

// dst[i] = src[ix[i] - 1]; the indices must have passed first_bad_linear.
template <class T>
void gather_linear(const double* ix, int64_t count, const T* src, T* dst) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < count; ++i) dst[i] = src[int64_t(ix[i]) - 1];
}

}  // namespace pkmex
