// The forward kernels of float32 and float64 (kernels_forward-inl.h).
#include "kernels.hpp"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/cpu/kernels_forward.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "src/cpu/kernels_forward-inl.h"

HWY_BEFORE_NAMESPACE();
namespace poolkit::cpu::HWY_NAMESPACE {

void MaxForwardF32(const ForwardJob& j) { max_forward_by_index<float>(j); }
void MaxForwardF64(const ForwardJob& j) { max_forward_by_index<double>(j); }
void AvgForwardF32(const ForwardJob& j) { avg_forward<float>(j); }
void AvgForwardF64(const ForwardJob& j) { avg_forward<double>(j); }

}  // namespace poolkit::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace poolkit::cpu {
POOLKIT_KERNEL_DISPATCH(MaxForwardF32, max_forward_f32, ForwardJob)
POOLKIT_KERNEL_DISPATCH(MaxForwardF64, max_forward_f64, ForwardJob)
POOLKIT_KERNEL_DISPATCH(AvgForwardF32, avg_forward_f32, ForwardJob)
POOLKIT_KERNEL_DISPATCH(AvgForwardF64, avg_forward_f64, ForwardJob)
}  // namespace poolkit::cpu
#endif
