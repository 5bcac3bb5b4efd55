#pragma once
#include <cstdint>
// A request to bring the cache line at p towards the core. Inline assembly on x86: GCC 12 deletes
// __builtin_prefetch from loops that do nothing else (it counts no side effect), and those loops are the point.

namespace poolkit::cpu {

inline void prefetch(const void* p) {
#if defined(__x86_64__) || defined(__i386__)
  asm volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(p)));
#else
  __builtin_prefetch(p);
#endif
}

// The same towards the outer caches only (prefetcht2): for streams read far ahead, whose lines would otherwise
// crowd the first-level cache and its few outstanding misses.
inline void prefetch_far(const void* p) {
#if defined(__x86_64__) || defined(__i386__)
  asm volatile("prefetcht2 %0" : : "m"(*static_cast<const char*>(p)));
#else
  __builtin_prefetch(p, 0, 1);
#endif
}

// Asks for input row r of a plane of `height` rows (`row` elements of T apart, `width` of them read), or, for r
// past the plane, row r - height of the next one (x_next; nothing where that is null or r is past it too).
template <class T>
void prefetch_plane_row(const T* x, const void* x_next, int64_t r, int64_t height, int64_t row, int64_t width) {
  const T* p = r < height                       ? x + r * row
               : x_next && r - height < height ? static_cast<const T*>(x_next) + (r - height) * row
                                               : nullptr;
  if (!p) return;
  for (int64_t c = 0; c < width * int64_t(sizeof(T)); c += 64) prefetch(reinterpret_cast<const char*>(p) + c);
}

}  // namespace poolkit::cpu
