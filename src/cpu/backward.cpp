// Drivers of max and average pooling backward, as gathers (each dx cell is written once by one thread; no
// atomics). Windows that tile the input (kernel == stride, no padding or dilation) in channels-first take a
// row kernel that writes dx rows whole; channels-last gathers over the covering outputs of each input pixel,
// vectorised over C, adding in increasing output order as the reference does. Max from a window-local argmax
// otherwise: backward_k3s2.cpp (3x3 windows of stride 2) or backward_scatter.cpp; the rest: backward_rows.cpp.
#include <cstring>
#include <memory>
#include <type_traits>

#include "../backends.hpp"
#include "poolkit/memory.hpp"
#include "argmax_local.hpp"
#include "backward.hpp"
#include "fold_depth.hpp"
#include "half.hpp"

namespace poolkit::cpu {
namespace {

// A tensor from the memory cache, uninitialised, for values a kernel writes whole before they are read (a Tensor
// zero-fills: that memset took a tenth of the seed case's max backward that recomputes its argmax).
struct ScratchTensor {
  ScratchTensor(DType t, const Shape& shape, Layout layout)
      : block(allocate(size_t(shape.numel() * dtype_size(t))), release), view(block.get(), t, shape, layout) {}
  std::unique_ptr<void, void (*)(void*)> block;
  TensorView view;
};

bool tiles(const Geometry& g3) {
  for (const Axis& a : g3.axes)
    if (a.kind != AxisKind::Regular || a.kernel != a.stride || a.dilation != 1 || a.pad_lo != 0 ||
        a.pad_hi != 0 || a.out * a.stride > a.in)
      return false;
  return true;
}

void zero(const Backward& b, int64_t off, int64_t count) { std::memset(b.dx.at<char>(off), 0, count * b.esize); }

// Every code in [0, cells)? Read unsigned, a negative code is above any cell count of its form.
template <class U>
bool below(const char* p, int64_t count, int64_t cells) {
  using V = std::make_unsigned_t<U>;
  const V* v = reinterpret_cast<const V*>(p);
  V top = 0;
  for (int64_t k = 0; k < count; ++k) top = std::max(top, v[k]);
  return count == 0 || uint64_t(top) < uint64_t(cells);
}
// The same for codes of a window-local form (not I64).
bool codes_below(IndexForm form, const char* p, int64_t count, int64_t cells) {
  return form == IndexForm::U8    ? below<uint8_t>(p, count, cells)
         : form == IndexForm::I16 ? below<int16_t>(p, count, cells)
                                  : below<int32_t>(p, count, cells);
}

// rel[k] = argmax[k] - base - (k / G) * step where that lies in [0, s) (else -1); hits[k] counts those.
template <class U>
void relative(const char* p, int64_t lanes, int64_t G, int64_t base, int64_t step, int64_t s, int32_t* rel,
              uint8_t* hits) {
  const U* v = reinterpret_cast<const U*>(p);
  for (int64_t o = 0, k = 0; k < lanes; ++o)
    for (int64_t c = 0; c < G; ++c, ++k) {
      const int64_t r = int64_t(v[k]) - base - o * step;
      const bool in = uint64_t(r) < uint64_t(s);  // one unsigned compare, no branch: hits are random
      const int32_t keep = -int32_t(in);  // all ones when in: in ? r : -1 without a branch
      rel[k] = (int32_t(r) & keep) | ~keep;
      hits[k] = uint8_t(hits[k] + in);
    }
}
void relative(IndexForm form, const char* p, int64_t lanes, int64_t G, int64_t base, int64_t step, int64_t s,
              int32_t* rel, uint8_t* hits) {
  switch (form) {
    case IndexForm::U8: return relative<uint8_t>(p, lanes, G, base, step, s, rel, hits);
    case IndexForm::I16: return relative<int16_t>(p, lanes, G, base, step, s, rel, hits);
    case IndexForm::I32: return relative<int32_t>(p, lanes, G, base, step, s, rel, hits);
    default: return relative<int64_t>(p, lanes, G, base, step, s, rel, hits);
  }
}

// Tiled windows: `rows` output rows from dy offset y0 (and the argmax's), rows ystep apart, whose windows start
// at dx offset x0, xstep apart. Lanes are (w, c) with `group` channels each: a channels-first plane has group
// 1, a channels-last image group C (1, or 2 for float32). Rows of W are contiguous in dx, dy and the argmax.
// Row r is output row (ot, (oh0 + r) mod OH): rows may run on into the next plane where OT = 1.
bool tiled_rows(const Backward& b, int64_t y0, int64_t x0, int64_t rows, int64_t ystep, int64_t xstep, int64_t G,
                int64_t ot, int64_t oh0) {
  const Axis &A = b.g3.axes[0], &B = b.g3.axes[1], &W = b.g3.axes[2];
  auto run = [&](const TiledBackwardJob& job) {
    switch (b.dtype) {
      case DType::f32: return b.is_max ? tiled_max_backward_f32(job) : tiled_avg_backward_f32(job);
      case DType::f64: return b.is_max ? tiled_max_backward_f64(job) : tiled_avg_backward_f64(job);
      case DType::bf16: return b.is_max ? tiled_max_backward_bf16(job) : tiled_avg_backward_bf16(job);
      default: return b.is_max ? tiled_max_backward_f16(job) : tiled_avg_backward_f16(job);
    }
  };
  const int64_t lanes = W.out * G, cells = A.kernel * B.kernel * W.kernel;
  const int64_t done = W.out * W.stride * G, row = W.in * G;
  const int tap_rows = int(A.kernel * B.kernel);  // (jt, jh) in window order
  thread_local std::vector<int64_t> tap_row;      // dx offset of each from its window's first
  tap_row.resize(size_t(tap_rows));
  for (int tr = 0; tr < tap_rows; ++tr) tap_row[size_t(tr)] = tr / B.kernel * b.dx.s[2] + tr % B.kernel * b.dx.s[3];
  TiledBackwardJob j;
  j.count = lanes;
  j.stride = W.stride;
  j.group = G;
  j.divisor = b.is_max ? 1 : b.divisor(0, 0, 0);  // no padding: the same for every window
  j.stream = b.stream_dx && done == row;        // (rows with a zeroed tail are not whole lines)
  if (b.is_max && (b.esize == 8 || b.form == IndexForm::I64)) {
    // the argmax as relative tap ids, computed per output row and tap row; one call per dx row
    thread_local std::vector<int32_t> rel;
    thread_local std::vector<uint8_t> hits;
    rel.resize(size_t(lanes)), hits.resize(size_t(lanes));
    const bool flat = b.form == IndexForm::I64;
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t oh = (oh0 + r) % B.out;
      const char* am = b.am.at<char>(y0 + r * ystep);
      std::fill(hits.begin(), hits.end(), 0);
      for (int tr = 0; tr < tap_rows; ++tr) {
        const int64_t jt = tr / B.kernel, jh = tr % B.kernel;
        const int64_t base = flat ? b.tab.flat(ot * A.stride + jt, oh * B.stride + jh, 0) : b.tab.local(jt, jh, 0);
        relative(b.form, am, lanes, G, base, flat ? W.stride : 0, W.stride, rel.data(), hits.data());
        TiledBackwardJob one = j;
        one.g = b.dy.at<char>(y0 + r * ystep);
        one.dx = b.dx.at<char>(x0 + r * xstep + tap_row[size_t(tr)]);
        one.rel = rel.data();
        run(one);
      }
      for (uint8_t hit : hits)
        if (hit != 1) return false;
    }
  } else {
    j.g = b.dy.at<char>(y0);
    j.dx = b.dx.at<char>(x0);
    j.rows = rows;
    j.g_row_step = ystep;
    j.dx_row_step = xstep;
    j.tap_rows = tap_rows;
    j.tap_row_offset = tap_row.data();
    if (b.is_max) {
      const bool packed = ystep == lanes;  // rows back to back: one check for all
      for (int64_t r = 0; r < (packed ? 1 : rows); ++r) {
        const char* am = b.am.at<char>(y0 + r * ystep);
        const int64_t count = packed ? rows * lanes : lanes;
        bool ok = codes_below(b.form, am, count, cells);
        if (!ok) return false;  // an argmax outside its window: the reference reports it
      }
      j.argmax = b.am.at<char>(y0);
      j.form = b.form;
    }
    run(j);
  }
  if (done < row)
    for (int64_t r = 0; r < rows; ++r)
      for (int tr = 0; tr < tap_rows; ++tr) zero(b, x0 + r * xstep + tap_row[size_t(tr)] + done, row - done);
  return true;
}

// Output plane ot of tiled windows over plane (n, c) in channels-first (group 1), or over image n in
// channels-last (group C); then the dx rows of its window rows that no window reads (past the last window in H,
// and for the last plane every row past the last window in T).
bool tiled_plane(const Backward& b, int64_t n, int64_t c, int64_t G, int64_t ot) {
  const Axis &A = b.g3.axes[0], &B = b.g3.axes[1];
  if (!tiled_rows(b, b.dy.offset(n, c, ot, 0, 0), b.dx.offset(n, c, ot * A.stride, 0, 0), B.out, b.dy.s[3],
                  B.stride * b.dx.s[3], G, ot, 0))
    return false;
  const int64_t t1 = ot + 1 == A.out ? A.in : (ot + 1) * A.stride;
  for (int64_t t = ot * A.stride; t < t1; ++t)
    for (int64_t h = t < A.out * A.stride ? B.out * B.stride : 0; h < B.in; ++h)
      zero(b, b.dx.offset(n, c, t, h, 0), b.g3.axes[2].in * G);
  return true;
}

// 2-D tiled windows that cover the whole plane, with planes (channels-first) or images (channels-last, G = C)
// evenly spaced one plane of rows after another: all output rows form one sequence.
bool tiled_merged(const Backward& b, int64_t G) {
  const Axis &A = b.g3.axes[0], &B = b.g3.axes[1], &W = b.g3.axes[2];
  if (A.in != 1 || B.out * B.stride != B.in || W.out * W.stride != W.in) return false;
  const int64_t xr = B.stride * b.dx.s[3], yr = b.dy.s[3];
  const int64_t C = G == 1 ? b.C : 1;  // channels-last: images are the planes
  return plane_step(b.dx, b.N, C) == B.out * xr && plane_step(b.dy, b.N, C) == B.out * yr;
}

bool tiled_all_rows(const Backward& b, int64_t G) {
  const int64_t OH = b.g3.axes[1].out, total = b.N * (G == 1 ? b.C : 1) * OH;
  const int64_t xr = b.g3.axes[1].stride * b.dx.s[3], yr = b.dy.s[3];
  const int64_t chunk = std::max<int64_t>(1, 16384 / (b.g3.axes[2].out * G));  // rows of about 16K outputs
  return parallel_for((total + chunk - 1) / chunk, b.work, [&](int64_t i) {
    const int64_t r0 = i * chunk, n = std::min(chunk, total - r0);
    return tiled_rows(b, r0 * yr, r0 * xr, n, yr, xr, G, 0, r0 % OH);
  });
}

}  // namespace

