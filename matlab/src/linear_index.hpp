#pragma once
// MATLAB's linear indices (1-based doubles) applied in parallel with MATLAB's own results:
//   scatter:  Z = zeros(n); Z(indx) = X      (the last of repeated indices wins)
//             dX = zeros(n); dX(indx) += dY  (repeated indices add up in index order)
//   gather:   dX = dZ(indx)
// A scatter first tries slabs: X and the output split into the same number of equal slabs (the batches, for
// indices from maxpool), slab s of X applied into slab s of the output, so the indices are read once. Each slab
// checks that every index it applies lies in its own output slab (one compare pair per index, which also checks
// the index is valid); then each output cell sees exactly the writes, in the order, of the serial loop. If any
// index leaves its slab, the call redoes the whole scatter the ordered way: the OUTPUT split between threads,
// each thread zeroing its part and reading every index in order to apply those that land in it. Every index is
// checked (a whole number in 1..n) as it is read; an invalid one is never used, and the caller reports the first.
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <limits>

#include "linear_rows.hpp"
#include "poolkit/threads.hpp"

namespace pkmex {

// Whether d is a linear index in 1..n.
inline bool valid_linear(double d, int64_t n) { return d >= 1 && d <= double(n) && d == double(int64_t(d)); }

// The first invalid position found by a parallel loop (its smallest i), or -1.
inline int64_t first_bad(int64_t bad) { return bad == std::numeric_limits<int64_t>::max() ? -1 : bad; }

// The ordered scatter: dst[0..n) = 0, then dst[ix[i] - 1] = src[i] (add: +=) for i in order. Returns the first
// invalid entry of ix (skipped, never written through), or -1.
template <bool Add, class T>
int64_t scatter_ordered(const double* ix, int64_t count, const T* src, T* dst, int64_t n) {
  int64_t bad = std::numeric_limits<int64_t>::max();
#pragma omp parallel reduction(min : bad) num_threads(poolkit::num_threads())
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

constexpr int64_t kChunk = 512;  // a slab's indices checked and turned into offsets this many at a time

// The same scatter by slabs (count and n both multiples of slabs, slabs of under 2^31 elements). Returns false,
// having written dst only partly, when some index leaves its slab (the caller then scatters the ordered way); else
// true, with *bad the first invalid entry of ix or -1.
template <bool Add, class T>
bool scatter_slabs(const double* ix, int64_t count, const T* src, T* dst, int64_t n, int64_t slabs, int64_t* bad) {
  const int64_t in = count / slabs, out = n / slabs;
  std::atomic<bool> crossed{false};
  int64_t first = std::numeric_limits<int64_t>::max();
#pragma omp parallel for schedule(static) reduction(min : first) num_threads(poolkit::num_threads())
  for (int64_t s = 0; s < slabs; ++s) {
    if (crossed.load(std::memory_order_relaxed)) continue;
    const double *xs = ix + s * in, lo = double(s * out);
    const T* from = src + s * in;
    T* to = dst + s * out;
    std::memset(static_cast<void*>(to), 0, size_t(out) * sizeof(T));  // zeroed and filled while in the cache
    int32_t offs[kChunk];
    for (int64_t i = 0; i < in;) {
      const int64_t c = std::min(kChunk, in - i), m = slab_offsets(xs + i, c, lo + 1, out, offs);
      for (int64_t j = 0; j < m; ++j) {
        if constexpr (Add) to[offs[j]] += from[i + j];
        else to[offs[j]] = from[i + j];
      }
      i += m;
      if (m < c) {  // xs[i] is outside this slab, or not an index at all
        if (valid_linear(xs[i], n)) crossed.store(true, std::memory_order_relaxed);
        else first = std::min(first, s * in + i);  // the slab's first invalid entry: the call fails
        break;
      }
    }
  }
  *bad = first_bad(first);
  return !crossed.load();
}

// dst[0..n) = 0, then dst[ix[i] - 1] = src[i] (add: +=) for i in order: by `slabs` slabs where every index
// stays in its own, else ordered. Returns the first invalid entry of ix (never written through), or -1.
template <bool Add, class T>
int64_t scatter_linear(const double* ix, int64_t count, const T* src, T* dst, int64_t n, int64_t slabs) {
  int64_t bad = -1;
  if (slabs > 1 && count % slabs == 0 && n % slabs == 0 && n / slabs <= std::numeric_limits<int32_t>::max() &&
      scatter_slabs<Add>(ix, count, src, dst, n, slabs, &bad))
    return bad;
  return scatter_ordered<Add>(ix, count, src, dst, n);
}

// dst[i] = src[ix[i] - 1], src holding n elements. Returns the first invalid entry of ix, or -1.
template <class T>
int64_t gather_linear(const double* ix, int64_t count, const T* src, T* dst, int64_t n) {
  int64_t bad = std::numeric_limits<int64_t>::max();
#pragma omp parallel for schedule(static) reduction(min : bad) num_threads(poolkit::num_threads())
  for (int64_t i = 0; i < count; ++i) {
    double d = ix[i];
    if (valid_linear(d, n)) dst[i] = src[int64_t(d) - 1];
    else bad = std::min(bad, i);
  }
  return first_bad(bad);
}

}  // namespace pkmex
