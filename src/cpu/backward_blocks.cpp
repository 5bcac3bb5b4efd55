// Backward of small channels-first planes whose windows are narrow or vary along W (adaptive, global): blocks
// of planes are copied into a channels-last block in the cache (dy divided by its divisors there, for average),
// gathered as channels-last with vectors over the planes, and dx copied back. The same divisions and additions
// in the same order as the channels-last path, so the reference's bits.
#include <algorithm>
#include <vector>

#include "backward.hpp"
#include "plane_blocks.hpp"

namespace poolkit::cpu {

bool blocked_backward(const Backward& b) {
  const AxisTable &A = b.tab.t, &B = b.tab.h, &W = b.tab.w;
  const int64_t T = A.axis.in, H = B.axis.in, Wi = W.axis.in, OT = A.axis.out, OH = B.axis.out, OW = W.axis.out;
  // (a single window per plane: rows_backward fills it directly)
  if (!blocks_pay(b.tab) || OT * OH * OW == 1 || (b.esize != 4 && b.esize != 8)) return false;
  const int64_t xstep = plane_step(b.dx, b.N, b.C), ystep = plane_step(b.dy, b.N, b.C);
  const int64_t astep = plane_step(b.am, b.N, b.C);  // the argmax has dy's strides
  if (xstep < 0 || ystep < 0) return false;
  const int64_t lanes = b.esize == 4 ? 16 : 8, planes = b.N * b.C, in_cells = T * H * Wi, out_cells = OT * OH * OW;
  const LastPlan p(b);
  Backward bb = b;  // the block: one image of `lanes` channels, channels-last
  bb.N = 1, bb.C = lanes, bb.work = 0;  // work 0: the gather runs on the thread that has the block
  bb.dy = block_view(b.dy, lanes, OT, OH, OW), bb.am = block_view(b.am, lanes, OT, OH, OW);
  bb.dx = block_view(b.dx, lanes, T, H, Wi);
  const PlaneCells ycell = plane_cells(b.dy, OT, OH, OW), xcell = plane_cells(b.dx, T, H, Wi);
  const PlaneCells acell = b.is_max ? plane_cells(b.am, OT, OH, OW) : PlaneCells{};
  std::vector<float> div32;  // average: per output cell
  std::vector<double> div64;
  if (!b.is_max)
    for (int64_t ot = 0; ot < OT; ++ot)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          const int64_t d = p.window_divisor(ot, oh, ow);
          div32.push_back(float(d)), div64.push_back(double(d));
        }
  return parallel_for((planes + lanes - 1) / lanes, b.work, [&](int64_t i) {
    thread_local std::vector<uint64_t> by, bx, ba;  // 8-byte words: aligned for any element type
    by.resize(size_t(out_cells * lanes)), bx.resize(size_t(in_cells * lanes)), ba.resize(size_t(out_cells * lanes));
    const int64_t p0 = i * lanes, n = std::min(lanes, planes - p0);
    Backward bt = bb;
    bt.dy.data = reinterpret_cast<char*>(by.data());
    bt.dx.data = reinterpret_cast<char*>(bx.data());
    bt.am.data = b.is_max ? reinterpret_cast<char*>(ba.data()) : nullptr;
    planes_to_block(b.esize, b.dy.at<char>(p0 * ystep), ystep, n, ycell, bt.dy.data, lanes);
    if (b.is_max) {
      planes_to_block(b.am.esize, b.am.at<char>(p0 * astep), astep, n, acell, bt.am.data,
                      lanes);
      for (int64_t ot = 0; ot < OT; ++ot)
        for (int64_t oh = 0; oh < OH; ++oh)
          for (int64_t ow = 0; ow < OW; ++ow)
            if (!pixel_argmax_valid(bt, 0, ot, oh, ow)) return false;
    } else if (b.esize == 4) {  // in place, a divisor per cell of `lanes` values
      divide_f32(bt.dy.data, div32.data(), reinterpret_cast<float*>(bt.dy.data), out_cells * lanes, lanes);
    } else {
      divide_f64(bt.dy.data, div64.data(), reinterpret_cast<double*>(bt.dy.data), out_cells * lanes, lanes);
    }
    if (!gather_last(bt, p, bt.dy)) return false;
    block_to_planes(b.esize, bt.dx.data, lanes, xcell, b.dx.at<char>(p0 * xstep), xstep, n);
    return true;
  });
}

}  // namespace poolkit::cpu
