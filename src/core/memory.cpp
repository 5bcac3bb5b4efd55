#include "poolkit/memory.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

namespace poolkit {
namespace {

constexpr size_t kCached = size_t(256) << 10;  // smaller blocks go straight to malloc
constexpr size_t kHuge = size_t(2) << 20;

size_t rounded(size_t bytes) {
  size_t unit = bytes >= kHuge ? kHuge : size_t(64) << 10;
  return (bytes + unit - 1) / unit * unit;
}

size_t default_limit() {
  const char* env = std::getenv("POOLKIT_CACHE_MB");
  if (env && *env) return size_t(std::strtoull(env, nullptr, 10)) << 20;
  return size_t(1) << 30;
}

struct Cache {
  std::mutex mu;
  std::unordered_map<void*, size_t> live;         // cache-managed blocks handed out, with their size
  std::multimap<size_t, void*> free_blocks;       // by size
  size_t free_bytes = 0, limit = default_limit();

  void trim() {  // caller holds mu
    while (free_bytes > limit && !free_blocks.empty()) {
      auto it = std::prev(free_blocks.end());  // the largest first
      free_bytes -= it->first;
      std::free(it->second);
      free_blocks.erase(it);
    }
  }
};

Cache& cache() {
  static Cache* c = new Cache;  // never destroyed: tensors may be freed during static destruction
  return *c;
}

}  // namespace

void* allocate(size_t bytes) {
  if (bytes < kCached) {
    void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64 + (bytes == 0 ? 64 : 0));
    if (!p) throw std::bad_alloc();
    return p;
  }
  const size_t size = rounded(bytes);
  Cache& c = cache();
  {
    std::lock_guard<std::mutex> lock(c.mu);
    auto it = c.free_blocks.find(size);
    if (it != c.free_blocks.end()) {
      void* p = it->second;
      c.free_bytes -= size;
      c.free_blocks.erase(it);
      c.live.emplace(p, size);
      return p;
    }
  }
  void* p = allocate_uncached(size);
  std::lock_guard<std::mutex> lock(cache().mu);
  c.live.emplace(p, size);
  return p;
}

void* allocate_uncached(size_t bytes) {
  const size_t unit = bytes >= kHuge ? kHuge : 64, size = (std::max<size_t>(bytes, 1) + unit - 1) / unit * unit;
  void* p = std::aligned_alloc(unit, size);
  if (!p) throw std::bad_alloc();
  advise_huge_pages(p, size);
  return p;
}

void advise_huge_pages(void* p, size_t bytes) {
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + kHuge - 1) & ~uintptr_t(kHuge - 1),
                  end = (reinterpret_cast<uintptr_t>(p) + bytes) & ~uintptr_t(kHuge - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

void release(void* p) {
  if (!p) return;
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  auto it = c.live.find(p);
  if (it == c.live.end()) {
    std::free(p);
    return;
  }
  const size_t size = it->second;
  c.live.erase(it);
  c.free_blocks.emplace(size, p);
  c.free_bytes += size;
  c.trim();
}

void set_cache_limit(size_t bytes) {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  c.limit = bytes;
  c.trim();
}

size_t cache_limit() {
  std::lock_guard<std::mutex> lock(cache().mu);
  return cache().limit;
}

size_t cached_bytes() {
  std::lock_guard<std::mutex> lock(cache().mu);
  return cache().free_bytes;
}

}  // namespace poolkit
