// The forward kernels of bfloat16 and float16 (kernels_forward-inl.h).
#include "kernels.hpp"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/cpu/kernels_forward_half.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "src/cpu/kernels_forward-inl.h"

HWY_BEFORE_NAMESPACE();
namespace poolkit::cpu::HWY_NAMESPACE {

void MaxForwardBF16(const ForwardJob& j) { max_forward_by_index<bfloat16>(j); }
void AvgForwardBF16(const ForwardJob& j) { avg_forward<bfloat16>(j); }
void MaxForwardF16(const ForwardJob& j) { max_forward_by_index<float16>(j); }
void AvgForwardF16(const ForwardJob& j) { avg_forward<float16>(j); }

}  // namespace poolkit::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace poolkit::cpu {
POOLKIT_KERNEL_DISPATCH(MaxForwardBF16, max_forward_bf16, ForwardJob)
POOLKIT_KERNEL_DISPATCH(AvgForwardBF16, avg_forward_bf16, ForwardJob)
POOLKIT_KERNEL_DISPATCH(MaxForwardF16, max_forward_f16, ForwardJob)
POOLKIT_KERNEL_DISPATCH(AvgForwardF16, avg_forward_f16, ForwardJob)
}  // namespace poolkit::cpu
#endif
