#pragma once
#include <cstdint>
#include <string>

#include "poolkit/error.hpp"

namespace poolkit {

inline int64_t checked_mul(int64_t a, int64_t b, const char* what) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) fail(what, "size arithmetic overflows int64", ErrorKind::Overflow);
  return r;
}

inline int64_t checked_add(int64_t a, int64_t b, const char* what) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) fail(what, "size arithmetic overflows int64", ErrorKind::Overflow);
  return r;
}

}  // namespace poolkit
