#include "plane_blocks.hpp"

#include <algorithm>

namespace poolkit::cpu {
namespace {

// Planes [0, count) (plane p at planes + p * pstep) and lanes [0, count) of the block: copied into the block,
// or back into the planes.
template <class U, bool kToBlock>
void move(U* planes, int64_t pstep, int64_t count, const PlaneCells& cell, U* block, int64_t lanes) {
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

template <bool kToBlock>
void move(int esize, char* planes, int64_t pstep, int64_t count, const PlaneCells& cell, char* block, int64_t lanes) {
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

}  // namespace

bool blocks_pay(const Tables& tab) {
  const AxisTable& W = tab.w;
  const bool regular_w = W.axis.kind == AxisKind::Regular && W.full_end > W.full_begin;
  return tab.t.axis.in * tab.h.axis.in * W.axis.in <= 1024 && (W.axis.out < 8 || !regular_w);
}

PlaneCells plane_cells(const View5& v, int64_t T, int64_t H, int64_t W) {
  PlaneCells c;
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

void planes_to_block(int esize, char* planes, int64_t pstep, int64_t count, const PlaneCells& cell, char* block,
                     int64_t lanes) {
  move<true>(esize, planes, pstep, count, cell, block, lanes);
}

void block_to_planes(int esize, char* block, int64_t lanes, const PlaneCells& cell, char* planes, int64_t pstep,
                     int64_t count) {
  move<false>(esize, planes, pstep, count, cell, block, lanes);
}

}  // namespace poolkit::cpu
