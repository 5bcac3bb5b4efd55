// Drivers of max and average pooling forward: they turn the geometry into tap lists (from the per-axis tables)
// and hand rows of outputs to the SIMD microkernels. Channels-first rows are vectorised along W; channels-last
// along C, or along (W, C) together when C is too small to fill a vector. Other dtypes and layouts take the
// scalar loop at the end, which still uses the tables.
#include <algorithm>

#include "../backends.hpp"
#include "common.hpp"

namespace poolkit::cpu {
namespace {

using Kernel = void (*)(const ForwardJob&);

struct Forward {
  bool is_max;
  Geometry g3;
  Tables tab;
  View5 x, y, am;
  IndexForm form;
  int64_t N, C;
  AvgOptions opt;
  int64_t x_extent;
  Kernel kernel;
  int64_t work;  // elements read and written

  int64_t divisor(int64_t a, int64_t b, int64_t d) const {
    if (opt.divisor_override) return *opt.divisor_override;
    bool inc = opt.count_include_pad;
    return g3.axes[0].divisor(a, inc) * g3.axes[1].divisor(b, inc) * g3.axes[2].divisor(d, inc);
  }
  int64_t code(int64_t jt, int64_t jh, int64_t jw, int64_t t, int64_t h, int64_t w) const {
    return form == IndexForm::I64 ? tab.flat(t, h, w) : tab.local(jt, jh, jw);
  }
};

struct TapBuffer {
  std::vector<int64_t> off, code;
  void clear() { off.clear(), code.clear(); }
  void add(int64_t o, int64_t c) { off.push_back(o), code.push_back(c); }
};

// One output row (n, [c,] ot, oh) whose lanes are (ow, c) with `group` channels per output (1: channels-first,
// with c fixed; C: channels-last with c in the lanes).
void forward_row(const Forward& f, int64_t n, int64_t c, int64_t ot, int64_t oh, int64_t group, TapBuffer& taps) {
  const AxisTable &A = f.tab.t, &B = f.tab.h, &W = f.tab.w;
  const int64_t xs4 = f.x.s[4], sw = W.axis.stride, dw = W.axis.dilation;
  const int64_t xplane = f.x.offset(n, c, 0, 0, 0);
  const int64_t yrow = f.y.offset(n, c, ot, oh, 0);
  auto run = [&](int64_t ow0, int64_t count, int64_t div, int64_t xbase, int64_t lane_stride, int64_t vec) {
    ForwardJob j;
    j.x = f.x.at<char>(xbase);
    j.y = f.y.at<char>(yrow + ow0 * f.y.s[4]);
    j.argmax = f.am.defined() ? f.am.at<char>(yrow + ow0 * f.y.s[4]) : nullptr;
    j.form = f.form;
    j.lanes = Lanes{count, vec, group, lane_stride};
    j.ntaps = int(taps.off.size());
    j.tap_offset = taps.off.data();
    j.tap_code = taps.code.data();
    j.flat_step = sw;
    j.divisor = div;
    f.kernel(j);
  };
  // Whole windows along W: one call over all of them.
  if (W.axis.kind == AxisKind::Regular && W.full_end > W.full_begin) {
    const int64_t ib = W.full_begin, ie = W.full_end, w0 = W.origin[ib];
    taps.clear();
    for (int64_t jt = A.first[ot]; jt < A.last[ot]; ++jt)
      for (int64_t jh = B.first[oh]; jh < B.last[oh]; ++jh) {
        int64_t t = A.pos(ot, jt), h = B.pos(oh, jh);
        for (int64_t jw = 0; jw < W.axis.kernel; ++jw)
          taps.add(t * f.x.s[2] + h * f.x.s[3] + jw * dw * xs4, f.code(jt, jh, jw, t, h, w0 + jw * dw));
      }
    if (!taps.off.empty()) {
      int64_t count = (ie - ib) * group, lane_stride = sw * xs4;
      int64_t xbase = xplane + w0 * xs4;
      // vector loads of stride 2 read one element (pair) past their last lane: keep that inside the input
      int64_t tap_max = *std::max_element(taps.off.begin(), taps.off.end());
      int64_t room = f.x_extent - xbase - tap_max - lane_stride;
      int64_t vec = lane_stride <= 1 ? count : room < 0 ? 0 : std::min(count, (room / lane_stride + 1) * group);
      run(ib, count, f.divisor(ot, oh, ib), xbase, lane_stride, vec);
    }
  }
  // The other outputs one at a time, over their valid taps.
  for (int64_t ow = 0; ow < W.axis.out; ++ow) {
    if (W.axis.kind == AxisKind::Regular && ow >= W.full_begin && ow < W.full_end) continue;
    taps.clear();
    for (int64_t jt = A.first[ot]; jt < A.last[ot]; ++jt)
      for (int64_t jh = B.first[oh]; jh < B.last[oh]; ++jh)
        for (int64_t jw = W.first[ow]; jw < W.last[ow]; ++jw) {
          int64_t t = A.pos(ot, jt), h = B.pos(oh, jh), w = W.pos(ow, jw);
          taps.add(t * f.x.s[2] + h * f.x.s[3] + w * xs4, f.code(jt, jh, jw, t, h, w));
        }
    run(ow, group, f.divisor(ot, oh, ow), xplane, 1, group);
  }
}

// Channels-last with C filling vectors: every output pixel reduces C channels at once.
void forward_pixel_row(const Forward& f, int64_t n, int64_t ot, int64_t oh, TapBuffer& taps) {
  const AxisTable &A = f.tab.t, &B = f.tab.h, &W = f.tab.w;
  const int64_t xn = f.x.offset(n, 0, 0, 0, 0);
  for (int64_t ow = 0; ow < W.axis.out; ++ow) {
    taps.clear();
    for (int64_t jt = A.first[ot]; jt < A.last[ot]; ++jt)
      for (int64_t jh = B.first[oh]; jh < B.last[oh]; ++jh)
        for (int64_t jw = W.first[ow]; jw < W.last[ow]; ++jw) {
          int64_t t = A.pos(ot, jt), h = B.pos(oh, jh), w = W.pos(ow, jw);
          taps.add(t * f.x.s[2] + h * f.x.s[3] + w * f.x.s[4], f.code(jt, jh, jw, t, h, w));
        }
    int64_t yo = f.y.offset(n, 0, ot, oh, ow);
    ForwardJob j;
    j.x = f.x.at<char>(xn);
    j.y = f.y.at<char>(yo);
    j.argmax = f.am.defined() ? f.am.at<char>(yo) : nullptr;
    j.form = f.form;
    j.lanes = Lanes{f.C, f.C, 1, 1};
    j.ntaps = int(taps.off.size());
    j.tap_offset = taps.off.data();
    j.tap_code = taps.code.data();
    j.divisor = f.divisor(ot, oh, ow);
    f.kernel(j);
  }
}

bool simd_forward(Forward& f, const TensorView& x, const TensorView& y) {
  const bool f32 = x.dtype == DType::f32;
  if (!f32 && x.dtype != DType::f64) return false;
  if (!non_negative_strides(x)) return false;
  if (f.am.defined() && !f.am.same_strides(f.y)) return false;
  if (f.form == IndexForm::I64 && f32 && f.g3.plane_in() > INT32_MAX) return false;  // indices tracked in int32
  f.kernel = f.is_max ? (f32 ? max_forward_f32 : max_forward_f64) : (f32 ? avg_forward_f32 : avg_forward_f64);
  f.work = x.numel() + y.numel();
  f.x_extent = extent(x);
  const int64_t OT = f.g3.axes[0].out, OH = f.g3.axes[1].out;
  const bool first = f.x.s[4] == 1 && f.y.s[4] == 1;
  const bool last = f.x.s[1] == 1 && f.y.s[1] == 1;
  if (first && !(last && f.C > 1)) {
    return parallel_for(f.N * f.C * OT * OH, f.work, [&](int64_t i) {
      thread_local TapBuffer taps;
      int64_t oh = i % OH, ot = (i / OH) % OT, c = (i / (OH * OT)) % f.C, n = i / (OH * OT * f.C);
      forward_row(f, n, c, ot, oh, 1, taps);
      return true;
    });
  }
  if (!last) return false;
  // Small C: lanes over (W, C) when outputs are packed along W and a vector load exists for that pattern.
  bool merge = f.C < 8 && f.y.s[4] == f.C && f.g3.axes[2].kind == AxisKind::Regular &&
               (f.C == 1 || (f.C == 2 && f32 && f.g3.axes[2].stride * f.x.s[4] == 4));
  (void)y;
  return parallel_for(f.N * OT * OH, f.work, [&](int64_t i) {
    thread_local TapBuffer taps;
    int64_t oh = i % OH, ot = (i / OH) % OT, n = i / (OH * OT);
    if (merge) forward_row(f, n, 0, ot, oh, f.C, taps);
    else forward_pixel_row(f, n, ot, oh, taps);
    return true;
  });
}

bool run_forward(bool is_max, const Geometry& g, const AvgOptions& opt, const TensorView& x, const TensorView& y,
                 const TensorView& am) {
  if (x.device != Device::CPU || x.numel() == 0 || y.numel() == 0) return false;
  Geometry g3 = as3d(g);
  Forward f{is_max, g3, Tables(g3), View5(x), View5(y), View5(am), index_form(am), x.shape[0], x.shape[1],
            opt, 0, nullptr, 0};
  return simd_forward(f, x, y);
}

}  // namespace

bool max_pool_forward(const Geometry& g, const TensorView& x, const TensorView& y, const TensorView& argmax) {
  return run_forward(true, g, AvgOptions{}, x, y, argmax);
}

bool avg_pool_forward(const Geometry& g, const AvgOptions& opt, const TensorView& x, const TensorView& y) {
  return run_forward(false, g, opt, x, y, TensorView{});
}

}  // namespace poolkit::cpu
