#pragma once
// The fast path's loops for what the SIMD drivers do not take (bfloat16 / float16, any strides, windows that
// overlap in channels-first backward): one (n, c) plane per task, windows from the per-axis tables. Sums and
// maxima follow the reference's order and types exactly.
#include "kernels.hpp"
#include "poolkit/geometry.hpp"
#include "poolkit/options.hpp"
#include "poolkit/tensor.hpp"

namespace poolkit::cpu {

bool generic_forward(bool is_max, const Geometry& g, const AvgOptions& opt, const TensorView& x, const TensorView& y,
                     const TensorView& argmax);
// Backward as a scatter in increasing output order into a per-plane accumulator: each input cell receives its
// terms in the order the reference adds them. Returns false when a saved argmax names a cell outside its window.
bool generic_backward(bool is_max, const Geometry& g, const AvgOptions& opt, const TensorView& dy,
                      const TensorView& argmax, const TensorView& dx);

}  // namespace poolkit::cpu
