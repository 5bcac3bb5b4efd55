#pragma once
// bfloat16 and float16 through the float32 kernels: blocks of planes are widened to float32, pooled, and the
// result narrowed once. Exact: the reference accumulates 16-bit formats in float32 and rounds once at the end,
// and max only moves values. Contiguous tensors (either layout) only; false sends the caller to its scalar loop.
#include "poolkit/geometry.hpp"
#include "poolkit/options.hpp"
#include "poolkit/tensor.hpp"

namespace poolkit::cpu {

bool half_forward(bool is_max, const Geometry& g, const AvgOptions& opt, const TensorView& x, const TensorView& y,
                  const TensorView& argmax);
bool half_backward(bool is_max, const Geometry& g, const AvgOptions& opt, const TensorView& dy,
                   const TensorView& argmax, const TensorView& dx);

}  // namespace poolkit::cpu
