#pragma once
// maxpool with MATLAB's linear indices (1-based doubles into the whole X) in one pass over X: the core writes
// the max and its in-plane index (int64, PyTorch's form) for a block of planes into a buffer of the thread, which
// the conversion to MATLAB's doubles reads while it is still in the cache (streaming stores measured no faster
// there). For plans whose planes are contiguous column-major arrays in X and Y (the pooled dimensions lead, as in
// 'SSCB', 'SCB', 'SSSCB'): the core's in-plane index is then MATLAB's offset within the plane.
#include "pool_plan.hpp"

namespace pkmex {

// Whether max_pool_linear applies: contiguous planes, and enough of them to share between the threads.
bool linear_forward_fits(const Plan& p);

// Y = maxpool(X) and I = MATLAB's linear index of each maximum, for a plan where linear_forward_fits.
void max_pool_linear(const Plan& p, const poolkit::TensorView& x, const poolkit::TensorView& y, double* I);

}  // namespace pkmex