// Is every saved argmax of output pixel (n, ot, oh, ow) inside its window? Whole windows need only a range
// check of the window-local form; windows cut by the edges decode each of their (up to 256) codes once and look
// the channels' codes up; the rest decode each value.
bool pixel_argmax_valid(const Backward& b, int64_t n, int64_t ot, int64_t oh, int64_t ow) {
  const AxisTable &A = b.tab.t, &B = b.tab.h, &W = b.tab.w;
  const int64_t off = b.am.offset(n, 0, ot, oh, ow);
  const char* p = b.am.at<char>(off);
  bool whole = A.first[ot] == 0 && A.last[ot] == A.axis.kernel && B.first[oh] == 0 &&
               B.last[oh] == B.axis.kernel && W.first[ow] == 0 && W.last[ow] == W.axis.kernel;
  const int64_t cells = A.axis.kernel * B.axis.kernel * W.axis.kernel;
  if (whole && b.form != IndexForm::I64) {
    return codes_below(b.form, p, b.C, cells);
  }
  if (b.form != IndexForm::I64 && cells <= 256) {
    // (codes read as unsigned: negative ones are past every window)
    bool accepts[256];
    for (int64_t v = 0; v < cells; ++v) accepts[v] = local_tap(b, v, ot, oh, ow) >= 0;
    bool ok = true;
    for (int64_t c = 0; c < b.C; ++c) {
      const uint64_t v = b.form == IndexForm::U8    ? reinterpret_cast<const uint8_t*>(p)[c]
                         : b.form == IndexForm::I16 ? uint16_t(reinterpret_cast<const int16_t*>(p)[c])
                                                    : uint32_t(reinterpret_cast<const int32_t*>(p)[c]);
      ok &= v < uint64_t(cells) && accepts[v < uint64_t(cells) ? v : 0];
    }
    return ok;
  }
  for (int64_t c = 0; c < b.C; ++c) {
    int64_t v;
    switch (b.form) {
      case IndexForm::U8: v = reinterpret_cast<const uint8_t*>(p)[c]; break;
      case IndexForm::I16: v = reinterpret_cast<const int16_t*>(p)[c]; break;
      case IndexForm::I32: v = reinterpret_cast<const int32_t*>(p)[c]; break;
      default: v = reinterpret_cast<const int64_t*>(p)[c]; break;
    }
    if (local_tap(b, v, ot, oh, ow) < 0) return false;
  }
  return true;
}

