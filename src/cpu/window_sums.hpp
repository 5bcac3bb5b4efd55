#pragma once
// Average pooling of small channels-first planes whose cells are packed, float32 / float64: k planes at a
// time (k the lanes of a full vector), moved into a channels-last block in the first-level cache by k x k tiles
// transposed in registers (one full-vector store a cell, where plane_blocks.cpp moves 128-bit tiles), each
// window summed from the block in its tap order from +0 and divided (as the reference), and the outputs
// transposed back straight into the planes' outputs. Measured on adaptive 64x256x13x13 -> 7x7: bench/RESULTS.md,
// Session 14b.
#include <vector>

#include "common.hpp"

namespace poolkit::cpu {

// Output o of a plane (element o of its packed outputs) = the sum from +0 of the plane's cells tap[t], t in
// [first[o], first[o + 1]), in that order, divided by divisor[o]. False (nothing written) where it does not
// apply: not float32 / float64, or fewer cells or outputs than a vector's lanes.
struct WindowSums {
  DType dtype;
  const char* x;
  char* y;
  int64_t planes, x_plane, y_plane, cells, outputs;  // (elements between consecutive planes / outputs)
  const std::vector<int64_t>& tap;
  const std::vector<int64_t>& first;
  const std::vector<int64_t>& divisor;
  int64_t work;
};
bool window_sums_forward(const WindowSums& w);

// One thread's planes, with the lists above; `block` has room for (cells + outputs) x the lanes of a vector
// and is 64-byte aligned.
struct WindowSumsJob {
  const void* x;
  void* y;
  int64_t planes, x_plane, y_plane, cells, outputs;
  const int64_t *tap, *first, *divisor;
  void* block;
};

}  // namespace poolkit::cpu
