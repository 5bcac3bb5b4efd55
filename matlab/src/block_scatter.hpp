#pragma once
// A linear scatter as a gather, where it is one: when the output's size is the source's times whole factors
// (r_d = size_d / xsize_d), source element i owns the block of r_0 x r_1 x ... output cells its position scales
// to, and if every index names a cell of its own block, no two indices meet and every cell is either named by
// its block's index or zero. The output is then written once, in order, by streaming stores (no zeroing pass,
// no read for ownership of its lines), each cell from the one index and value it could come from. Whether that
// held comes from a count: an index inside its block matches exactly one cell, any other none (an invalid one
// included), so the matches number the indices exactly when all are inside.
#include <cstdint>
#include <vector>

namespace pkmex {

// dst = zeros(size); dst(ix) = src (Add: dst(ix) += src, each cell from +0) by blocks, where the shapes allow
// it (r_0 = 2, AVX2, whole 16-byte groups: the gather below) and every index lies in its own block. Returns
// false when it did not apply (dst then holds garbage: the caller scatters the general way, which writes all).
template <bool Add, class T>
bool scatter_blocks(const double* ix, const T* src, T* dst, const std::vector<int64_t>& xsize,
                    const std::vector<int64_t>& size);

// dst = src(ix), shaped like ix (dZ(indx): maxunpool_backward), by the same blocks: each value's four outputs from
// the cells of its block, one compare per cell, in whole vectors of the block's rows rather than one load per
// index. Returns false when it did not apply or an index left its block (dst then holds garbage: the caller
// gathers the general way, which checks every index).
template <class T>
bool gather_blocks(const double* ix, const T* src, T* dst, const std::vector<int64_t>& xsize,
                   const std::vector<int64_t>& size);

// How many scatters scatter_blocks, and gathers gather_blocks, did in this process (pkmex('block_scatters'),
// pkmex('block_gathers'): the tests' view of the route).
int64_t block_scatters();
int64_t block_gathers();

}  // namespace pkmex
