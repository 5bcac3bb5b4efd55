// Compiled for every x86 ISA Highway targets and chosen at run time, as the kernels: packed planes move through
// register transposes, others element by element.
#include "plane_blocks.hpp"

#include <algorithm>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/cpu/plane_blocks.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "src/cpu/transpose-inl.h"

HWY_BEFORE_NAMESPACE();
namespace poolkit::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Planes [0, count) (plane p at planes + p * pstep) and lanes [0, count) of the block: copied into the block,
// or back into the planes.
template <class U, bool kToBlock>
void move_each(U* planes, int64_t pstep, int64_t count, const PlaneCells& cell, U* block, int64_t lanes) {
  const int64_t cells = int64_t(cell.offset.size());
  for (int64_t p = 0; p < count; ++p, planes += pstep)
    for (int64_t i = 0; i < cells; ++i) {
      U& plane = planes[cell.packed ? i : cell.offset[size_t(i)]];
      U& lane = block[i * lanes + p];
      if constexpr (kToBlock) lane = plane;
      else plane = lane;
    }
  if (kToBlock && count < lanes)  // the lanes past the planes repeat the last one
    for (U* row = block; row < block + cells * lanes; row += lanes) std::fill(row + count, row + lanes, row[count - 1]);
}

#if HWY_TARGET != HWY_SCALAR
// Packed planes in tiles of k planes by k cells, k the lanes of a 128-bit vector: row j, cells [c, c + k) of
// plane p0 + j, becomes after the transpose lanes [p0, p0 + k) of cell c + j. Not wider: tiles of 256 or 512
// bits read 2k or 4k planes side by side, which ran up to 2x slower from memory (Zen 4). The last tile of a
// plane overlaps the one before (cells >= k), rewriting the same values; lanes past count load the last plane
// and store nothing.
template <bool kToBlock, class U>
void move_tiles(U* planes, int64_t pstep, int64_t count, int64_t cells, U* block, int64_t lanes) {
  const hn::Full128<U> d;
  constexpr int64_t k = int64_t(hn::MaxLanes(d));
  using V = hn::Vec<decltype(d)>;
  for (int64_t p0 = 0; p0 < (kToBlock ? lanes : count); p0 += k)
    for (int64_t c0 = 0; c0 < cells; c0 += k) {
      const int64_t c = std::min(c0, cells - k);
      V r[k];
#pragma GCC unroll 16
      for (int64_t j = 0; j < k; ++j) {
        if constexpr (kToBlock) r[j] = hn::LoadU(d, planes + std::min(p0 + j, count - 1) * pstep + c);
        else r[j] = hn::LoadU(d, block + (c + j) * lanes + p0);
      }
      transpose_tile(d, r);
#pragma GCC unroll 16
      for (int64_t j = 0; j < k; ++j) {
        if constexpr (kToBlock) hn::StoreU(r[j], d, block + (c + j) * lanes + p0);
        else if (p0 + j < count) hn::StoreU(r[j], d, planes + (p0 + j) * pstep + c);
      }
    }
}
#endif

template <class U, bool kToBlock>
void move(U* planes, int64_t pstep, int64_t count, const PlaneCells& cell, U* block, int64_t lanes) {
#if HWY_TARGET != HWY_SCALAR
  const int64_t cells = int64_t(cell.offset.size()), k = 16 / sizeof(U);
  if (cell.packed && cells >= k && lanes % k == 0)
    return move_tiles<kToBlock>(planes, pstep, count, cells, block, lanes);
#endif
  move_each<U, kToBlock>(planes, pstep, count, cell, block, lanes);
}

template <bool kToBlock>
void move_as(int esize, char* planes, int64_t pstep, int64_t count, const PlaneCells& cell, char* block,
             int64_t lanes) {
  if (count <= 0) return;
  auto as = [&](auto tag) {
    using U = decltype(tag);
    move<U, kToBlock>(reinterpret_cast<U*>(planes), pstep, count, cell, reinterpret_cast<U*>(block), lanes);
  };
  switch (esize) {
    case 1: return as(uint8_t{});
    case 2: return as(uint16_t{});
    case 4: return as(uint32_t{});
    default: return as(uint64_t{});
  }
}
void PlanesToBlock(int esize, char* planes, int64_t pstep, int64_t count, const PlaneCells& cell, char* block,
                   int64_t lanes) {
  move_as<true>(esize, planes, pstep, count, cell, block, lanes);
}
void BlockToPlanes(int esize, char* planes, int64_t pstep, int64_t count, const PlaneCells& cell, char* block,
                   int64_t lanes) {
  move_as<false>(esize, planes, pstep, count, cell, block, lanes);
}

}  // namespace poolkit::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace poolkit::cpu {

bool blocks_pay(const Tables& tab) {
  const AxisTable& W = tab.w;
  const bool regular_w = W.axis.kind == AxisKind::Regular && W.full_end > W.full_begin;
  return tab.t.axis.in * tab.h.axis.in * W.axis.in <= 1024 && (W.axis.out < 8 || !regular_w);
}

PlaneCells plane_cells(const View5& v, int64_t T, int64_t H, int64_t W) {
  PlaneCells c;
  c.offset.reserve(size_t(T * H * W));
  for (int64_t t = 0; t < T; ++t)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t w = 0; w < W; ++w) {
        c.packed &= t * v.s[2] + h * v.s[3] + w * v.s[4] == int64_t(c.offset.size());
        c.offset.push_back(t * v.s[2] + h * v.s[3] + w * v.s[4]);
      }
  return c;
}

View5 block_view(const View5& v, int64_t lanes, int64_t T, int64_t H, int64_t W) {
  View5 b = v;
  b.data = nullptr;
  b.s[0] = T * H * W * lanes, b.s[1] = 1, b.s[2] = H * W * lanes, b.s[3] = W * lanes, b.s[4] = lanes;
  return b;
}

HWY_EXPORT(PlanesToBlock);
HWY_EXPORT(BlockToPlanes);

void planes_to_block(int esize, char* planes, int64_t pstep, int64_t count, const PlaneCells& cell, char* block,
                     int64_t lanes) {
  HWY_DYNAMIC_DISPATCH(PlanesToBlock)(esize, planes, pstep, count, cell, block, lanes);
}

void block_to_planes(int esize, char* block, int64_t lanes, const PlaneCells& cell, char* planes, int64_t pstep,
                     int64_t count) {
  HWY_DYNAMIC_DISPATCH(BlockToPlanes)(esize, planes, pstep, count, cell, block, lanes);
}

}  // namespace poolkit::cpu
#endif
