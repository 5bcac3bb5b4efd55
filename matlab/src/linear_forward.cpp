#include "linear_forward.hpp"

#include <omp.h>

#include <algorithm>
#include <exception>
#include <vector>

#include "poolkit/ops.hpp"
#include "poolkit/threads.hpp"

namespace pkmex {
namespace {

// Outputs per block: 2 MiB of int64 indices per thread. Measured on seed 000's case (Octave, 2 threads): blocks
// of 64 Ki outputs 1.2x slower, 512 Ki no faster; the core's per-call set-up dominates small blocks.
constexpr int64_t kBlockOutputs = int64_t(1) << 18;

// Whether the spatial axes of a core view are a contiguous row-major block (MATLAB's column-major plane).
bool plane_contiguous(const poolkit::Shape& shape, const poolkit::Strides& st) {
  int64_t expect = 1;
  for (int a = shape.rank - 1; a >= 2; --a) {
    if (shape[a] > 1 && st[a] != expect) return false;
    expect *= shape[a];
  }
  return true;
}

}  // namespace

bool linear_forward_fits(const Plan& p) {
  // (with the pooled dimensions first, the others form one block in memory: the core's N axis, C = 1)
  return plane_contiguous(p.xshape, p.xst) && plane_contiguous(p.yshape, p.yst) && p.xshape[1] == 1 &&
         p.xshape[0] >= 4 * poolkit::num_threads();
}

void max_pool_linear(const Plan& p, const poolkit::TensorView& x, const poolkit::TensorView& y, double* I) {
  const int64_t N = x.shape[0], plane = p.ynumel / N;  // planes are y.strides[0] = plane apart in Y and I
  const int64_t per_block = std::max<int64_t>(1, kBlockOutputs / plane), blocks = (N + per_block - 1) / per_block;
  const int64_t xe = int64_t(poolkit::dtype_size(x.dtype)), ye = int64_t(poolkit::dtype_size(y.dtype));
  const int threads = poolkit::num_threads();
  const size_t room = size_t(std::min(per_block, N) * plane);
  std::vector<int64_t> buffers(size_t(threads) * room);  // one per thread, allocated here: nothing throws below
  std::exception_ptr error;
#pragma omp parallel num_threads(threads)
  {
    int64_t* taps = buffers.data() + size_t(omp_get_thread_num()) * room;
#pragma omp for schedule(dynamic)
    for (int64_t b = 0; b < blocks; ++b) {
      const int64_t n0 = b * per_block, nb = std::min(per_block, N - n0);
      poolkit::TensorView xb = x, yb = y;
      xb.data = static_cast<char*>(x.data) + n0 * x.strides[0] * xe;
      yb.data = static_cast<char*>(y.data) + n0 * y.strides[0] * ye;
      xb.shape[0] = yb.shape[0] = nb;
      try {  // on this thread: the core keeps the work of a call made inside a parallel region
        poolkit::max_pool_forward(p.g, xb, yb,
                                  poolkit::TensorView(taps, poolkit::DType::i64, yb.shape, yb.strides));
      } catch (...) {
#pragma omp critical(pkmex_linear_error)
        if (!error) error = std::current_exception();
        continue;
      }
      for (int64_t n = 0; n < nb; ++n) {  // the in-plane index + the plane's offset in X, 1-based
        const int64_t* t = taps + n * plane;
        double* out = I + (n0 + n) * plane;
        const int64_t add = (n0 + n) * x.strides[0] + 1;
        for (int64_t k = 0; k < plane; ++k) out[k] = double(t[k] + add);
      }
    }
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace pkmex
