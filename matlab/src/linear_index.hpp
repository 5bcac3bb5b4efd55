#pragma once
// MATLAB's linear indices (1-based doubles) applied in parallel with MATLAB's own results:
//   scatter:  Z = zeros(n); Z(indx) = X      (the last of repeated indices wins)
//             dX = zeros(n); dX(indx) += dY  (repeated indices add up in index order)
//   gather:   dX = dZ(indx)
// A scatter splits the OUTPUT between threads: each thread zeroes its own part, then reads every index in order
// and applies those that land in its part, so each cell sees exactly the writes, in the order, of the serial
// loop. Every index is checked (a whole number in 1..n) as it is read; an invalid one is never used, and the
// caller reports the first.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>

namespace pkmex {

// Whether d is a linear index in 1..n.
inline bool valid_linear(double d, int64_t n) { return d >= 1 && d <= double(n) && d == double(int64_t(d)); }

// The first invalid position found by a parallel loop (its smallest i), or -1.
inline int64_t first_bad(int64_t bad) { return bad == std::numeric_limits<int64_t>::max() ? -1 : bad; }

// dst[0..n) = 0, then dst[ix[i] - 1] = src[i] (add: +=) for i in order. Returns the first invalid entry of ix
// (skipped, never written through), or -1.
template <bool Add, class T>
int64_t scatter_linear(const double* ix, int64_t count, const T* src, T* dst, int64_t n) {
  int64_t bad = std::numeric_limits<int64_t>::max();
#pragma omp parallel reduction(min : bad)
  {
    int64_t threads = omp_get_num_threads(), t = omp_get_thread_num();
    int64_t lo = n * t / threads, hi = n * (t + 1) / threads;
    std::memset(static_cast<void*>(dst + lo), 0, size_t(hi - lo) * sizeof(T));
    for (int64_t i = 0; i < count; ++i) {
      double d = ix[i];
      if (!valid_linear(d, n)) {
        bad = std::min(bad, i);
        continue;
      }
      int64_t o = int64_t(d) - 1;
      if (o >= lo && o < hi) {
        if constexpr (Add) dst[o] += src[i];
        else dst[o] = src[i];
      }
    }
  }
  return first_bad(bad);
}

// dst[i] = src[ix[i] - 1], src holding n elements. Returns the first invalid entry of ix, or -1.
template <class T>
int64_t gather_linear(const double* ix, int64_t count, const T* src, T* dst, int64_t n) {
  int64_t bad = std::numeric_limits<int64_t>::max();
#pragma omp parallel for schedule(static) reduction(min : bad)
  for (int64_t i = 0; i < count; ++i) {
    double d = ix[i];
    if (valid_linear(d, n)) dst[i] = src[int64_t(d) - 1];
    else bad = std::min(bad, i);
  }
  return first_bad(bad);
}

}  // namespace pkmex
