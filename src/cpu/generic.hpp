#pragma once
// The fast path's forward loop for what the SIMD drivers do not take (integer max pooling, 16-bit types in views
// that are not contiguous, negative strides): one (n, c) plane per task, windows from the per-axis tables. Sums and maxima
// follow the reference's order and types exactly.
#include "kernels.hpp"
#include "poolkit/geometry.hpp"
#include "poolkit/options.hpp"
#include "poolkit/tensor.hpp"

namespace poolkit::cpu {

bool generic_forward(bool is_max, const Geometry& g, const AvgOptions& opt, const TensorView& x, const TensorView& y,
                     const TensorView& argmax);

}  // namespace poolkit::cpu
