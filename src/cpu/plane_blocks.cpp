#include "plane_blocks.hpp"

#include <algorithm>

namespace poolkit::cpu {
namespace {

template <class U>
void to_block(const char* planes_at, int64_t pstep, int64_t count, const PlaneCells& cell,
              char* block_at, int64_t lanes) {
  const U* plane = reinterpret_cast<const U*>(planes_at);
  U* block = reinterpret_cast<U*>(block_at);
  const int64_t cells = int64_t(cell.offset.size());
  const bool packed = cell.packed;
  for (int64_t p = 0; p < count; ++p, plane += pstep) {
    if (packed) {
      for (int64_t i = 0; i < cells; ++i) block[i * lanes + p] = plane[i];
    } else {
      for (int64_t i = 0; i < cells; ++i) block[i * lanes + p] = plane[cell.offset[size_t(i)]];
    }
  }
  if (count < lanes)
    for (int64_t i = 0; i < cells; ++i) std::fill(block + i * lanes + count, block + (i + 1) * lanes, block[i * lanes + count - 1]);
}

template <class U>
void to_planes(const char* block_at, int64_t lanes, const PlaneCells& cell, char* planes_at,
               int64_t pstep, int64_t count) {
  const U* block = reinterpret_cast<const U*>(block_at);
  U* plane = reinterpret_cast<U*>(planes_at);
  const int64_t cells = int64_t(cell.offset.size());
  const bool packed = cell.packed;
  for (int64_t p = 0; p < count; ++p, plane += pstep) {
    if (packed) {
      for (int64_t i = 0; i < cells; ++i) plane[i] = block[i * lanes + p];
    } else {
      for (int64_t i = 0; i < cells; ++i) plane[cell.offset[size_t(i)]] = block[i * lanes + p];
    }
  }
}

}  // namespace

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

void planes_to_block(int esize, const char* planes, int64_t pstep, int64_t count, const PlaneCells& cell,
                     char* block, int64_t lanes) {
  switch (esize) {
    case 1: return to_block<uint8_t>(planes, pstep, count, cell, block, lanes);
    case 2: return to_block<uint16_t>(planes, pstep, count, cell, block, lanes);
    case 4: return to_block<uint32_t>(planes, pstep, count, cell, block, lanes);
    default: return to_block<uint64_t>(planes, pstep, count, cell, block, lanes);
  }
}

void block_to_planes(int esize, const char* block, int64_t lanes, const PlaneCells& cell, char* planes,
                     int64_t pstep, int64_t count) {
  switch (esize) {
    case 1: return to_planes<uint8_t>(block, lanes, cell, planes, pstep, count);
    case 2: return to_planes<uint16_t>(block, lanes, cell, planes, pstep, count);
    case 4: return to_planes<uint32_t>(block, lanes, cell, planes, pstep, count);
    default: return to_planes<uint64_t>(block, lanes, cell, planes, pstep, count);
  }
}

}  // namespace poolkit::cpu
