// Drivers of max and average pooling forward: they turn the geometry into tap lists (from the per-axis tables)
// and hand rows of outputs to the SIMD microkernels. Channels-first rows are vectorised along W; channels-last
// along C, or along (W, C) together (few channels, or channels filling whole vectors). Rows are walked in memory order (down
// a plane, and from plane to plane where every row sees whole windows): hardware prefetch follows them, where
// it could not follow one row across many planes. Small channels-first planes with narrow outputs are pooled
// as channels-last blocks of planes. Other dtypes and layouts take the scalar loop at the end, which still uses
// the tables.
#include <algorithm>
#include <cstring>

#include "../backends.hpp"
#include "common.hpp"
#include "fold_depth.hpp"
#include "generic.hpp"
#include "half.hpp"
#include "kernels_int.hpp"
#include "plane_average.hpp"
#include "plane_blocks.hpp"
#include "prefetch.hpp"
#include "window_sums.hpp"

namespace poolkit::cpu {
namespace {

using Kernel = void (*)(const ForwardJob&);

struct Forward {
  bool is_max;
  DType dtype;
  Geometry g3;
  const Tables& tab;
  View5 x, y, am;
  IndexForm form;
  int64_t N, C;
  AvgOptions opt;
  int64_t x_extent;
  Kernel kernel;
  int64_t work;  // elements read and written
  bool stream = false;  // see ForwardJob

