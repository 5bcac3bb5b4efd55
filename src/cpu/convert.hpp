#pragma once
// bfloat16 / float16 <-> float32 for whole arrays, SIMD, bit-identical to the scalar conversions of dtype.hpp
// (exact widening; round to nearest even when narrowing, NaN kept quiet).
#include <cstdint>

#include "poolkit/dtype.hpp"

namespace poolkit::cpu {

void widen_to_f32(DType from, const void* src, float* dst, int64_t n);   // from: bf16 or f16
void narrow_from_f32(DType to, const float* src, void* dst, int64_t n);  // to: bf16 or f16

}  // namespace poolkit::cpu
