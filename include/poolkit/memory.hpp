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

// Bytes of freed blocks the cache may keep (default 1 GiB, or the environment's POOLKIT_CACHE_MB).
// Lowering the limit frees what is above it; 0 turns the cache off.
void set_cache_limit(size_t bytes);
size_t cache_limit();
size_t cached_bytes();

}  // namespace poolkit