  int64_t divisor(int64_t a, int64_t b, int64_t d) const {
    if (is_max) return 1;  // (max pooling divides nothing)
    if (opt.divisor_override) return *opt.divisor_override;
    bool inc = opt.count_include_pad;
    return g3.axes[0].divisor(a, inc) * g3.axes[1].divisor(b, inc) * g3.axes[2].divisor(d, inc);
  }
  int64_t code(int64_t jt, int64_t jh, int64_t jw, int64_t t, int64_t h, int64_t w) const {
    return form == IndexForm::I64 ? tab.flat(t, h, w) : tab.local(jt, jh, jw);
  }
};

// The taps of one output row (ot, oh), relative to its (n, c) plane: those of the outputs whose windows are
// whole along W (one list for all of them, from output `full_begin` on), then each other output's own.
struct RowPlan {
  std::vector<int64_t> off, code;  // whole windows, then the others' lists back to back
  int whole = 0;                   // taps of the whole-window list
  int64_t tap_max = 0;             // largest offset of the whole-window list
  struct Single { int64_t ow, begin, end, divisor; };
  std::vector<Single> singles;
  int64_t whole_divisor = 1;
};

RowPlan plan_row(const Forward& f, int64_t ot, int64_t oh, bool whole_windows) {
  const AxisTable &A = f.tab.t, &B = f.tab.h, &W = f.tab.w;
  RowPlan p;
  const int64_t xs4 = f.x.s[4], dw = W.axis.step();
  // sized once, for a window of `kernel` taps per output (at most that but along global axes, where the lists may
  // still grow; a small call had spent 18% of its time on them growing: bench/RESULTS.md, session 47)
  const size_t taps = size_t((A.last[ot] - A.first[ot]) * (B.last[oh] - B.first[oh]) * W.axis.kernel * W.axis.out);
  p.off.reserve(taps), p.code.reserve(taps), p.singles.reserve(size_t(W.axis.out));
  if (whole_windows) {
    const int64_t w0 = W.origin[W.full_begin];
    for (int64_t jt = A.first[ot]; jt < A.last[ot]; ++jt)
      for (int64_t jh = B.first[oh]; jh < B.last[oh]; ++jh) {
        int64_t t = A.pos(ot, jt), h = B.pos(oh, jh);
        for (int64_t jw = 0; jw < W.axis.kernel; ++jw) {
          p.off.push_back(t * f.x.s[2] + h * f.x.s[3] + (w0 + jw * dw) * xs4);
          p.code.push_back(f.code(jt, jh, jw, t, h, w0 + jw * dw));
        }
      }
    p.whole = int(p.off.size());
    for (int64_t o : p.off) p.tap_max = std::max(p.tap_max, o);
    p.whole_divisor = f.divisor(ot, oh, W.full_begin);
  }
  for (int64_t ow = 0; ow < W.axis.out; ++ow) {
    if (whole_windows && ow >= W.full_begin && ow < W.full_end) continue;
    int64_t begin = int64_t(p.off.size());
    for (int64_t jt = A.first[ot]; jt < A.last[ot]; ++jt)
      for (int64_t jh = B.first[oh]; jh < B.last[oh]; ++jh)
        for (int64_t jw = W.first[ow]; jw < W.last[ow]; ++jw) {
          int64_t t = A.pos(ot, jt), h = B.pos(oh, jh), w = W.pos(ow, jw);
          p.off.push_back(t * f.x.s[2] + h * f.x.s[3] + w * xs4);
          p.code.push_back(f.code(jt, jh, jw, t, h, w));
        }
    p.singles.push_back({ow, begin, int64_t(p.off.size()), f.divisor(ot, oh, ow)});
  }
  return p;
}

// Where the rows of one call lie: `rows` of them, starting at x offset xp / y offset yp, `xstep` / `ystep`
// apart: the same row of further planes, or (down) the next rows of a plane and on into the next plane, row r
// being output row (first + r) % period of its plane (for flat indices).
struct Rows {
  int64_t xp, yp, rows, xstep, ystep;
  bool down = false;
  int64_t first = 0, period = 1;
  int64_t next = 0;  // ForwardJob::next_rows of the whole windows' job
};

// Runs output row (ot, oh) of the rows `r` (see Rows). Lanes are (ow, c) with `group` channels per output: 1 for
// channels-first (or channels-last vectorised over C alone, one output at a time), C for channels-last rows
// vectorised over (W, C).
void run_row(const Forward& f, const RowPlan& p, int64_t ot, int64_t oh, const Rows& r, int64_t group,
             int64_t lanes_per_output) {
  const AxisTable& W = f.tab.w;
  const int64_t xp = r.xp, yp = r.yp, rows = r.rows, xstep = r.xstep;
  const int64_t yrow = yp + ot * f.y.s[2] + oh * f.y.s[3];
  ForwardJob j;
  j.form = f.form;
  j.stream = f.stream;
  j.rows = rows;
  j.x_row_step = xstep;
  j.y_row_step = r.ystep;
  if (r.down) {
    j.code_row_step = f.tab.h.axis.stride * f.tab.w.axis.in;
    j.code_row_first = r.first;
    j.code_period = r.period;
  }
  j.flat_step = W.axis.stride;
  if (p.whole > 0) {
    const int64_t ib = W.full_begin, count = (W.full_end - ib) * group, ls = W.axis.stride * f.x.s[4];
    // vector loads of stride 2 read one element (pair) past their last lane: keep that inside the input (loads
    // within groups of whole vectors read nothing past them)
    auto vec_at = [&](int64_t row) {  // the lanes vectors may cover in row `row` of the rows
      if (ls <= 1 || group % 16 == 0) return count;
      const int64_t room = f.x_extent - (xp + row * xstep) - p.tap_max - ls;
      return room < 0 ? int64_t(0) : std::min(count, (room / ls + 1) * group);
    };
    // Only the last rows of the input lack that room: they go in a call of their own, after the rows before them
    // with every lane in vectors (one short last row had sent all of a call's rows, up to 1024, to the kernels'
    // scalar loop: a batch of 8 seed-sized images 5x slower per image than one of 1024).
    int64_t full = rows;
    while (full > 0 && vec_at(full - 1) < count) --full;
    j.ntaps = p.whole;
    j.tap_offset = p.off.data();
    j.tap_code = p.code.data();
    j.divisor = p.whole_divisor;
    for (int64_t r0 = 0; r0 < rows;) {
      const int64_t n = r0 < full ? full : rows - r0;
      j.x = f.x.at<char>(xp + r0 * xstep);
      j.y = f.y.at<char>(yrow + ib * f.y.s[4] + r0 * r.ystep);
      j.argmax = f.am.defined() ? f.am.at<char>(yrow + ib * f.y.s[4] + r0 * r.ystep) : nullptr;
      j.rows = n;
      j.code_row_first = r.first + r0;
      j.lanes = Lanes{count, vec_at(r0 + n - 1), group, ls};
      j.next_rows = r0 + n < rows ? n * xstep : r.next == 0 ? 0 : r.next - r0 * xstep;  // (the rows that follow)
      f.kernel(j);
      r0 += n;
    }
    j.rows = rows, j.code_row_first = r.first, j.next_rows = 0;
  }
  j.flat_step = 0;  // a single output's lanes are its channels: one flat index
  for (const RowPlan::Single& s : p.singles) {
    j.x = f.x.at<char>(xp);
    j.y = f.y.at<char>(yrow + s.ow * f.y.s[4]);
    j.argmax = f.am.defined() ? f.am.at<char>(yrow + s.ow * f.y.s[4]) : nullptr;
    j.lanes = Lanes{lanes_per_output, lanes_per_output, 1, 1};
    j.ntaps = int(s.end - s.begin);
    j.tap_offset = p.off.data() + s.begin;
    j.tap_code = p.code.data() + s.begin;
    j.divisor = s.divisor;
    f.kernel(j);
  }
}

// Channels-first planes too small for vectors along W (global and adaptive pooling, narrow outputs): blocks
// of planes are copied into a channels-last block in the cache, pooled there with vectors over the planes
// (one output at a time, as channels-last), and their outputs copied back. Float averages of packed planes
// take window_sums.hpp instead (a block per vector's width of planes, moved by full-vector tiles).
bool blocked_forward(const Forward& f) {
  const AxisTable &A = f.tab.t, &B = f.tab.h, &W = f.tab.w;
  const int64_t T = A.axis.in, H = B.axis.in, Wi = W.axis.in, OT = A.axis.out, OH = B.axis.out, OW = W.axis.out;
  const int64_t lanes = is_integer(f.dtype) ? 64 / f.x.esize : f.x.esize == 8 ? 8 : 16;  // (integers: a 64-byte vector)
  const int64_t planes = f.N * f.C, in_cells = T * H * Wi, out_cells = OT * OH * OW;
  const int64_t xstep = plane_step(f.x, f.N, f.C), ystep = plane_step(f.y, f.N, f.C);
  const int64_t astep = plane_step(f.am, f.N, f.C);  // the argmax has y's strides
  if (xstep < 0 || ystep < 0) return false;
  Forward fb = f;  // the block: one image of `lanes` channels, channels-last
  fb.stream = false;
  fb.x = block_view(f.x, lanes, T, H, Wi), fb.y = block_view(f.y, lanes, OT, OH, OW);
  fb.am = block_view(f.am, lanes, OT, OH, OW);
  fb.N = 1, fb.C = lanes, fb.x_extent = in_cells * lanes - 1;
  std::vector<RowPlan> plans(size_t(OT * OH));
  for (int64_t r = 0; r < OT * OH; ++r) plans[size_t(r)] = plan_row(fb, r / OH, r % OH, false);
  const PlaneCells xcell = plane_cells(f.x, T, H, Wi), ycell = plane_cells(f.y, OT, OH, OW);
  const PlaneCells acell = f.am.defined() ? plane_cells(f.am, OT, OH, OW) : PlaneCells{};
  const bool ahead = xcell.packed && xstep == in_cells;  // (the planes back to back)
  // float averages: every output of the block from one call (the outputs' taps back to back, window order)
  const bool one_call = f.kernel == avg_forward_f32 || f.kernel == avg_forward_f64;
  std::vector<int64_t> tap, first{0}, out_at, div;
  if (one_call)
    for (int64_t r = 0; r < OT * OH; ++r)
      for (const RowPlan::Single& s : plans[size_t(r)].singles) {
        tap.insert(tap.end(), plans[size_t(r)].off.begin() + s.begin, plans[size_t(r)].off.begin() + s.end);
        first.push_back(int64_t(tap.size()));
        out_at.push_back((r / OH) * fb.y.s[2] + (r % OH) * fb.y.s[3] + s.ow * fb.y.s[4]);
        div.push_back(s.divisor);
      }
  if (one_call && xcell.packed && ycell.packed) {
    // taps and outputs as cells of a plane
    std::vector<int64_t> cell_tap(tap.size());
    bool packed_out = true;
    for (size_t t = 0; t < tap.size(); ++t) cell_tap[t] = tap[t] / lanes;
    for (size_t o = 0; o < out_at.size(); ++o) packed_out &= out_at[o] == int64_t(o) * lanes;
    if (packed_out && window_sums_forward(WindowSums{f.dtype, f.x.at<char>(0), f.y.at<char>(0), planes, xstep, ystep,
                                                   in_cells, out_cells, cell_tap, first, div, f.work}))
      return true;
  }
  return parallel_for((planes + lanes - 1) / lanes, f.work, [&](int64_t i) {
    thread_local std::vector<uint64_t> bx, by, ba;  // 8-byte words: aligned for any element type
    bx.resize(size_t((in_cells * lanes * fb.x.esize + 7) / 8));
    by.resize(size_t((out_cells * lanes * fb.y.esize + 7) / 8));
    ba.resize(size_t((out_cells * lanes * 8 + 7) / 8));
    const int64_t p0 = i * lanes, n = std::min(lanes, planes - p0);
    // the planes of the block after next into the outer caches while this one is pooled (the next block's into
    // the first-level cache ran 1.2-1.7x slower: adaptive 64x256x13x13 -> 7x7, Zen 4)
    if (ahead && p0 + 2 * lanes < planes)
      for (int64_t b = 0; b < std::min(lanes, planes - p0 - 2 * lanes) * xstep * f.x.esize; b += 64)
        prefetch_far(f.x.at<char>((p0 + 2 * lanes) * xstep) + b);
    Forward ft = fb;
    ft.x.data = reinterpret_cast<char*>(bx.data());
    ft.y.data = reinterpret_cast<char*>(by.data());
    ft.am.data = f.am.defined() ? reinterpret_cast<char*>(ba.data()) : nullptr;
    planes_to_block(f.x.esize, f.x.at<char>(p0 * xstep), xstep, n, xcell, ft.x.data, lanes);
    if (one_call) {
      BlockAverageJob j;
      j.x = ft.x.data, j.y = ft.y.data, j.lanes = lanes, j.outputs = int64_t(out_at.size());
      j.tap = tap.data(), j.first = first.data(), j.out_at = out_at.data(), j.divisor = div.data();
      (f.kernel == avg_forward_f32 ? block_average_f32 : block_average_f64)(j);
    } else {
      for (int64_t r = 0; r < OT * OH; ++r)
        run_row(ft, plans[size_t(r)], r / OH, r % OH, Rows{0, 0, 1, 0, 0}, 1, lanes);
    }
    block_to_planes(f.y.esize, ft.y.data, lanes, ycell, f.y.at<char>(p0 * ystep), ystep, n);
    if (f.am.defined()) block_to_planes(f.am.esize, ft.am.data, lanes, acell, f.am.at<char>(p0 * astep), astep, n);
    return true;
  });
}

// Max of 3x3 windows of stride 2 (padding 0 or 1) in channels-first 2-D planes, without an index or with the
// one-byte one, or int64 flat indices made from it: kernels_k3s2_forward.cpp (integers: kernels_int.cpp), a
// plane per task; the float kernels' codes of a plane go to a buffer in the cache, then its flat indices from
// them (k3s2_flat_rows; resnet-stem's int64 row had taken the general kernel, twice the byte row's time). 3-D
// windows whose slices are such windows (3x3x3 stride 2, 1x3x3 stride (1, 2, 2), ...), with the same indices:
// each output slice the 2-D maxima of its window's input slices, merged in order (slice_max_merge), which picks
// the cell the reference's scan in window order picks (a window's slices are runs of that order); int64 indices
// from the slice's codes. False where it does not apply or the target has no vector pair loads.
bool k3s2_forward(const Forward& f, DType dt) {
  const AxisTable& T = f.tab.t;
  const Axis &A = T.axis, &B = f.tab.h.axis, &W = f.tab.w.axis;
  const bool byte_int = is_integer(dt) && f.x.esize == 1;  // (int64 flat indices from the one-byte codes)
  const bool flat_codes = f.form == IndexForm::I64 && !is_integer(dt) && f.g3.plane_in() <= INT32_MAX;
  const bool index_ok = f.form == IndexForm::None || (f.form == IndexForm::U8 && (!is_integer(dt) || byte_int)) ||
                        (f.form == IndexForm::I64 && byte_int) || flat_codes;
  const bool slices = A.in != 1 || A.out != 1 || A.kernel != 1;
  if (!f.is_max || !index_ok || !k3s2_axis(B) || !k3s2_axis(W) || f.x.s[4] != 1 || f.y.s[4] != 1 || W.out < 16 ||
      W.in < 32)
    return false;  // (narrower rows: the general kernel's blocks of planes do better than an output at a time)
  if (slices) {
    if (A.kernel * 9 > 255) return false;
    for (int64_t ot = 0; ot < A.out; ++ot)
      if (T.first[ot] >= T.last[ot]) return false;  // (a window wholly in the padding)
  }
  K3S2ForwardJob job;
  job.x_row = f.x.s[3], job.y_row = f.y.s[3];
  job.height = B.in, job.width = W.in, job.out_h = B.out, job.out_w = W.out, job.pad_h = B.pad_lo, job.pad_w = W.pad_lo;
  const size_t keep = size_t(2 * (W.out + 64));
  K3S2FlatJob flat_job;
  flat_job.row = f.y.s[3], flat_job.out_h = B.out, flat_job.out_w = W.out, flat_job.width = W.in;
  flat_job.pad_h = B.pad_lo, flat_job.pad_w = W.pad_lo;
  return parallel_for(f.N * f.C, f.work, [&](int64_t i) {
    thread_local std::vector<uint64_t> row_max, row_code;  // 8-byte words: room and alignment for any lane type
    thread_local std::vector<uint8_t> codes;                // flat_codes: the plane's one-byte codes
    row_max.resize(keep), row_code.resize(keep);
    const int64_t n = i / f.C, c = i % f.C;
    K3S2ForwardJob j = job;
    j.x = f.x.at<char>(f.x.offset(n, c, 0, 0, 0)), j.y = f.y.at<char>(f.y.offset(n, c, 0, 0, 0));
    if (i + 1 < f.N * f.C) j.x_next = f.x.at<char>(f.x.offset((i + 1) / f.C, (i + 1) % f.C, 0, 0, 0));
    K3S2FlatJob fj = flat_job;
    if (flat_codes || (slices && f.form == IndexForm::I64)) {  // (3-D: one output slice's codes at a time)
      codes.resize(size_t(B.out * job.y_row + 16));  // (16: FlatRow's last read)
      j.am = codes.data();
      fj.codes = codes.data(), fj.flat = f.am.at<int64_t>(f.am.offset(n, c, 0, 0, 0));
      fj.stream = f.stream && reinterpret_cast<uintptr_t>(fj.flat) % 64 == 0 && W.out % 8 == 0 && fj.row % 8 == 0;
    } else if (f.form == IndexForm::I64) {
      j.flat = f.am.at<int64_t>(f.am.offset(n, c, 0, 0, 0)), j.stream = f.stream;
    } else {
      j.am = f.am.defined() ? f.am.at<uint8_t>(f.am.offset(n, c, 0, 0, 0)) : nullptr;
    }
    j.row_max = row_max.data(), j.row_code = row_code.data();
    const auto plane2d = [dt](const K3S2ForwardJob& s) {
      switch (dt) {
        case DType::f32: return k3s2_max_forward_f32(s);
        case DType::f64: return k3s2_max_forward_f64(s);
        case DType::bf16: return k3s2_max_forward_bf16(s);
        case DType::f16: return k3s2_max_forward_f16(s);
        default: return k3s2_max_forward_int(dt, s);
      }
    };
    if (!slices) {
      const bool ok = plane2d(j);
      if (ok && flat_codes) k3s2_flat_rows(fj);
      return ok;
    }
    // 3-D: a later slice's maxima go to buffers of whole rows (out_w apart), then merge into the output slice; the
    // next window's first slice, where it is that slice, is copied from them
    thread_local std::vector<uint64_t> later_y, later_code;
    later_y.resize(size_t((B.out * W.out + 64) * f.x.esize / 8)), later_code.resize(size_t(B.out * W.out / 8 + 8));
    const char* const x0 = static_cast<const char*>(j.x);
    const auto slice_at = [&](int64_t ot, int64_t jt) { return x0 + T.pos(ot, jt) * f.x.s[2] * f.x.esize; };
    const bool flat = f.form == IndexForm::I64;
    int64_t held = -1;  // the input slice whose maxima the buffers hold (a window's last is the next one's first)
    for (int64_t ot = 0; ot < A.out; ++ot) {
      for (int64_t jt = T.first[ot]; jt < T.last[ot]; ++jt) {
        const bool first = jt == T.first[ot];
        K3S2ForwardJob s = j;
        s.x = slice_at(ot, jt);
        s.x_next = jt + 1 < T.last[ot] ? slice_at(ot, jt + 1)
                   : ot + 1 < A.out    ? slice_at(ot + 1, T.first[ot + 1])
                                       : j.x_next;
        SliceMaxJob m;
        m.dst = static_cast<char*>(j.y) + ot * f.y.s[2] * f.y.esize;
        m.dst_code = j.am && !flat ? j.am + ot * f.am.s[2] : j.am;
        m.dst_row = f.y.s[3], m.rows = B.out, m.cols = W.out, m.code_add = uint8_t(jt * 9);
        if (first) {
          s.y = m.dst, s.am = m.dst_code;
        } else {
          s.y = later_y.data(), s.am = j.am ? reinterpret_cast<uint8_t*>(later_code.data()) : nullptr;
          s.y_row = W.out;
        }
        const int64_t t = T.pos(ot, jt);
        if (first && t == held) {
          const int64_t bytes = W.out * f.y.esize;
          for (int64_t oh = 0; oh < B.out; ++oh) {
            std::memcpy(static_cast<char*>(m.dst) + oh * m.dst_row * f.y.esize,
                        reinterpret_cast<const char*>(later_y.data()) + oh * bytes, size_t(bytes));
            if (m.dst_code)
              std::memcpy(m.dst_code + oh * m.dst_row, reinterpret_cast<const uint8_t*>(later_code.data()) + oh * W.out,
                          size_t(W.out));
          }
        } else if (!plane2d(s)) {
          return false;
        }
        if (first) {  // the codes of the window's first slice, counted from the window's first tap
          for (int64_t oh = 0; m.dst_code && m.code_add && oh < B.out; ++oh)
            for (int64_t ow = 0; ow < W.out; ++ow) m.dst_code[oh * m.dst_row + ow] += m.code_add;
          continue;
        }
        held = t;
        m.src = s.y, m.src_code = s.am, m.src_row = W.out;
        slice_max_merge(dt, m);
      }
      if (!flat) continue;
      // int64 flat indices of the slice from its codes: slice * 9 + 3 * row + column of the window's taps
      int64_t at[256];
      for (int64_t code = 0; code < A.kernel * 9; ++code) {
        const int64_t jt = code / 9;
        at[code] = jt >= T.first[ot] && jt < T.last[ot] ? (T.pos(ot, jt) * B.in + code % 9 / 3) * W.in + code % 3 : 0;
      }
      int64_t* const out = f.am.at<int64_t>(f.am.offset(n, c, ot, 0, 0));
      for (int64_t oh = 0; oh < B.out; ++oh) {
        const uint8_t* code = j.am + oh * job.y_row;
        int64_t* row = out + oh * f.am.s[3];
        const int64_t base = (2 * oh - B.pad_lo) * W.in - W.pad_lo;
        for (int64_t ow = 0; ow < W.out; ++ow) row[ow] = at[code[ow]] + base + 2 * ow;
      }
    }
    return true;
  });
}

// 2x2 stride-2 max, with the one-byte argmax or none, over channels-first 8-bit planes 32 cells wide, packed
// back to back (an even number of rows each): all planes' rows are one sequence (kernels_int.hpp, Rows32Job),
// two output rows to a vector rather than one row of 16 lanes at a time.
bool rows32_forward(const Forward& f, DType dt) {
  const Axis &A = f.tab.t.axis, &B = f.tab.h.axis, &W = f.tab.w.axis;
  auto pairs = [](const Axis& a) {
    return a.kind == AxisKind::Regular && a.kernel == 2 && a.stride == 2 && a.dilation == 1 && a.pad_lo == 0 &&
           a.in == 2 * a.out;
  };
  if (!f.is_max || (f.form != IndexForm::U8 && f.form != IndexForm::None) || (dt != DType::u8 && dt != DType::i8) ||
      A.in != 1 || A.out != 1 || A.kernel != 1 || !pairs(B) || !pairs(W) || W.in != 32 || f.x.s[4] != 1 ||
      f.x.s[3] != 32 || f.y.s[4] != 1 || f.y.s[3] != 16 || plane_step(f.x, f.N, f.C) != B.in * 32 ||
      plane_step(f.y, f.N, f.C) != B.out * 16)
    return false;
  const int64_t rows = f.N * f.C * B.out, chunk = 1024;  // (an even number of rows a task: aligned stores stay so)
  return parallel_for((rows + chunk - 1) / chunk, f.work, [&](int64_t i) {
    Rows32Job j;
    j.x = f.x.at<char>(i * chunk * 64), j.y = f.y.at<char>(i * chunk * 16);
    j.am = f.am.defined() ? f.am.at<uint8_t>(i * chunk * 16) : nullptr;
    j.rows = std::min(chunk, rows - i * chunk), j.stream = f.stream;
    return rows32_max_forward_int(dt, j);
  });
}

// Average of stride-1 windows along W over channels-first float32 planes (3 taps with padding 1 or 0, 2 without;
// the target's aligned_rows kernels, reading the input rows where they lie): each output row the sum of its
// window's input rows, shifted per tap, divided by its divisors. The taps are added in window order; a padding
// tap adds +0, which leaves a sum begun at +0 as it was (the reference skips it). False, having written nothing,
// where the target has no such kernel.
bool aligned_average_forward(const Forward& f, DType dt) {
  const AxisTable &At = f.tab.t, &Bt = f.tab.h;
  const Axis& W = f.tab.w.axis;
  if (f.is_max || dt != DType::f32 || W.kind != AxisKind::Regular || W.stride != 1 || W.dilation != 1 ||
      f.x.s[4] != 1 || f.y.s[4] != 1)
    return false;
  const int64_t T = At.axis.in, H = Bt.axis.in, OT = At.axis.out, OH = Bt.axis.out, OW = W.out;
  if (OW < 16) return false;  // (narrower rows: the blocks of planes)
  std::vector<RowTap> taps;
  for (int64_t jw = 0; jw < W.kernel; ++jw) taps.push_back({jw, 0, W.pad_lo - jw, 0, OW});
  RowJob probe;  // no rows: whether the target has the kernel for these taps
  probe.taps = taps.data(), probe.ntaps = int(taps.size()), probe.rows = 0;
  probe.dx = f.y.data, probe.aligned = true, probe.src_len = W.in;
  if (!aligned_rows_f32(probe)) return false;
  std::vector<float> div(size_t(OT * OH * OW + kRowAlign));  // (the last vector's loads stay inside)
  for (int64_t ot = 0; ot < OT; ++ot)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) div[size_t((ot * OH + oh) * OW + ow)] = float(f.divisor(ot, oh, ow));
  // the terms of every output row: its window's input rows inside the plane, in window order
  std::vector<int64_t> term_row;
  std::vector<int> row_first{0};
  for (int64_t ot = 0; ot < OT; ++ot)
    for (int64_t oh = 0; oh < OH; ++oh) {
      for (int64_t jt = At.first[ot]; jt < At.last[ot]; ++jt)
        for (int64_t jh = Bt.first[oh]; jh < Bt.last[oh]; ++jh)
          term_row.push_back(f.x.offset(0, 0, At.pos(ot, jt), Bt.pos(oh, jh), 0));
      row_first.push_back(int(term_row.size()));
    }
  const int64_t planes = f.N * f.C, in_bytes = (f.x.offset(0, 0, T - 1, H - 1, W.in - 1) + 1) * f.x.esize;
  std::vector<RowTerm> terms;  // plane (0, 0)'s, moved to each plane by the job's src_shift
  for (int64_t r : term_row) terms.push_back(RowTerm{f.x.at<float>(r), nullptr, 0});
  return parallel_for(planes, f.work, [&](int64_t i) {
    const int64_t n = i / f.C, c = i % f.C;
    for (int64_t ot = 0; ot < OT; ++ot) {
      RowJob j;
      j.terms = terms.data(), j.src_shift = f.x.offset(n, c, 0, 0, 0) * f.x.esize;
      j.row_terms = row_first.data() + ot * OH;
      j.rows = int(OH);
      j.taps = taps.data(), j.ntaps = int(taps.size());
      j.phase_len = OW;
      j.dx = f.y.at<char>(f.y.offset(n, c, ot, 0, 0)), j.dx_row_step = f.y.s[3];
      j.aligned = true;
      j.divisor = div.data() + ot * OH * OW;
      j.src_len = W.in;
      if (ot == 0 && i + 1 < planes)  // the next plane's input asked for while this one is summed
        j.ahead = f.x.at<char>(f.x.offset((i + 1) / f.C, (i + 1) % f.C, 0, 0, 0)), j.ahead_bytes = in_bytes;
      if (!aligned_rows_f32(j)) return false;
    }
    return true;
  });
}

// Is the axis one window over all of its cells (global pooling, adaptive pooling to one output)?
bool one_window(const AxisTable& a) {
  return a.axis.out == 1 && a.axis.step() == 1 && a.pos(0, a.first[0]) == 0 && a.last[0] - a.first[0] == a.axis.in;
}

Kernel int_max_kernel(DType t) {
  switch (t) {
    case DType::u8: return max_forward_u8;
    case DType::i8: return max_forward_i8;
    case DType::i16: return max_forward_i16;
    case DType::i32: return max_forward_i32;
    default: return max_forward_i64;
  }
}

bool simd_forward(Forward& f, const TensorView& x, const TensorView& y) {
  const bool f32 = x.dtype == DType::f32, wide = x.dtype == DType::f64, integer = is_integer(x.dtype);
  if (integer && !f.is_max) return false;  // (int64 average: the reference)
  if (!non_negative_strides(x)) return false;
  if (f.am.defined() && !f.am.same_strides(f.y)) return false;
  if (f.form == IndexForm::I64 && !wide && f.g3.plane_in() > INT32_MAX) return false;  // indices tracked in int32
  switch (x.dtype) {
    case DType::f32: f.kernel = f.is_max ? max_forward_f32 : avg_forward_f32; break;
    case DType::f64: f.kernel = f.is_max ? max_forward_f64 : avg_forward_f64; break;
    case DType::bf16: f.kernel = f.is_max ? max_forward_bf16 : avg_forward_bf16; break;
    case DType::f16: f.kernel = f.is_max ? max_forward_f16 : avg_forward_f16; break;
    default: f.kernel = int_max_kernel(x.dtype); break;
  }
  f.work = x.numel() + y.numel();
  // Streaming stores for outputs beyond half the L3, and for outputs of a quarter of the input's bytes or more
  // when input and outputs together go beyond it (the input, read through the cache after them, evicts the
  // outputs written first; 8-bit seed and resnet-stem rows 1.1-1.4x faster). Smaller outputs save little by it.
  const int64_t out_bytes = y.numel() * (f.y.esize + (f.am.defined() ? f.am.esize : 0));
  const int64_t in_bytes = x.numel() * f.x.esize;
  f.stream = past_cache(out_bytes) || (past_cache(in_bytes + out_bytes) && 4 * out_bytes >= in_bytes);
  f.x_extent = extent(x);
  const int64_t OT = f.g3.axes[0].out, OH = f.g3.axes[1].out, OW = f.g3.axes[2].out, rows = OT * OH;
  const bool first = f.x.s[4] == 1 && f.y.s[4] == 1;
  const bool last = f.x.s[1] == 1 && f.y.s[1] == 1;
  const bool regular_w = f.g3.axes[2].kind == AxisKind::Regular && f.tab.w.full_end > f.tab.w.full_begin;
  int64_t group, planes, xstep, ystep, per_output;
  int64_t outer = 1, oxs = 0, oys = 0;  // uneven planes: one sweep per image n
  if (first && !(last && f.C > 1)) {
    // channels-first: lanes along W; planes (n, c) in one sweep when they are evenly spaced
    group = 1, per_output = 1, planes = f.N * f.C;
    xstep = plane_step(f.x, f.N, f.C), ystep = plane_step(f.y, f.N, f.C);
    if (xstep < 0 || ystep < 0)
      outer = f.N, oxs = f.x.s[0], oys = f.y.s[0], planes = f.C, xstep = f.x.s[1], ystep = f.y.s[1];
    if (!f.is_max && one_window(f.tab.t) && one_window(f.tab.h) && one_window(f.tab.w) &&
        plane_average_forward(f.x, f.y, x.dtype, f.N, f.C, f.tab.t.axis.in, f.tab.h.axis.in, f.tab.w.axis.in,
                              double(f.divisor(0, 0, 0)), f.work))
      return true;
    if (k3s2_forward(f, x.dtype) || rows32_forward(f, x.dtype) || aligned_average_forward(f, x.dtype)) return true;
    if (blocks_pay(f.tab) && blocked_forward(f)) return true;
  } else if (last) {
    if (!f.is_max && one_window(f.tab.t) && one_window(f.tab.h) && one_window(f.tab.w) &&
        last_average_forward(f.x, f.y, x.dtype, f.N, f.C, f.tab.t.axis.in, f.tab.h.axis.in, f.tab.w.axis.in,
                             double(f.divisor(0, 0, 0)), f.work))
      return true;
    // channels-last: lanes over (W, C) when C is small and a vector load exists for it, or when C fills whole
    // vectors (each vector then lies within one output's channels); else over C, one output at a time. (Two
    // 16-bit channels had gone through float32 blocks: seed NHWC 3.6-6.0 ms, now 1.3-2.5, session 23.)
    const int64_t whole = integer ? 64 / f.x.esize : wide ? 8 : 16;  // lanes of a 64-byte vector
    bool merge = f.y.s[4] == f.C && regular_w &&
                 (f.C == 1 || (f.C == 2 && !wide && !integer && f.g3.axes[2].stride * f.x.s[4] == 4) ||
                  f.C % whole == 0 ||
                  // groups that tile a vector: one after another (stride 1), or every other one (float32 blocks)
                  (!integer && whole % f.C == 0 && f.g3.axes[2].stride * f.x.s[4] == f.C) ||
                  (f32 && (f.C == 4 || f.C == 8) && f.g3.axes[2].stride * f.x.s[4] == 2 * f.C) ||
                  (integer && f.C * f.x.esize <= 8 && (f.C & (f.C - 1)) == 0 &&  // (pairs of 2-8 byte units)
                   f.g3.axes[2].stride * f.x.s[4] == 2 * f.C));
    if (!f32 && !wide && !integer && !merge && f.C < 8) return false;  // 16-bit, few channels: float32 blocks do better
    group = merge ? f.C : 1;
    per_output = f.C;
    planes = f.N, xstep = f.x.s[0], ystep = f.y.s[0];
    if (!merge) {
      // one output at a time, C lanes: every output is a "single" of its row plan
      std::vector<RowPlan> plans(static_cast<size_t>(rows));
      for (int64_t r = 0; r < rows; ++r) plans[size_t(r)] = plan_row(f, r / OH, r % OH, false);
      int64_t chunk = std::max<int64_t>(1, 4096 / std::max<int64_t>(1, OW * f.C));
      int64_t chunks = (planes + chunk - 1) / chunk;
      return parallel_for(chunks * rows, f.work, [&](int64_t i) {
        int64_t r = i % rows, c0 = (i / rows) * chunk, n = std::min(chunk, planes - c0);
        run_row(f, plans[size_t(r)], r / OH, r % OH, Rows{c0 * xstep, c0 * ystep, n, xstep, ystep}, 1, f.C);
        return true;
      });
    }
  } else {
    return false;
  }
  std::vector<RowPlan> plans(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) plans[size_t(r)] = plan_row(f, r / OH, r % OH, regular_w);
  // Output rows [hb, he) see whole windows along H: one plan serves them all, a row step apart.
  const AxisTable& B = f.tab.h;
  const int64_t hb = B.full_begin, he = B.full_end, hx = B.axis.stride * f.x.s[3], hy = f.y.s[3];
  if (OT == 1 && outer == 1 && hb == 0 && he == OH && xstep == OH * hx && ystep == OH * hy) {
    // every row whole, planes evenly spaced: the rows of all planes are one sequence, walked in memory order
    const int64_t total = planes * OH, chunk_rows = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, OW * group));
    return parallel_for((total + chunk_rows - 1) / chunk_rows, f.work, [&](int64_t i) {
      const int64_t r0 = i * chunk_rows, n = std::min(chunk_rows, total - r0);
      run_row(f, plans[0], 0, 0, Rows{r0 * hx, r0 * hy, n, hx, hy, true, r0 % OH, OH}, group, per_output);
      return true;
    });
  }
  if (he > hb && OT * OH * OW * group >= 256) {
    // large planes: one plane after another, its interior rows in one call
    const int64_t chunk = std::max<int64_t>(1, 16384 / (OT * OH * OW * group)), chunks = (planes + chunk - 1) / chunk;
    return parallel_for(outer * chunks, f.work, [&](int64_t i) {
      const int64_t o = i / chunks, c0 = (i % chunks) * chunk, c1 = std::min(planes, c0 + chunk);
      for (int64_t c = c0; c < c1; ++c) {
        const int64_t xp = o * oxs + c * xstep, yp = o * oys + c * ystep;
        for (int64_t ot = 0; ot < OT; ++ot) {
          // planes of whole rows: each call's last rows ask for the next call's first (the next ot, or the next
          // plane's first), where its first tap lies
          int64_t next = 0;
          const int64_t to = ot + 1 < OT ? ot + 1 : 0, shift = ot + 1 < OT ? 0 : xstep;
          const RowPlan &here = plans[size_t(ot * OH)], &there = plans[size_t(to * OH)];
          if (hb == 0 && he == OH && (ot + 1 < OT || c + 1 < c1) && here.whole > 0 && there.whole > 0)
            next = shift + there.off[0] - here.off[0];
          auto one = [&](int64_t oh, int64_t n) {
            Rows rows{xp, yp, n, hx, hy, true, 0, n};
            if (oh == 0 && n == OH) rows.next = next;
            run_row(f, plans[size_t(ot * OH + oh)], ot, oh, rows, group, per_output);
          };
          for (int64_t oh = 0; oh < hb; ++oh) one(oh, 1);
          one(hb, he - hb);
          for (int64_t oh = he; oh < OH; ++oh) one(oh, 1);
        }
      }
      return true;
    });
  }
  // chunks of planes of about 16K outputs each, so that threads share out even small problems
  int64_t chunk = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, OW * group));
  int64_t chunks = (planes + chunk - 1) / chunk;
  return parallel_for(outer * chunks * rows, f.work, [&](int64_t i) {
    int64_t r = i % rows, c0 = ((i / rows) % chunks) * chunk, o = i / (rows * chunks);
    int64_t n = std::min(chunk, planes - c0);
    run_row(f, plans[size_t(r)], r / OH, r % OH, Rows{o * oxs + c0 * xstep, o * oys + c0 * ystep, n, xstep, ystep},
            group, per_output);
    return true;
  });
}

