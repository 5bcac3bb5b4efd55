// Average backward of float32 channels-first planes whose rows fit one vector (adaptive pooling of small maps,
// narrow 1-D signals): each dx row is one vector summed in registers from the output rows covering it, their
// lanes picked per column slot by table lookups (see NarrowJob). No copies of the planes into blocks.
#include <algorithm>
#include <vector>

#include "backward.hpp"

namespace poolkit::cpu {

bool narrow_backward(const Backward& b) {
  if (b.is_max || b.dtype != DType::f32 || b.dx.s[4] != 1 || b.dy.s[4] != 1) return false;
  const int64_t T = b.tab.t.axis.in, H = b.tab.h.axis.in, W = b.tab.w.axis.in;
  const int64_t OT = b.tab.t.axis.out, OH = b.tab.h.axis.out, OW = b.tab.w.axis.out;
  const int64_t N = narrow_lanes_f32();
  // (one window a plane: rows_backward fills it; long planes: the row accumulation keeps its q rows smaller)
  if (W > N || OW > N || OT * OH * OW == 1 || T * H > 4096 || OT * OH > 4096) return false;
  const int64_t xstep = plane_step(b.dx, b.N, b.C), ystep = plane_step(b.dy, b.N, b.C);
  if (xstep < 0 || ystep < 0) return false;
  const Covers ct(b.g3.axes[0]), ch(b.g3.axes[1]), cw(b.g3.axes[2]);
  NarrowJob j;
  for (int64_t w = 0; w < W; ++w) j.nslots = std::max(j.nslots, int(cw.begin[size_t(w) + 1] - cw.begin[size_t(w)]));
  if (j.nslots > kNarrowSlots) return false;
  std::vector<int32_t> slot(size_t(std::max(1, j.nslots) * N), -1);
  for (int64_t w = 0; w < W; ++w)
    for (int64_t k = cw.begin[size_t(w)]; k < cw.begin[size_t(w) + 1]; ++k)
      slot[size_t((k - cw.begin[size_t(w)]) * N + w)] = int32_t(cw.o[size_t(k)]);
  std::vector<int64_t> dy_row, dx_row;
  std::vector<float> divisor(size_t(OT * OH * N), 1.0f);
  for (int64_t ot = 0; ot < OT; ++ot)
    for (int64_t oh = 0; oh < OH; ++oh) {
      dy_row.push_back(ot * b.dy.s[2] + oh * b.dy.s[3]);
      for (int64_t ow = 0; ow < OW; ++ow) divisor[size_t((ot * OH + oh) * N + ow)] = float(b.divisor(ot, oh, ow));
    }
  std::vector<int> row_terms{0}, row_term;
  bool back_to_back = true;
  for (int64_t t = 0; t < T; ++t)
    for (int64_t h = 0; h < H; ++h) {
      dx_row.push_back(t * b.dx.s[2] + h * b.dx.s[3]);
      back_to_back &= dx_row.back() == int64_t(dx_row.size() - 1) * W;
      for_covering_rows(ct, ch, t, h,
                        [&](int64_t ot, int64_t oh, int64_t, int64_t) { row_term.push_back(int(ot * OH + oh)); });
      row_terms.push_back(int(row_term.size()));
    }
  j.dy_plane = ystep, j.dx_plane = xstep;
  j.out_rows = OT * OH, j.in_rows = T * H, j.width = W, j.out_width = OW;
  // a whole vector from row r stays inside the plane's rows
  if (back_to_back && T * H * W >= N) j.full_rows = std::min(T * H, (T * H * W - N) / W + 1);
  j.dy_row = dy_row.data(), j.dx_row = dx_row.data(), j.divisor = divisor.data();
  j.row_terms = row_terms.data(), j.row_term = row_term.data(), j.slot = slot.data();
  const int64_t planes = b.N * b.C, chunk = std::max<int64_t>(1, 16384 / (T * H * W));
  return parallel_for((planes + chunk - 1) / chunk, b.work, [&](int64_t i) {
    NarrowJob one = j;
    one.planes = std::min(chunk, planes - i * chunk);
    one.dy = b.dy.at<float>(i * chunk * ystep), one.dx = b.dx.at<float>(i * chunk * xstep);
    narrow_avg_backward_f32(one);
    return true;
  });
}

}  // namespace poolkit::cpu
