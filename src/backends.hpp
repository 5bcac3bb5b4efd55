#pragma once
// The fast backends. Each function returns whether it handled the request (arguments already checked);
// when it returns false the reference does the work.
#include "poolkit/ops.hpp"

#define POOLKIT_OP(name, params, args, device_tensor) bool name params;
namespace poolkit::cpu {
#include "poolkit/ops_list.inc"
}  // namespace poolkit::cpu
namespace poolkit::cuda {
#include "poolkit/ops_list.inc"
}  // namespace poolkit::cuda
#undef POOLKIT_OP
