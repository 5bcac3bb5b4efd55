#pragma once
// Instructions the Highway targets do not imply, detected once at start-up.

namespace poolkit::cpu {

// AVX512_BF16 (VCVTNEPS2BF16): used by the AVX-512 kernels to round float to bfloat16 (kernels-inl.h).
// Tests turn it off to reach the integer rounding on the same machine.
extern bool cpu_bf16_insn;

}  // namespace poolkit::cpu
