#include "common.hpp"

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace poolkit::cpu {

bool untouched_page(const void* p) {
#if defined(__linux__)
  static const uintptr_t page = uintptr_t(sysconf(_SC_PAGESIZE));
  unsigned char resident = 1;
  void* start = reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(p) & ~(page - 1));
  return mincore(start, size_t(page), &resident) == 0 && (resident & 1) == 0;
#else
  (void)p;
  return false;
#endif
}

}  // namespace poolkit::cpu
