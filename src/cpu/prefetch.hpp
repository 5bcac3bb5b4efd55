#pragma once
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

}  // namespace poolkit::cpu