bool run_forward(bool is_max, const Geometry& g, const AvgOptions& opt, const TensorView& x, const TensorView& y,
                 const TensorView& am) {
  if (x.device != Device::CPU || x.numel() == 0 || y.numel() == 0) return false;
  if (const DepthFold d = fold_depth(g, x, y, am); d.ok) return run_forward(is_max, d.g, opt, d.v[0], d.v[1], d.v[2]);
  const Geometry g3 = as3d(g);
  const Tables tab(g3);
  Forward f{is_max, x.dtype, g3, tab, View5(x), View5(y), View5(am), index_form(am), x.shape[0], x.shape[1],
            opt, 0, nullptr, 0};
  if (simd_forward(f, x, y)) return true;
  if ((x.dtype == DType::bf16 || x.dtype == DType::f16) && half_forward(is_max, g, opt, x, y, am)) return true;
  return generic_forward(is_max, g, opt, x, y, am);
}

}  // namespace

bool max_pool_forward(const Geometry& g, const TensorView& x, const TensorView& y, const TensorView& argmax) {
  return run_forward(true, g, AvgOptions{}, x, y, argmax);
}

bool avg_pool_forward(const Geometry& g, const AvgOptions& opt, const TensorView& x, const TensorView& y) {
  return run_forward(false, g, opt, x, y, TensorView{});
}

}  // namespace poolkit::cpu
