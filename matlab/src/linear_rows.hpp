#pragma once
// MATLAB's linear indices in bulk, by AVX2 where the machine has it. A row of them from the forward's window
// taps: the seed's conversion wrote 64 MiB of doubles through the cache (a read for ownership of every line)
// with a table load per output; here eight outputs take one permute of an eight-entry tap table and two streamed
// stores. The compact maxunpool_backward's gather by whole vectors of the windows' cells rather than a load per
// output. And a scatter's indices checked four at a time and turned into offsets in its slab.
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

// How far ahead (bytes) the gathers of dZ (pair_row_avx2, block_scatter.cpp's gather_blocks) ask for the cells and
// indices they read: 4 KiB ran seed 000's retained compact gather 1.8x faster than none (1 or 2 KiB less, 8 no more).
constexpr int kGatherAhead = 4096;

// dst[k] = src[2k + tap[taps[k]]] for k < n while each tap is below `cells` (even, at most 8, the entries of
// tap), where a window's cells are pairs along the first dimension: tap[2r + 1] = tap[2r] + 1. By AVX2: eight
// outputs take, for each pair, sixteen cells loaded and split into first and second cells, and blends by tap; dst
// stored past the cache where it is 32-byte aligned (then stream_fence() as for linear_row_avx2). Returns how
// many it copied: n, or where a group holding a tap out of range begins.
int64_t pair_row_avx2(const uint8_t* taps, int64_t n, int cells, const float* src, const int32_t* tap, float* dst);
int64_t pair_row_avx2(const uint8_t* taps, int64_t n, int cells, const double* src, const int32_t* tap,
                      double* dst);

// offs[i] = xs[i] - first for the leading entries of xs[0..n) that are first + a whole number in [0, out);
// returns how many (n when all are). By AVX2 where the machine has it. out <= 2^31 - 1.
int64_t slab_offsets(const double* xs, int64_t n, double first, int64_t out, int32_t* offs);

}  // namespace pkmex
