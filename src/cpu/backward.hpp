#pragma once
// What the backward drivers share: the request seen as (N, C, T, H, W) views and per-axis tables, and the
// outputs covering each input position of an axis.
#include <vector>

#include "common.hpp"
#include "poolkit/options.hpp"

namespace poolkit::cpu {

struct Backward {
  bool is_max;
  Geometry g3;
  const Tables& tab;
  View5 dy, dx, am;
  IndexForm form;
  int64_t N, C;
  AvgOptions opt;
  int esize;
  int64_t work;  // elements read and written
  DType dtype;

  // dx past the cache, its pages already written: its stores go past the cache (set once by run_backward; into
  // fresh pages streaming stores ran slower than ordinary ones: vgg's NCHW backward into new outputs 1.33x,
  // bench/fresh_page_stores.cpp)
  bool stream_dx = false;
  int64_t divisor(int64_t a, int64_t b, int64_t d) const {
    if (opt.divisor_override) return *opt.divisor_override;
    bool inc = opt.count_include_pad;
    return g3.axes[0].divisor(a, inc) * g3.axes[1].divisor(b, inc) * g3.axes[2].divisor(d, inc);
  }
};

// Per input position of one axis: the outputs whose windows read it, with the tap, in increasing output order.
struct Covers {
  std::vector<int64_t> begin;       // per input position, into o / j
  std::vector<int64_t> o, j;
  bool consecutive = true;          // every position's outputs follow one another (stride 1, adaptive bins)
  // Positions [pairs_begin, pairs_end) in pairs (3-wide windows at stride 2): the first read by one output at its
  // tap 1, the second by that output at tap 2 and the next at tap 0; the next pair's first by that next output.
  int64_t pairs_begin = 0, pairs_end = 0;
  explicit Covers(const Axis& a) {
    for (int64_t i = 0; i < a.in; ++i) {
      begin.push_back(int64_t(o.size()));
      Range r = a.covering(i);
      for (int64_t out = r.begin; out < r.end; ++out) {
        int64_t tap = a.tap_at(out, i);
        if (tap < 0) continue;
        consecutive = consecutive && (int64_t(o.size()) == begin.back() || o.back() + 1 == out);
        o.push_back(out), j.push_back(tap);
      }
    }
    begin.push_back(int64_t(o.size()));
    find_pairs(a.in);
  }

 private:
  void find_pairs(int64_t in) {
    auto one = [&](int64_t i, int64_t out, int64_t tap) {  // position i read by `out` at `tap` alone
      return begin[i + 1] - begin[i] == 1 && o[begin[i]] == out && j[begin[i]] == tap;
    };
    for (int64_t i = 0; i < in && pairs_end == 0; ++i) {
      if (begin[i + 1] - begin[i] != 1 || j[begin[i]] != 1) continue;
      int64_t e = i;
      for (int64_t out = o[begin[i]]; e + 1 < in && one(e, out, 1) && begin[e + 2] - begin[e + 1] == 2 &&
                                       o[begin[e + 1]] == out && j[begin[e + 1]] == 2 &&
                                       o[begin[e + 1] + 1] == out + 1 && j[begin[e + 1] + 1] == 0;
           ++out)
        e += 2;
      if (e > i) pairs_begin = i, pairs_end = e;
    }
  }
};

// The output rows (ot, oh) whose windows read input row (t, h), in increasing order: f(ot, oh, jt, jh) with the
// taps (jt, jh) at which they read it.
template <class F>
void for_covering_rows(const Covers& ct, const Covers& ch, int64_t t, int64_t h, F&& f) {
  for (int64_t x0 = ct.begin[size_t(t)]; x0 < ct.begin[size_t(t) + 1]; ++x0)
    for (int64_t x1 = ch.begin[size_t(h)]; x1 < ch.begin[size_t(h) + 1]; ++x1)
      f(ct.o[size_t(x0)], ch.o[size_t(x1)], ct.j[size_t(x0)], ch.j[size_t(x1)]);
}

// The window-local tap id a saved argmax v (in b.form) of output (ot, oh, ow) names, or -1 when it is not a
// cell of that window.
int64_t local_tap(const Backward& b, int64_t v, int64_t ot, int64_t oh, int64_t ow);

// Channels-last backward (float32/float64, C > 1), set up once: each input pixel gathers its covering outputs.
struct LastPlan {
  Covers ct, ch, cw;
  std::vector<int64_t> divisor[3];  // average: per axis and output (the product is the window's divisor)
  explicit LastPlan(const Backward& b);
  int64_t window_divisor(int64_t ot, int64_t oh, int64_t ow) const {
    return divisor[0][size_t(ot)] * divisor[1][size_t(oh)] * divisor[2][size_t(ow)];
  }
};
// Is every saved argmax of output pixel (n, ot, oh, ow) inside its window?
bool pixel_argmax_valid(const Backward& b, int64_t n, int64_t ot, int64_t oh, int64_t ow);
// dx from q: dy itself for max (argmax checked before), dy divided by each window's divisor for average; q is
// channels-last like dy.
bool gather_last(const Backward& b, const LastPlan& p, const View5& q);

// Average, float32, channels-first planes whose rows fit one vector: a dx row per vector.
bool narrow_backward(const Backward& b);

// Small channels-first planes with narrow or irregular windows, as channels-last blocks of planes.
bool blocked_backward(const Backward& b);

// Max from a window-local argmax (U8, I16, I32), channels-first, any strides, any float type: each output's
// gradient added at its argmax cell. scatter_fits: the forms and sizes it takes. Returns false when a saved
// argmax names a cell outside its window.
bool scatter_fits(const Backward& b);
bool scatter_backward(const Backward& b);

// Average, 3x3 windows of stride 1 and padding 1, rows over 16 wide (narrower ones: narrow_backward), float32 /
// float64: channels-first planes of packed rows, or channels-last images of whole cache lines of channels
// (backward_stencil.cpp).
bool stencil_fits(const Backward& b);
bool stencil_backward(const Backward& b);

// Max from a one-byte window-local argmax, channels-first 2-D planes with W contiguous, any float type, for 3x3
// windows of stride 2 (padding 0 or 1): two dx rows from each pair of output rows. Returns false when a saved
// argmax names a cell outside its window.
bool k3s2_fits(const Backward& b);
bool k3s2_backward(const Backward& b);

// Channels-first (any strides, any float type) backward of windows that overlap, leave gaps or vary in size:
// per plane, dx rows accumulate their covering output rows, vectorised along W. Returns false when a saved
// argmax names a cell outside its window.
bool rows_backward(const Backward& b);

}  // namespace poolkit::cpu
