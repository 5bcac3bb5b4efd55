#pragma once
// The FFI handler symbols registered with XLA for the CPU platform (see module.cpp for their target names).
#include "xla/ffi/api/ffi.h"

namespace poolkit::jax_ffi {

#define POOLKIT_JAX_HANDLERS(X)                                                                                \
  X(MaxForward, "poolkit_max_forward") X(MaxForwardArgmax, "poolkit_max_forward_argmax")                     \
  X(MaxBackward, "poolkit_max_backward") X(AvgForward, "poolkit_avg_forward")                               \
  X(AvgBackward, "poolkit_avg_backward") X(LpForward, "poolkit_lp_forward") X(LpBackward, "poolkit_lp_backward") \
  X(StochasticForward, "poolkit_stochastic_forward") X(StochasticBackward, "poolkit_stochastic_backward")      \
  X(FractionalForward, "poolkit_fractional_forward") X(FractionalForwardArgmax, "poolkit_fractional_forward_argmax") \
  X(FractionalBackward, "poolkit_fractional_backward") X(UnpoolForward, "poolkit_unpool_forward")             \
  X(UnpoolBackward, "poolkit_unpool_backward") X(MixedForward, "poolkit_mixed_forward")                       \
  X(MixedBackward, "poolkit_mixed_backward")      \
  X(IntSumForward, "poolkit_int_sum_forward")

#define POOLKIT_JAX_DECLARE(symbol, target) XLA_FFI_DECLARE_HANDLER_SYMBOL(symbol);
POOLKIT_JAX_HANDLERS(POOLKIT_JAX_DECLARE)
#undef POOLKIT_JAX_DECLARE

}  // namespace poolkit::jax_ffi
