#include "retain_memory.hpp"

#include <cstdlib>  // (defines __GLIBC__ where the C library is glibc)

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace pkmex {
namespace {
bool retained = false;
}

bool freed_memory_retained() { return retained; }

bool retain_freed_memory(bool on) {
#if defined(__GLIBC__)
  constexpr int kInitial = 128 * 1024;  // glibc's M_MMAP_THRESHOLD and M_TRIM_THRESHOLD before any adjustment
  if (!mallopt(M_MMAP_THRESHOLD, on ? 1 << 30 : kInitial)) return false;
  if (!mallopt(M_TRIM_THRESHOLD, on ? 0x7fffffff : kInitial)) return false;
  if (!on) malloc_trim(0);
  retained = on;
  return true;
#else
  (void)on;
  return false;
#endif
}

}  // namespace pkmex