LastPlan::LastPlan(const Backward& b) : ct(b.g3.axes[0]), ch(b.g3.axes[1]), cw(b.g3.axes[2]) {
  for (int i = 0; i < 3; ++i)
    for (int64_t o = 0; o < b.g3.axes[i].out; ++o)
      divisor[i].push_back(b.is_max ? 1
                           : b.opt.divisor_override ? (i == 0 ? *b.opt.divisor_override : 1)
                                                    : b.g3.axes[i].divisor(o, b.opt.count_include_pad));
}

namespace {

// What the channels-last gather reads (see gather_last). Output row (ot, oh) of image n lies at
// v.offset(n - this->n, 0, ot - this->ot, oh - this->oh, 0): v may hold only some rows of one image.
struct QRows {
  View5 v;
  int64_t n = 0, ot = 0, oh = 0;
};

// dx row (n, t, h) from q.
void gather_row(const Backward& b, const LastPlan& p, const QRows& q, int64_t n, int64_t t, int64_t h) {
  const Covers &ct = p.ct, &ch = p.ch, &cw = p.cw;
  // The covering output rows (ot, oh); per pixel w the kernel takes their outputs ow row by row, so that the
  // terms of a pixel come in increasing output order.
  thread_local std::vector<const void*> dy, am;
  thread_local std::vector<int64_t> code;
  dy.clear(), am.clear(), code.clear();
  for_covering_rows(ct, ch, t, h, [&](int64_t ot, int64_t oh, int64_t jt, int64_t jh) {
    dy.push_back(q.v.at<char>(q.v.offset(n - q.n, 0, ot - q.ot, oh - q.oh, 0)));
    if (b.is_max) {
      am.push_back(b.am.at<char>(b.am.offset(n, 0, ot, oh, 0)));
      code.push_back(b.tab.local(jt, jh, 0));
    }
  });
  GatherJob j;
  j.channels = b.C;
  j.pixels = b.tab.w.axis.in;
  j.dx_step = b.dx.s[4];
  j.nrows = int(dy.size());
  j.row_dy = dy.data();
  j.row_am = am.data();
  j.flat_codes = b.form == IndexForm::I64;
  if (j.flat_codes) code.assign(1, b.tab.flat(t, h, 0));
  j.row_code = code.data();
  j.cover_begin = cw.begin.data(), j.cover_o = cw.o.data(), j.cover_j = cw.j.data();
  j.consecutive = !b.is_max && cw.consecutive;
  j.pairs_begin = cw.pairs_begin, j.pairs_end = cw.pairs_end;
  j.out_step = q.v.s[4];  // (the argmax has dy's strides, and q is dy for max)
  j.form = b.form;
  j.dx = b.dx.at<char>(b.dx.offset(n, 0, t, h, 0));
  // sparse terms (measured on resnet-stem / vgg / overlap-avg channels-last: stride 2 1.15x, stride 1 0.96x)
  j.prefetch = b.g3.axes[2].stride > 1;
  j.stream = b.stream_dx;
  switch (b.dtype) {
    case DType::f32: return b.is_max ? gather_max_backward_f32(j) : gather_avg_backward_f32(j);
    case DType::f64: return b.is_max ? gather_max_backward_f64(j) : gather_avg_backward_f64(j);
    case DType::bf16: return b.is_max ? gather_max_backward_bf16(j) : gather_avg_backward_bf16(j);
    default: return b.is_max ? gather_max_backward_f16(j) : gather_avg_backward_f16(j);
  }
}

}  // namespace

