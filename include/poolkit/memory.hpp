#pragma once
// Memory for tensors poolkit allocates (the owning Tensor, the Python functions' outputs). Blocks of 256 KiB
// and more are kept in a per-process cache when freed and handed out again for the same rounded size, so a
// training loop that asks for the same shapes every step does not pay the kernel's page faults and zeroing
// again; new blocks of 2 MiB and more ask for transparent huge pages. Thread-safe.
#include <cstddef>

namespace poolkit {

// 64-byte aligned, uninitialised. Throws std::bad_alloc when the system has no memory.
void* allocate(size_t bytes);
// Returns a block from allocate(); nullptr is ignored.
void release(void* p);

// Uninitialised memory straight from the system, for a host that frees it itself with std::free (Octave's
// arrays): 64-byte aligned; blocks of 2 MiB and more start and end on a 2 MiB boundary with huge pages advised, so
// a fresh block faults 2 MiB at a time from end to end. Throws std::bad_alloc when the system has no memory.
void* allocate_uncached(size_t bytes);

// Asks for transparent huge pages on the 2 MiB-aligned interior of [p, p + bytes) before its first write, where
// that holds a whole 2 MiB page: a fresh buffer then faults 2 MiB at a time, not 4 KiB. Advice on that memory
// only (ignored where huge pages are off); for buffers a host allocates itself (XLA's, Octave's).
void advise_huge_pages(void* p, size_t bytes);

// Bytes of freed blocks the cache may keep (default 1 GiB, or the environment's POOLKIT_CACHE_MB).
// Lowering the limit frees what is above it; 0 turns the cache off.
void set_cache_limit(size_t bytes);
size_t cache_limit();
size_t cached_bytes();

}  // namespace poolkit
