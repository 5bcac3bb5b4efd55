#pragma once
// Average forward of small channels-first planes, summed in the reference's order (from +0, tap by tap): global
// pooling of planes whose cells lie back to back, k planes side by side in the lanes of 128-bit vectors
// (PlaneAverageJob), the outputs of a channels-last block of planes (BlockAverageJob), and global pooling of
// channels-last images (LastAverageJob).
#include "common.hpp"

namespace poolkit::cpu {

struct PlaneAverageJob {
  const void* x = nullptr;
  void* y = nullptr;
  int64_t x_plane = 0, y_plane = 0;  // elements between consecutive planes / outputs
  int64_t planes = 0, cells = 0;     // cells >= the lanes of a 128-bit vector
  double divisor = 1;
};
void plane_average_f32(const PlaneAverageJob& j);
void plane_average_f64(const PlaneAverageJob& j);

// Average pooling of a channels-last block of planes in the cache (see plane_blocks.hpp): output o (elements
// out_at[o] of y on) = the sum from +0 of the block's x at tap[t], t in [first[o], first[o + 1]) in that (window)
// order, divided by divisor[o]; for `lanes` lanes from each offset (a multiple of the vector's lanes, at most 16).
struct BlockAverageJob {
  const void* x = nullptr;
  void* y = nullptr;
  int64_t lanes = 0, outputs = 0;
  const int64_t *tap = nullptr, *first = nullptr, *out_at = nullptr, *divisor = nullptr;
};
void block_average_f32(const BlockAverageJob& j);
void block_average_f64(const BlockAverageJob& j);

// Global average of channels-last cells: y[c] = the sum from +0 of x[cell * cell_step + c] over cells [0, cells)
// in order, divided by divisor, for c in [0, channels); channels * element size <= kLastChunkBytes. The cells are read in memory order and the
// sums kept in the cache (a vector of sums per tap chain had read every cell's channels as a stream of its own).
constexpr int64_t kLastChunkBytes = 16384;
struct LastAverageJob {
  const void* x = nullptr;
  void* y = nullptr;
  int64_t channels = 0, cells = 0, cell_step = 0;
  double divisor = 1;
};
void last_average_f32(const LastAverageJob& j);
void last_average_f64(const LastAverageJob& j);

// y (N, C, 1, 1, 1) = the average of each (T, H, W) plane of x, for float32 / float64 planes of packed cells
// evenly spaced; false (nothing written) where it does not apply.
bool plane_average_forward(const View5& x, const View5& y, DType dt, int64_t N, int64_t C, int64_t T, int64_t H,
                           int64_t W, double divisor, int64_t work);
// The same for channels-last images whose cells are evenly spaced, C apart (LastAverageJob).
bool last_average_forward(const View5& x, const View5& y, DType dt, int64_t N, int64_t C, int64_t T, int64_t H,
                          int64_t W, double divisor, int64_t work);

}  // namespace poolkit::cpu
