#pragma once
// Checks that the arguments handed to an operator fit together, before any backend touches memory. Every
// operator of ops_list.inc has a check of the same name and parameters; the pieces below are what they share.
#include "poolkit/geometry.hpp"
#include "poolkit/options.hpp"
#include "poolkit/tensor.hpp"

namespace poolkit::validate {

#define POOLKIT_OP(name, params, args, device_tensor) void name params;
#include "poolkit/ops_list.inc"
#undef POOLKIT_OP

// (N, C, out...) for x (N, C, in...).
Shape output_shape(const Geometry& g, const TensorView& x);

}  // namespace poolkit::validate
