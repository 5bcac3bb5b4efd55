#pragma once
// Small channels-first planes are pooled as channels-last blocks of planes, in the cache: vectors then run over
// the planes (lanes) where the planes themselves are too narrow for vectors. These copy planes into blocks and
// back; the bits move as they are.
#include <cstdint>
#include <vector>

#include "common.hpp"

namespace poolkit::cpu {

// Are channels-first planes of these tables worth pooling as blocks: small, with outputs too few or too
// irregular along W for vectors there?
bool blocks_pay(const Tables& tab);

// Element offsets of the cells of a (T, H, W) plane of v, in (t, h, w) order; packed when they are 0, 1, 2, ...
struct PlaneCells {
  std::vector<int64_t> offset;
  bool packed = true;
};
PlaneCells plane_cells(const View5& v, int64_t T, int64_t H, int64_t W);

// A block of `lanes` channels-last lanes of (T, H, W) cells, as one image (N = 1, C = lanes) with v's element
// size and no data yet.
View5 block_view(const View5& v, int64_t lanes, int64_t T, int64_t H, int64_t W);

// Planes [0, count) at `planes`, `pstep` elements apart, into lanes [0, count) of `block`; lanes from count on
// repeat the last plane, so that they hold valid values.
void planes_to_block(int esize, char* planes, int64_t pstep, int64_t count, const PlaneCells& cell, char* block,
                     int64_t lanes);
// Lanes [0, count) of `block` back into their planes.
void block_to_planes(int esize, char* block, int64_t lanes, const PlaneCells& cell, char* planes, int64_t pstep,
                     int64_t count);

}  // namespace poolkit::cpu
