#pragma once
// poolkit.retain_memory(tf): whether the C library keeps freed memory for the next allocation (Octave's arrays
// come from glibc's malloc). Every poolkit call returns new arrays; with glibc's defaults each large one is a
// fresh mapping whose pages the kernel zeroes on first write (about 1 of seed 000's 5 ms maxpool) and unmaps
// when Octave frees it. Retained, a training loop's outputs reuse the pages its previous step freed.
namespace pkmex {

// On: freed blocks up to 1 GiB go back to malloc's heap, and up to 2 GiB of free heap is kept. Off: glibc's
// initial thresholds (128 KiB), and the free heap is returned to the system now. Returns false where the C
// library is not glibc or refuses a setting.
bool retain_freed_memory(bool on);
// Whether the last retain_freed_memory call turned it on (and was taken).
bool freed_memory_retained();

}  // namespace pkmex