bool gather_last(const Backward& b, const LastPlan& p, const View5& q) {
  const int64_t T = b.tab.t.axis.in, H = b.tab.h.axis.in;
  return parallel_for(b.N * T * H, b.work, [&](int64_t i) {
    gather_row(b, p, QRows{q}, i / (T * H), (i / H) % T, i % H);
    return true;
  });
}

namespace {

// Average: each dx row gathers dy divided by each window's divisor (the same divisions and additions as the
// reference's, so the same bits). A task takes a few dx rows of one image and first divides the output rows
// they read into a small copy (rows shared with the next task are divided twice), so no divided copy of the
// whole of dy goes through memory.
bool average_last(const Backward& b, const LastPlan& p) {
  const Covers &ct = p.ct, &ch = p.ch;
  const int64_t T = b.tab.t.axis.in, H = b.tab.h.axis.in, OW = b.tab.w.axis.out, C = b.C;
  const int qsize = b.esize == 8 ? 8 : 4;  // the divided copy: float64, or float32 (16-bit types too)
  // rows per task: a divided copy of up to 512 KiB (at least 16 rows), and four tasks a thread at least (rows
  // at the tasks' seams are divided twice: 16-row tasks took overlap-avg channels-last 1.07x the time of 28)
  const int64_t most = std::max<int64_t>(16, (int64_t(512) << 10) / (OW * C * qsize * b.tab.t.axis.kernel));
  const int64_t tasks = std::max((H + most - 1) / most, (4 * num_threads() + b.N * T - 1) / (b.N * T));
  const int64_t rows = (H + std::min(H, tasks) - 1) / std::min(H, tasks), chunks = (H + rows - 1) / rows;
  // the output rows a range of input positions reads: [first, last], or none
  auto reads = [](const Covers& c, int64_t lo, int64_t hi) {
    int64_t first = INT64_MAX, last = -1;
    for (int64_t i = c.begin[lo]; i < c.begin[hi]; ++i) first = std::min(first, c.o[i]), last = std::max(last, c.o[i]);
    return std::pair{first, last};
  };
  return parallel_for(b.N * T * chunks, b.work, [&](int64_t i) {
    const int64_t n = i / (T * chunks), t = (i / chunks) % T, h0 = (i % chunks) * rows, h1 = std::min(H, h0 + rows);
    const auto [ot0, ot1] = reads(ct, t, t + 1);
    const auto [oh0, oh1] = reads(ch, h0, h1);
    QRows q{b.dy, n, std::max<int64_t>(ot0, 0), std::max<int64_t>(oh0, 0)};
    const int64_t nt = ot1 < 0 ? 0 : ot1 - q.ot + 1, nh = oh1 < 0 ? 0 : oh1 - q.oh + 1;
    thread_local std::vector<uint64_t> buf;  // 8-byte words: aligned for float and double
    buf.resize(size_t((nt * nh * OW * C * qsize + 7) / 8));
    q.v.data = reinterpret_cast<char*>(buf.data());
    q.v.esize = qsize;
    q.v.s[4] = C, q.v.s[3] = OW * C, q.v.s[2] = nh * OW * C, q.v.s[1] = 1, q.v.s[0] = 0;
    thread_local std::vector<double> d64;
    thread_local std::vector<float> d32;
    d64.resize(size_t(OW)), d32.resize(size_t(OW));
    const bool packed = b.dy.s[4] == C;  // a row of dy is OW * C values in a row
    for (int64_t ot = q.ot; ot < q.ot + nt; ++ot)
      for (int64_t oh = q.oh; oh < q.oh + nh; ++oh) {
        for (int64_t ow = 0; ow < OW; ++ow) {
          const int64_t d = p.window_divisor(ot, oh, ow);
          d64[size_t(ow)] = double(d), d32[size_t(ow)] = float(d);
        }
        for (int64_t ow = 0; ow < (packed ? 1 : OW); ++ow) {
          const char* from = b.dy.at<char>(b.dy.offset(n, 0, ot, oh, ow));
          char* to = q.v.at<char>(q.v.offset(0, 0, ot - q.ot, oh - q.oh, ow));
          const int64_t count = packed ? OW * C : C;
          float* to32 = reinterpret_cast<float*>(to);
          switch (b.dtype) {
            case DType::f32: divide_f32(from, d32.data() + ow, to32, count, C); break;
            case DType::bf16: divide_bf16(from, d32.data() + ow, to32, count, C); break;
            case DType::f16: divide_f16(from, d32.data() + ow, to32, count, C); break;
            default: divide_f64(from, d64.data() + ow, reinterpret_cast<double*>(to), count, C);
          }
        }
      }
    for (int64_t h = h0; h < h1; ++h) gather_row(b, p, q, n, t, h);
    return true;
  });
}

// pixel_argmax_valid for each pixel of output row (n, ot, oh); where the pixels' codes lie back to back (channels
// last), those whose windows are whole are one range for `below` (per pixel, the bookkeeping outweighed the check).
bool row_argmax_valid(const Backward& b, int64_t n, int64_t ot, int64_t oh) {
  const AxisTable &A = b.tab.t, &B = b.tab.h, &W = b.tab.w;
  int64_t w0 = W.axis.out, w1 = W.axis.out;  // the pixels checked as one range: [w0, w1)
  if (b.form != IndexForm::I64 && b.am.s[1] == 1 && b.am.s[4] == b.C && A.first[ot] == 0 &&
      A.last[ot] == A.axis.kernel && B.first[oh] == 0 && B.last[oh] == B.axis.kernel && W.full_end > W.full_begin)
    w0 = W.full_begin, w1 = W.full_end;
  for (int64_t ow = 0; ow < W.axis.out; ++ow) {
    if (ow == w0) {
      const char* p = b.am.at<char>(b.am.offset(n, 0, ot, oh, w0));
      const int64_t count = (w1 - w0) * b.C, cells = A.axis.kernel * B.axis.kernel * W.axis.kernel;
      if (!codes_below(b.form, p, count, cells)) return false;
      ow = w1 - 1;
      continue;
    }
    if (!pixel_argmax_valid(b, n, ot, oh, ow)) return false;
  }
  return true;
}

bool channels_last(const Backward& b) {
  const AxisTable &A = b.tab.t, &B = b.tab.h;
  const LastPlan p(b);
  if (!b.is_max) return average_last(b, p);
  bool ok = parallel_for(b.N * A.axis.out * B.axis.out, b.work, [&](int64_t i) {
    int64_t oh = i % B.axis.out, ot = (i / B.axis.out) % A.axis.out, n = i / (B.axis.out * A.axis.out);
    return row_argmax_valid(b, n, ot, oh);
  });
  return ok && gather_last(b, p, b.dy);
}

bool run_backward(bool is_max, const Geometry& g, const AvgOptions& opt, const TensorView& dy,
                  const TensorView& am, const TensorView& dx) {
  if (dx.device != Device::CPU || dx.numel() == 0 || dy.numel() == 0) return false;
  if (is_max && !am.data) return false;  // without a saved argmax: see max_pool_backward below
  if (const DepthFold d = fold_depth(g, dy, dx, am); d.ok)
    return run_backward(is_max, d.g, opt, d.v[0], d.v[2], d.v[1]);
  Geometry g3 = as3d(g);
  // 16 bits: through float32 copies, but for windows that do not tile in either layout (the row accumulation
  // and the channels-last gather read and write 16-bit rows themselves) and for the tiled rows below
  const bool half = dx.dtype == DType::bf16 || dx.dtype == DType::f16;
  // (tap rows per window bounded: tiled_rows keeps a table of them)
  const bool tiling = tiles(g3), tiled = tiling && g3.axes[0].kernel * g3.axes[1].kernel <= 4096;
  const bool own16 =
      tiled || (!tiling && (dx.is_contiguous() || (dx.is_contiguous(Layout::ChannelsLast) && dx.shape[1] > 1)));
  if (half && !own16 && half_backward(is_max, g, opt, dy, am, dx)) return true;
  if (is_max && am.dtype == DType::i64 && g.window_cells() <= (int64_t(1) << 20) &&
      (am.is_contiguous() || am.is_contiguous(Layout::ChannelsLast))) {
    // the compact form first (checked on the way): every path below is fastest on it
    const ScratchTensor local(local_argmax_dtype(g), am.shape,
                              am.is_contiguous() ? Layout::ChannelsFirst : Layout::ChannelsLast);
    if (flat_argmax_to_local(g3, am, local.view)) return run_backward(is_max, g, opt, dy, local.view, dx);
  }
  const Tables tab(g3);
  Backward b{is_max, g3, tab, View5(dy), View5(dx), View5(am), index_form(am), dx.shape[0], dx.shape[1],
             opt, dtype_size(dx.dtype), dx.numel() + dy.numel(), dx.dtype};
  // (the page check, a system call, only where the size already asks for streaming)
  b.stream_dx = past_cache(int64_t(dx.numel()) * b.esize) && !untouched_page(dx.data);
  const bool gathers = !is_max || b.am.same_strides(b.dy);
  const bool simd = (dx.dtype == DType::f32 || dx.dtype == DType::f64) && gathers;
  const bool last = b.dx.s[1] == 1 && b.dy.s[1] == 1;
  if ((simd || (half && gathers)) && tiled) {
    const bool first = b.dx.s[4] == 1 && b.dy.s[4] == 1 && !(last && b.C > 1);
    // channels-last groups of one or two channels, or of whole cache lines (each tap's vectors stored as they
    // are; each dx pixel had gathered its window's output: pool3d channels-last from the byte argmax 1.76-1.79 ->
    // 1.31 ms, vgg 5.84 -> 5.63, seed 3.70 -> 3.57, `poolkit bench`, session 23)
    const bool groups = b.C == 1 || (b.C == 2 && b.esize != 8) || b.C * b.esize % 64 == 0 ||
                        tiled_blocks(b.C, g3.axes[2].stride, b.esize == 8 ? 8 : 4);
    if (first || (last && groups && b.dx.s[4] == b.C && b.dy.s[4] == b.C)) {
      const Axis& A = g3.axes[0];
      if (const int64_t G = first ? 1 : b.C; tiled_merged(b, G)) return tiled_all_rows(b, G);
      if (first)
        return parallel_for(b.N * b.C, b.work, [&](int64_t i) {
          for (int64_t ot = 0; ot < A.out; ++ot)
            if (!tiled_plane(b, i / b.C, i % b.C, 1, ot)) return false;
          return true;
        });
      return parallel_for(b.N * A.out, b.work, [&](int64_t i) { return tiled_plane(b, i / A.out, 0, b.C, i % A.out); });
    }
  }
  if (half && tiled && half_backward(is_max, g, opt, dy, am, dx)) return true;  // layouts the tiled rows do not take
  if (stencil_fits(b)) return stencil_backward(b);
  if ((simd || (half && gathers)) && last && b.C > 1) return channels_last(b);
  if (simd && (narrow_backward(b) || blocked_backward(b))) return true;
  if (k3s2_fits(b)) return k3s2_backward(b);
  if (scatter_fits(b)) return scatter_backward(b);
  return rows_backward(b);
}

}  // namespace

bool max_pool_backward(const Geometry& g, const TensorView& dy, const TensorView& argmax, const TensorView& x,
                       const TensorView& dx) {
  if (argmax.data) return run_backward(true, g, AvgOptions{}, dy, argmax, dx);
  // No saved argmax: recompute it (window-local, the narrowest form) with the fast forward, then route as with one.
  Layout layout = x.is_contiguous(Layout::ChannelsLast) && !x.is_contiguous() ? Layout::ChannelsLast
                                                                              : Layout::ChannelsFirst;
  const ScratchTensor y(x.dtype, dy.shape, layout), am(local_argmax_dtype(g), dy.shape, layout);
  if (!cpu::max_pool_forward(g, x, y.view, am.view)) return false;
  return run_backward(true, g, AvgOptions{}, dy, am.view, dx);
}

bool avg_pool_backward(const Geometry& g, const AvgOptions& opt, const TensorView& dy, const TensorView& dx) {
  return run_backward(false, g, opt, dy, TensorView{}, dx);
}

}  // namespace poolkit::cpu
