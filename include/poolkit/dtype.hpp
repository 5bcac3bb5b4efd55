#pragma once
#include <cstdint>
#include <cstring>

#include "poolkit/config.hpp"

namespace poolkit {

// Floating types are pooled in every operator; the integer types are argmax storage (u8, i16, i32, i64) and
// inputs of max pooling and max-unpooling (all five), and of average pooling over fixed windows (i64 alone).
enum class DType : uint8_t { f32, f64, bf16, f16, i64, u8, i16, i32, i8 };

constexpr int dtype_size(DType t) {
  switch (t) {
    case DType::f64: case DType::i64: return 8;
    case DType::f32: case DType::i32: return 4;
    case DType::bf16: case DType::f16: case DType::i16: return 2;
    case DType::u8: case DType::i8: return 1;
  }
  return 0;
}

constexpr const char* dtype_name(DType t) {
  switch (t) {
    case DType::f32: return "float32";
    case DType::f64: return "float64";
    case DType::bf16: return "bfloat16";
    case DType::f16: return "float16";
    case DType::i64: return "int64";
    case DType::u8: return "uint8";
    case DType::i16: return "int16";
    case DType::i32: return "int32";
    case DType::i8: return "int8";
  }
  return "?";
}

constexpr bool is_floating(DType t) {
  return t == DType::f32 || t == DType::f64 || t == DType::bf16 || t == DType::f16;
}
constexpr bool is_integer(DType t) { return !is_floating(t); }

namespace detail {
POOLKIT_HD inline uint32_t float_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
POOLKIT_HD inline float bits_float(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
}  // namespace detail

// bfloat16 storage: the top half of a float32, rounded to nearest even; NaN stays NaN.
struct bfloat16 {
  uint16_t bits = 0;
  bfloat16() = default;
  POOLKIT_HD explicit bfloat16(float f) {
    uint32_t u = detail::float_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) { bits = uint16_t((u >> 16) | 0x40u); return; }
    u += 0x7fffu + ((u >> 16) & 1u);
    bits = uint16_t(u >> 16);
  }
  POOLKIT_HD operator float() const { return detail::bits_float(uint32_t(bits) << 16); }
};

// IEEE binary16 storage with round-to-nearest-even conversion from float32.
struct float16 {
  uint16_t bits = 0;
  float16() = default;
  POOLKIT_HD explicit float16(float f) {
#ifdef __CUDA_ARCH__
    if (f == f) {  // the hardware's conversion (round to nearest even); NaN keeps its payload below
      asm("cvt.rn.f16.f32 %0, %1;" : "=h"(bits) : "f"(f));
      return;
    }
#endif
    uint32_t u = detail::float_bits(f);
    uint32_t sign = (u >> 16) & 0x8000u;
    uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u) { bits = uint16_t(sign | 0x7e00u | ((a >> 13) & 0x3ffu)); return; }  // NaN
    if (a >= 0x477ff000u) { bits = uint16_t(sign | 0x7c00u); return; }  // rounds to infinity
    if (a < 0x38800000u) {  // subnormal half (or zero): scale so the integer part is the mantissa
      float m = detail::bits_float(a) * 16777216.0f;  // 2^24, exact
      // nearest-even to integer in float arithmetic, valid because m < 2^10 * 1.0
      float r = m + 8388608.0f - 8388608.0f;
      bits = uint16_t(sign | uint32_t(r));
      return;
    }
    uint32_t mant_round = a + 0xfffu + ((a >> 13) & 1u);
    bits = uint16_t(sign | ((mant_round - 0x38000000u) >> 13));
  }
  POOLKIT_HD operator float() const {
#ifdef __CUDA_ARCH__
    if ((bits & 0x7c00u) != 0x7c00u) {  // finite: the hardware's exact conversion
      float f;
      asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(bits));
      return f;
    }
#endif
    uint32_t sign = uint32_t(bits & 0x8000u) << 16;
    uint32_t e = (bits >> 10) & 0x1fu, m = bits & 0x3ffu;
    if (e == 0) {
      float v = float(m) * 5.9604644775390625e-8f;  // 2^-24
      return sign ? -v : v;
    }
    if (e == 31) return detail::bits_float(sign | 0x7f800000u | (m << 13));
    return detail::bits_float(sign | ((e + 112u) << 23) | (m << 13));
  }
};

// The type a reducer accumulates in: the element type itself for float32/float64 (as PyTorch does),
// float32 for the 16-bit formats.
template <class T> struct Accumulate { using type = T; };
template <> struct Accumulate<bfloat16> { using type = float; };
template <> struct Accumulate<float16> { using type = float; };
template <class T> using acc_t = typename Accumulate<T>::type;

template <class T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<float>() { return DType::f32; }
template <> constexpr DType dtype_of<double>() { return DType::f64; }
template <> constexpr DType dtype_of<bfloat16>() { return DType::bf16; }
template <> constexpr DType dtype_of<float16>() { return DType::f16; }
template <> constexpr DType dtype_of<int64_t>() { return DType::i64; }
template <> constexpr DType dtype_of<uint8_t>() { return DType::u8; }
template <> constexpr DType dtype_of<int16_t>() { return DType::i16; }
template <> constexpr DType dtype_of<int32_t>() { return DType::i32; }
template <> constexpr DType dtype_of<int8_t>() { return DType::i8; }

}  // namespace poolkit
