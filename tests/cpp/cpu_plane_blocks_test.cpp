// Planes copied into channels-last blocks and back (src/cpu/plane_blocks) against a naive transpose: every
// element size, cell counts around the vector widths, partial blocks, planes with gaps between them and planes
// with scattered cells. Random bytes (NaN payloads included) must move unchanged, and every byte the copy does
// not own (guards around the buffers, the gaps between planes, the source) must keep its value.
#include <gtest/gtest.h>
#include <hwy/targets.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cpu/plane_blocks.hpp"

namespace poolkit::test {
namespace {

constexpr int64_t kGuard = 64;  // bytes before and after each buffer
constexpr unsigned char kPoison = 0xA5;

struct Case {
  int esize;
  int64_t lanes, cells, count, pstep;
  cpu::PlaneCells cell;
  std::string str() const {
    return "esize " + std::to_string(esize) + " lanes " + std::to_string(lanes) + " cells " + std::to_string(cells) +
           " count " + std::to_string(count) + " pstep " + std::to_string(pstep) +
           (cell.packed ? "" : " scattered");
  }
};

// Cells at 0, 1, 2, ... (packed), or at every other element in reverse order.
cpu::PlaneCells cells_of(int64_t cells, bool packed) {
  cpu::PlaneCells c;
  for (int64_t i = 0; i < cells; ++i) c.offset.push_back(packed ? i : 2 * (cells - 1 - i));
  c.packed = packed;
  return c;
}

// A buffer of `bytes` between guards, poisoned, or random when rng is given.
std::vector<unsigned char> buffer(int64_t bytes, std::mt19937_64* rng) {
  std::vector<unsigned char> b(size_t(bytes + 2 * kGuard), kPoison);
  if (rng)
    for (size_t i = size_t(kGuard); i < b.size() - size_t(kGuard); i += 8) {
      const uint64_t r = (*rng)();
      std::memcpy(&b[i], &r, std::min<size_t>(8, b.size() - size_t(kGuard) - i));
    }
  return b;
}

// Byte offsets of cell i of plane p and of lane p of cell i in the block.
int64_t plane_at(const Case& k, int64_t p, int64_t i) {
  return kGuard + (p * k.pstep + k.cell.offset[size_t(i)]) * k.esize;
}
int64_t lane_at(const Case& k, int64_t i, int64_t p) { return kGuard + (i * k.lanes + p) * k.esize; }

// The first byte where two buffers differ, or -1.
int64_t first_difference(const std::vector<unsigned char>& a, const std::vector<unsigned char>& b) {
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i]) return int64_t(i);
  return -1;
}

void check(const Case& k, std::mt19937_64& rng) {
  SCOPED_TRACE(k.str());
  const int64_t span = k.cell.packed ? k.cells : 2 * k.cells - 1;
  const int64_t plane_bytes = ((k.count - 1) * k.pstep + span) * k.esize, block_bytes = k.cells * k.lanes * k.esize;
  auto copy = [&](std::vector<unsigned char>& to, int64_t to_at, const std::vector<unsigned char>& from,
                  int64_t from_at) { std::memcpy(&to[size_t(to_at)], &from[size_t(from_at)], size_t(k.esize)); };

  // Into the block: lane p of cell i is cell i of plane min(p, count - 1).
  const std::vector<unsigned char> planes = buffer(plane_bytes, &rng);
  std::vector<unsigned char> src = planes, block = buffer(block_bytes, nullptr), want = block;
  for (int64_t i = 0; i < k.cells; ++i)
    for (int64_t p = 0; p < k.lanes; ++p)
      copy(want, lane_at(k, i, p), planes, plane_at(k, std::min(p, k.count - 1), i));
  cpu::planes_to_block(k.esize, reinterpret_cast<char*>(&src[kGuard]), k.pstep, k.count, k.cell,
                       reinterpret_cast<char*>(&block[kGuard]), k.lanes);
  EXPECT_EQ(-1, first_difference(block, want)) << "into the block";
  EXPECT_EQ(-1, first_difference(src, planes)) << "the planes read";

  // Back into poisoned planes: only their cells change (round trip: they are the planes we started from).
  const std::vector<unsigned char> filled = block;
  std::vector<unsigned char> back = buffer(plane_bytes, nullptr), want_back = back;
  for (int64_t p = 0; p < k.count; ++p)
    for (int64_t i = 0; i < k.cells; ++i) copy(want_back, plane_at(k, p, i), planes, plane_at(k, p, i));
  cpu::block_to_planes(k.esize, reinterpret_cast<char*>(&block[kGuard]), k.lanes, k.cell,
                       reinterpret_cast<char*>(&back[kGuard]), k.pstep, k.count);
  EXPECT_EQ(-1, first_difference(back, want_back)) << "back into the planes";
  EXPECT_EQ(-1, first_difference(block, filled)) << "the block read";

  // Back from a block whose lanes all differ (the lanes past count are not read).
  std::vector<unsigned char> random_block = buffer(block_bytes, &rng), out = buffer(plane_bytes, nullptr);
  std::vector<unsigned char> want_out = out;
  for (int64_t p = 0; p < k.count; ++p)
    for (int64_t i = 0; i < k.cells; ++i) copy(want_out, plane_at(k, p, i), random_block, lane_at(k, i, p));
  cpu::block_to_planes(k.esize, reinterpret_cast<char*>(&random_block[kGuard]), k.lanes, k.cell,
                       reinterpret_cast<char*>(&out[kGuard]), k.pstep, k.count);
  EXPECT_EQ(-1, first_difference(out, want_out)) << "from distinct lanes";
}

// Runs f once on each SIMD target compiled and supported here, each with its own code.
template <class F>
void each_target(F&& f) {
  for (int64_t target : hwy::SupportedAndGeneratedTargets()) {
    SCOPED_TRACE(hwy::TargetName(target));
    hwy::SetSupportedTargetsForTest(target);
    f();
    if (::testing::Test::HasFailure()) break;
  }
  hwy::SetSupportedTargetsForTest(0);
}

TEST(CpuPlaneBlocks, MatchNaiveTranspose) {
  std::mt19937_64 rng(2024);
  std::vector<int64_t> cell_counts;
  for (int64_t c = 1; c <= 70; ++c) cell_counts.push_back(c);
  cell_counts.push_back(169);
  each_target([&] {
    for (int esize : {1, 2, 4, 8})
      for (int64_t lanes : {4, 8, 12, 16, 32})
        for (int64_t cells : cell_counts)
          for (int64_t count = 1; count <= lanes; ++count)
            for (int64_t gap : {0, 3}) {
              // every count for the usual 8 and 16 lanes and the smaller planes, else a few
              const bool usual = (lanes == 8 || lanes == 16) && cells <= 70;
              if (!usual && count > 2 && count != lanes / 2 + 1 && count < lanes - 1) continue;
              check(Case{esize, lanes, cells, count, cells + gap, cells_of(cells, true)}, rng);
              if (::testing::Test::HasFailure()) return;
            }
  });
}

TEST(CpuPlaneBlocks, ScatteredCellsMatchNaiveTranspose) {
  std::mt19937_64 rng(7);
  for (int esize : {1, 2, 4, 8})
    for (int64_t lanes : {8, 16})
      for (int64_t cells : {1, 5, 17, 49})
        for (int64_t count : {int64_t(1), lanes / 2 + 1, lanes}) {
          check(Case{esize, lanes, cells, count, 2 * cells + 1, cells_of(cells, false)}, rng);
          if (::testing::Test::HasFailure()) return;
        }
}

}  // namespace
}  // namespace poolkit::test
