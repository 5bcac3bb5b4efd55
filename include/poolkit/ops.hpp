#pragma once
#include "poolkit/geometry.hpp"
#include "poolkit/options.hpp"
#include "poolkit/tensor.hpp"

namespace poolkit {

// The narrowest integer type that holds a window-local argmax of g: uint8 up to 255 window cells, then int16,
// then int32.
DType local_argmax_dtype(const Geometry& g);

// Fills `samples` (N, C, rank) with fractional-pooling samples in [0, 1) drawn from `seed`.
void fractional_samples(uint64_t seed, const TensorView& samples);

#define POOLKIT_OP(name, params, args, device_tensor) void name params;

// The operators, dispatched to the fastest backend that handles the request (the reference last).
#include "poolkit/ops_list.inc"

// The reference implementation: plain loops, any rank, any strides; the oracle for every other backend.
namespace ref {
#include "poolkit/ops_list.inc"
}  // namespace ref

#undef POOLKIT_OP

}  // namespace poolkit
