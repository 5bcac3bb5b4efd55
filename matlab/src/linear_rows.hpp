#pragma once
// MATLAB's linear indices in bulk, by AVX2 where the machine has it. A row of them from the forward's window
// taps: the seed's conversion wrote 64 MiB of doubles through the cache (a read for ownership of every line)
// with a table load per output; here eight outputs take one permute of an eight-entry tap table and two streamed
// stores. And a scatter's indices checked four at a time and turned into offsets in its slab.
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

// offs[i] = xs[i] - first for the leading entries of xs[0..n) that are first + a whole number in [0, out);
// returns how many (n when all are). By AVX2 where the machine has it. out <= 2^31 - 1.
int64_t slab_offsets(const double* xs, int64_t n, double first, int64_t out, int32_t* offs);

}  // namespace pkmex
