#pragma once
// A row of MATLAB linear indices from the forward's window taps, by AVX2 where the machine has it: the seed's
// conversion wrote 64 MiB of doubles through the cache (a read for ownership of every line) with a table load
// per output; here eight outputs take one permute of an eight-entry tap table and two streamed stores.
#include <cstdint>

namespace pkmex {

// Whether linear_row_avx2 may run here: compiled for x86-64 by GCC or Clang, on a CPU with AVX2.
bool have_avx2();

// out[k] = base + lead[k] + tap[taps[k]] for k < n, in doubles, the whole 32-byte groups of out stored past the
// cache. tap has 8 entries; each tap is clamped to 7 (the caller passes the forward's own taps, which name cells
// of a window of at most 8). lead[k] + tap[t] must fit int32. Call stream_fence() on the same thread before
// another thread reads out.
void linear_row_avx2(const uint8_t* taps, int64_t n, double base, const int32_t* lead, const int32_t* tap,
                     double* out);
void stream_fence();

}  // namespace pkmex
