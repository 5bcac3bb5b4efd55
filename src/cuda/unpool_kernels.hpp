#pragma once
// The per-thread bodies of max unpooling (see max_kernels.hpp for the scheme). The forward is deterministic
// without ordering writes: a first pass records, for every output cell, the largest input position (in plane
// order) that names it, with an order-independent atomic max; a second pass gathers. So the last input in order
// wins, as in the reference, and y is written only after every index was checked.
#include "indexing.hpp"


namespace poolkit::cuda::detail {

template <class I>
POOLKIT_HD inline void atomic_max_index(I* p, I v) {
#if defined(__CUDA_ARCH__)
  if constexpr (sizeof(I) == 4)
    atomicMax(reinterpret_cast<int*>(p), int(v));
  else
    atomicMax(reinterpret_cast<long long*>(p), (long long)v);
#else
  if (v > *p) *p = v;
#endif
}

// Pass 1, one thread per input cell: winner[plane * out_cells + index] = max(input position). An index outside
// the output plane raises *error and is skipped.
template <class I>
struct UnpoolWinners {
  View5<const int64_t, I> indices;
  I* winner;  // N * C * out_cells, filled with -1
  int* error;
  I C = 0, In[3] = {0, 0, 0}, out_cells = 0;
  bool channels_last = false;

  POOLKIT_HD void operator()(I i) const {
    Idx5<I> q = decompose<I>(i, C, In[0], In[1], In[2], channels_last);
    int64_t v = indices.at(q.n, q.c, q.a, q.b, q.d);
    if (v < 0 || v >= int64_t(out_cells)) {
      *error = 1;
      return;
    }
    I self = (q.a * In[1] + q.b) * In[2] + q.d;
    atomic_max_index<I>(winner + (q.n * C + q.c) * out_cells + I(v), self);
  }
};

// Pass 2, one thread per output cell: the winning input's value, or zero.
template <class T, class I>
struct UnpoolGather {
  View5<const T, I> x;
  View5<T, I> y;
  const I* winner;
  I C = 0, In[3] = {0, 0, 0}, Out[3] = {0, 0, 0};
  bool channels_last = false;

  POOLKIT_HD void operator()(I i) const {
    Idx5<I> q = decompose<I>(i, C, Out[0], Out[1], Out[2], channels_last);
    I w = winner[(q.n * C + q.c) * (Out[0] * Out[1] * Out[2]) + (q.a * Out[1] + q.b) * Out[2] + q.d];
    y.at(q.n, q.c, q.a, q.b, q.d) =
        w < 0 ? T(0.0f) : x.at(q.n, q.c, w / (In[1] * In[2]), (w / In[2]) % In[1], w % In[2]);
  }
};

// Backward, one thread per input cell: dx = dy at the cell's index (zero and *error for a bad index).
template <class T, class I>
struct UnpoolBackward {
  View5<const T, I> dy;
  View5<const int64_t, I> indices;
  View5<T, I> dx;
  int* error;
  I C = 0, In[3] = {0, 0, 0}, Out[3] = {0, 0, 0};
  bool channels_last = false;

  POOLKIT_HD void operator()(I i) const {
    Idx5<I> q = decompose<I>(i, C, In[0], In[1], In[2], channels_last);
    int64_t v = indices.at(q.n, q.c, q.a, q.b, q.d);
    if (v < 0 || v >= int64_t(Out[0]) * Out[1] * Out[2]) {
      *error = 1;
      dx.at(q.n, q.c, q.a, q.b, q.d) = T(0.0f);
      return;
    }
    I u = I(v);
    dx.at(q.n, q.c, q.a, q.b, q.d) = dy.at(q.n, q.c, u / (Out[1] * Out[2]), (u / Out[2]) % Out[1], u % Out[2]);
  }
};

}  // namespace poolkit::cuda::detail
