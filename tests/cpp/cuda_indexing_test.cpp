// The CUDA kernels' index arithmetic and per-thread bodies (src/cuda/*_kernels.hpp), run on the CPU: each functor
// is called for every thread index in a plain loop over host memory and must reproduce the reference bit for bit.
// This catches indexing bugs without a GPU; tests/cuda/ runs the same kernels on the device.
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "cuda/avg_kernels.hpp"
#include "cuda/fast_kernels.hpp"
#include "cuda/max_kernels.hpp"
#include "cuda/stochastic_kernels.hpp"
#include "cuda/unpool_kernels.hpp"
#include "test_util.hpp"

namespace poolkit::test {
namespace {
using namespace poolkit::cuda::detail;

template <class F, class I>
void run_host(const F& f, I total) {
  for (I i = 0; i < total; ++i) f(i);
}

// The fast kernels' run and zero (fast_kernels.hpp) on host memory.
auto run_fast = [](const auto& f, int64_t threads) { run_host(f, int32_t(threads)); };
auto zero_fast = [](const TensorView& t) { std::memset(t.data, 0, size_t(t.numel()) * size_t(dtype_size(t.dtype))); };

// Every shape of a thread's work the fast kernels take for these tensors: the lanes channel_lanes allows, one
// channel, runs of 4 along the last axis and single cells.
template <class T>
std::vector<std::pair<int, int>> thread_shapes(std::initializer_list<const TensorView*> ts) {
  return {{channel_lanes<T>(ts), 4}, {1, 4}, {1, 1}};
}

// A tensor of NaN, so that cells a kernel leaves unwritten show.
Tensor poisoned_like(DType dt, const Shape& s, Layout layout) {
  Tensor t(dt, s, layout);
  for (int64_t k = 0; k < t.numel(); ++k) store_from_double(t.view(), k, std::nan(""));
  return t;
}

std::vector<Axis> sample_axes() {
  std::vector<Axis> axes;
  for (int64_t in : {1, 2, 5, 7, 10})
    for (int64_t k : {1, 2, 3})
      for (int64_t s : {1, 2, 3})
        for (int64_t d : {1, 2})
          for (int64_t p : {0, 1})
            for (bool ceil : {false, true}) {
              try {
                axes.push_back(torch_geometry({in}, {k}, {s}, {p}, {d}, ceil).axes[0]);
              } catch (const Error&) {
              }
            }
  for (auto [in, out] : {std::pair<int64_t, int64_t>{7, 3}, {5, 7}, {13, 7}, {6, 6}, {1, 4}})
    axes.push_back(adaptive_geometry({in}, {out}).axes[0]);
  axes.push_back(global_geometry({9}).axes[0]);
  for (double u : {0.0, 0.37, 0.99}) {
    Axis a = fractional_geometry({11}, {5}, {3}).axes[0];
    a.sample = u;
    axes.push_back(a);
  }
  return axes;
}

TEST(CudaIndexing, DecomposeWalksEachLayoutInMemoryOrder) {
  Shape s{2, 3, 4, 5, 6};
  for (Layout layout : {Layout::ChannelsFirst, Layout::ChannelsLast}) {
    TensorView t(nullptr, DType::f32, s, contiguous_strides(s, layout));
    bool cl = walks_channels_last(t);
    EXPECT_EQ(cl, layout == Layout::ChannelsLast);
    View5<float, int32_t> v = view5<float, int32_t>(t);
    std::set<std::vector<int32_t>> seen;
    for (int32_t i = 0; i < int32_t(s.numel()); ++i) {
      Idx5<int32_t> q = decompose<int32_t>(i, 3, 4, 5, 6, cl);
      ASSERT_TRUE(q.n >= 0 && q.n < 2 && q.c >= 0 && q.c < 3 && q.a >= 0 && q.a < 4 && q.b >= 0 && q.b < 5 &&
                  q.d >= 0 && q.d < 6);
      // the thread index is the memory offset: neighbouring threads touch neighbouring cells
      EXPECT_EQ(q.n * v.s[0] + q.c * v.s[1] + q.a * v.s[2] + q.b * v.s[3] + q.d * v.s[4], i);
      seen.insert({q.n, q.c, q.a, q.b, q.d});
    }
    EXPECT_EQ(seen.size(), size_t(s.numel()));
  }
  // rank 3 (1-D pooling) in channels-last pads to three spatial axes
  Shape s1{2, 4, 9};
  TensorView t1(nullptr, DType::f32, s1, contiguous_strides(s1, Layout::ChannelsLast));
  EXPECT_TRUE(walks_channels_last(t1));
  EXPECT_FALSE(walks_channels_last(TensorView(nullptr, DType::f32, Shape{2, 1, 9})));
}

TEST(CudaIndexing, TapsMatchTheAxis) {
  for (const Axis& a : sample_axes())
    for (int64_t o = 0; o < a.out; ++o) {
      Range r = a.valid_taps(o);
      Taps<int32_t> t = taps_of<int32_t>(a, int32_t(o));
      ASSERT_EQ(t.first, r.begin) << "in " << a.in << " k " << a.kernel << " s " << a.stride << " o " << o;
      ASSERT_EQ(t.last, r.end);
      if (r.end > r.begin) {
        ASSERT_EQ(t.origin, a.origin(o));
      }
      ASSERT_EQ(t.step, a.step());
    }
}

TEST(CudaIndexing, CoveringRangesMatchABruteForceScan) {
  for (const Axis& a : sample_axes())
    for (int64_t i = 0; i < a.in; ++i) {
      std::vector<int64_t> want, got;
      for (int64_t o = 0; o < a.out; ++o) {
        Range r = a.valid_taps(o);
        int64_t j = a.tap_at(o, i);
        if (j >= r.begin && j < r.end) want.push_back(o);
      }
      Cover<int64_t> c = cover_of<int64_t>(a, i);
      for (int64_t o = c.begin; o < c.end; ++o)
        if (reads<int64_t>(a, c, o, i)) got.push_back(o);
      ASSERT_EQ(got, want) << "kind " << int(a.kind) << " in " << a.in << " k " << a.kernel << " s " << a.stride
                           << " d " << a.dilation << " p " << a.pad_lo << " i " << i;
    }
}

TEST(CudaIndexing, ArgmaxCellDecodesBothFormsAndRejectsCellsOutsideTheWindow) {
  Geometry g3 = pad3(torch_geometry({7, 6}, {3}, {2}, {1}, {1}, false));
  for (int64_t o1 = 0; o1 < g3.axes[1].out; ++o1)
    for (int64_t o2 = 0; o2 < g3.axes[2].out; ++o2) {
      std::set<int64_t> inside;  // plane cells of the window, by brute force
      for (int64_t h = 0; h < 7; ++h)
        for (int64_t w = 0; w < 6; ++w)
          if (g3.axes[1].tap_at(o1, h) >= 0 && g3.axes[2].tap_at(o2, w) >= 0) inside.insert(h * 6 + w);
      for (int64_t v = -2; v < 45; ++v) {
        int64_t flat = argmax_cell<int64_t>(g3, true, v, 0, o1, o2);
        EXPECT_EQ(flat >= 0, inside.count(v) == 1) << v;
        if (flat >= 0) {
          EXPECT_EQ(flat, v);
        }
      }
      for (int64_t v = -1; v < 12; ++v) {  // local taps: 3x3 window
        int64_t flat = argmax_cell<int64_t>(g3, false, v, 0, o1, o2);
        int64_t h = g3.axes[1].position(o1, v / 3), w = g3.axes[2].position(o2, v % 3);
        bool ok = v >= 0 && v < 9 && h >= 0 && h < 7 && w >= 0 && w < 6;
        EXPECT_EQ(flat >= 0, ok) << v;
        if (ok) {
          EXPECT_EQ(flat, h * 6 + w);
        }
      }
    }
}

TEST(CudaIndexing, TiledPathEligibility) {
  Shape xs{4, 2, 8, 16}, ys{4, 2, 4, 8};
  Tensor x(DType::f32, xs), y(DType::f32, ys);
  Geometry g = pad3(torch_geometry({8, 16}, {2}, {2}, {0}, {1}, false));
  EXPECT_TRUE(tiled2_eligible(g, x, y, 4));
  EXPECT_TRUE(tiled2_eligible(g, x, y, 2));  // 8 outputs a row: one 16-byte vector of 16-bit values
  Geometry narrow = pad3(torch_geometry({8, 8}, {2}, {2}, {0}, {1}, false));  // 4 outputs a row
  Tensor xn(DType::f32, Shape{4, 2, 8, 8}), yn(DType::f32, Shape{4, 2, 4, 4});
  EXPECT_TRUE(tiled2_eligible(narrow, xn, yn, 4));
  EXPECT_FALSE(tiled2_eligible(narrow, xn, yn, 2));
  Tensor xc(DType::f32, xs, Layout::ChannelsLast);
  EXPECT_FALSE(tiled2_eligible(g, xc, y, 4));
  Geometry g3 = pad3(torch_geometry({8, 16}, {3}, {2}, {1}, {1}, false));
  EXPECT_FALSE(tiled2_eligible(g3, x, Tensor(DType::f32, Shape{4, 2, 4, 8}), 4));
  TensorView misaligned(static_cast<float*>(x.view().data) + 1, DType::f32, xs);
  EXPECT_FALSE(tiled2_eligible(g, misaligned, y, 4));
  Geometry odd = pad3(torch_geometry({8, 10}, {2}, {2}, {0}, {1}, false));  // 5 outputs a row
  EXPECT_FALSE(tiled2_eligible(odd, Tensor(DType::f32, Shape{4, 2, 8, 10}), Tensor(DType::f32, Shape{4, 2, 4, 5}), 4));
}

TEST(CudaIndexing, Int32OnlyWhenEveryOffsetFits) {
  Shape small{2, 3, 4, 4};
  TensorView a(nullptr, DType::f32, small);
  const TensorView* ts[] = {&a};
  EXPECT_TRUE(fits_int32(a.numel(), ts, 1));
  TensorView wide(nullptr, DType::f32, small, Strides{int64_t(1) << 30, 1, 1, 1});
  const TensorView* tw[] = {&wide};
  EXPECT_FALSE(fits_int32(a.numel(), tw, 1));
  EXPECT_FALSE(fits_int32(int64_t(1) << 31, ts, 1));
}

// ---- Per-thread bodies against the reference ----

struct Case {
  Shape xs;
  Geometry g;
};

std::vector<Case> cases() {
  return {
      {{2, 3, 7, 6}, torch_geometry({7, 6}, {3}, {2}, {1}, {1}, false)},
      {{2, 3, 7, 6}, torch_geometry({7, 6}, {2, 3}, {2, 1}, {1, 1}, {2, 1}, true)},
      {{1, 2, 5, 6, 5}, torch_geometry({5, 6, 5}, {2}, {1}, {0}, {1}, false)},
      {{2, 2, 11}, torch_geometry({11}, {3}, {2}, {1}, {1}, true)},
      {{2, 3, 7, 6}, keras_geometry({7, 6}, {2}, {2}, "same")},
      {{2, 3, 7, 6}, adaptive_geometry({7, 6}, {3, 4})},
      {{1, 2, 5, 6, 5}, adaptive_geometry({5, 6, 5}, {7, 4, 3})},
      {{2, 3, 7, 6}, global_geometry({7, 6})},
      {{2, 3, 4, 16}, torch_geometry({4, 16}, {2}, {2}, {0}, {1}, false)},  // tiled in f32
      {{2, 2, 9}, torch_geometry({9}, {4}, {3}, {2}, {1}, false)},
      {{2, 8, 7, 6}, torch_geometry({7, 6}, {3}, {2}, {1}, {1}, false)},  // 8 channels: 16-byte lanes
      {{1, 8, 6, 6}, adaptive_geometry({6, 6}, {4, 3})},
      {{2, 4, 9, 8}, torch_geometry({9, 8}, {3, 2}, {1, 3}, {1, 0}, {2, 1}, true)},
      {{2, 4, 7, 8}, torch_geometry({7, 8}, {2, 1}, {3, 2}, {0, 0}, {1, 1}, false)},  // disjoint windows, gaps
      {{1, 2, 5, 7, 5}, torch_geometry({5, 7, 5}, {2}, {2}, {0}, {1}, false)},        // the last cells in no window
  };
}

template <class T, class I>
void check_max(const Case& k, Layout layout, DType am_type, const TensorView* samples = nullptr) {
  Geometry g3 = pad3(k.g);
  Shape ys = out_shape(k.g, k.xs);
  Tensor x = copy(distinct_tensor(dtype_of<T>(), k.xs, 7), layout);
  Tensor y(dtype_of<T>(), ys, layout), am(am_type, ys, layout), y_ref(dtype_of<T>(), ys), am_ref(am_type, ys);
  std::vector<double> planes;  // fractional samples per plane, three-axis order
  if (samples) {
    for (int64_t n = 0; n < k.xs[0]; ++n)
      for (int64_t c = 0; c < k.xs[1]; ++c)
        for (int i = 0; i < 3; ++i) {
          int r = i - (3 - k.g.rank);
          int64_t s = k.g.rank == 2 ? 1 - r : r;
          planes.push_back(r < 0 ? 0 : load_as_double(*samples, (n * k.xs[1] + c) * k.g.rank + s));
        }
    ref::fractional_max_pool_forward(k.g, *samples, x, y_ref, am_ref);
  } else {
    ref::max_pool_forward(k.g, x, y_ref, am_ref);
  }
  const TensorView* ts[] = {&x.view(), &y.view(), &am.view()};
  ASSERT_EQ(fits_int32(y.numel(), ts, 3), true);
  if (!samples && tiled2_eligible(g3, x, y, sizeof(T))) {
    constexpr int V = Vec16<T>::n;
    MaxForwardTiled2<T, I> f{g3, x.data<const T>(), y.data<T>(), argmax_view(am), I(g3.axes[2].out / V)};
    run_host(f, I(y.numel() / V));
  } else {
    MaxForward<T, I> f;
    f.g = g3;
    f.samples = samples ? planes.data() : nullptr;
    f.x = view5<const T, I>(x);
    f.y = view5<T, I>(y);
    f.argmax = argmax_view(am);
    f.C = I(k.xs[1]);
    copy3(f.O, spatial3(y));
    f.channels_last = walks_channels_last(y);
    run_host(f, I(y.numel()));
  }
  EXPECT_TRUE(bits_equal(y, y_ref));
  EXPECT_TRUE(bits_equal(am, am_ref));
  const bool fast = !samples && fast_axes_eligible(g3);
  if (fast)
    for (auto [lanes, len] : thread_shapes<T>({&x.view(), &y.view()})) {
      Tensor y2 = poisoned_like(dtype_of<T>(), ys, layout), am2(am_type, ys, layout);
      fast_max_forward<T>(g3, x, y2, am2, lanes, len, run_fast);
      EXPECT_TRUE(bits_equal(y2, y_ref)) << "fast, lanes " << lanes << " run " << len;
      EXPECT_TRUE(bits_equal(am2, am_ref)) << "fast, lanes " << lanes << " run " << len;
    }

  // backward with the saved argmax, and recomputed from x
  Tensor dy = copy(uniform_tensor(dtype_of<T>(), ys, 3), layout);
  for (bool saved : {true, false}) {
    Tensor dx(dtype_of<T>(), k.xs, layout), dx_ref(dtype_of<T>(), k.xs);
    if (samples)
      ref::fractional_max_pool_backward(k.g, *samples, dy, saved ? am.view() : TensorView{}, x, dx_ref);
    else
      ref::max_pool_backward(k.g, dy, saved ? am.view() : TensorView{}, x, dx_ref);
    int error = 0;
    MaxBackward<T, I> b;
    b.g = g3;
    b.samples = samples ? planes.data() : nullptr;
    b.dy = view5<const T, I>(dy);
    b.x = view5<const T, I>(x);
    b.dx = view5<T, I>(dx);
    b.argmax = saved ? argmax_view(am) : ArgmaxView{};
    b.error = &error;
    b.C = I(k.xs[1]);
    copy3(b.In, spatial3(dx));
    b.channels_last = walks_channels_last(dx);
    run_host(b, I(dx.numel()));
    EXPECT_TRUE(bits_equal(dx, dx_ref)) << "saved " << saved;
    EXPECT_EQ(error, 0);
    if (fast && saved)
      for (bool scatter : {false, true}) {
        if (scatter && !scatters(g3, dx)) continue;
        for (auto [lanes, len] : thread_shapes<T>({&dy.view(), &dx.view()})) {
          Tensor dx2 = poisoned_like(dtype_of<T>(), k.xs, layout);
          fast_max_backward<T>(g3, dy, am, dx2, &error, lanes, len, scatter, run_fast, zero_fast);
          EXPECT_TRUE(bits_equal(dx2, dx_ref)) << "fast, lanes " << lanes << " run " << len << " scatter " << scatter;
          EXPECT_EQ(error, 0);
        }
      }
  }
}

template <class T, class I>
void check_max_all(DType am_type) {
  for (const Case& k : cases())
    for (Layout layout : {Layout::ChannelsFirst, Layout::ChannelsLast}) {
      SCOPED_TRACE(k.xs.str() + (layout == Layout::ChannelsLast ? " channels-last" : ""));
      check_max<T, I>(k, layout, am_type);
    }
}

TEST(CudaKernelsOnHost, MaxFamilyMatchesTheReference) {
  check_max_all<float, int32_t>(DType::i64);
  check_max_all<float, int64_t>(DType::u8);
  check_max_all<bfloat16, int32_t>(DType::i16);
  check_max_all<double, int32_t>(DType::i32);
  check_max_all<float16, int64_t>(DType::i64);
}

TEST(CudaKernelsOnHost, FractionalMaxMatchesTheReference) {
  for (int rank : {1, 2, 3}) {
    Shape xs = rank == 1 ? Shape{2, 2, 11} : rank == 2 ? Shape{2, 3, 7, 6} : Shape{1, 2, 5, 6, 5};
    std::vector<int64_t> in(xs.dims.begin() + 2, xs.dims.begin() + 2 + rank), out, kern(size_t(rank), 2);
    for (int64_t v : in) out.push_back(v - 2);
    Tensor s(DType::f64, Shape{xs[0], xs[1], rank});
    fractional_samples(42, s);
    Case k{xs, fractional_geometry(in, out, kern, rank != 2)};
    check_max<float, int32_t>(k, Layout::ChannelsFirst, DType::i64, &s.view());
    check_max<bfloat16, int64_t>(k, Layout::ChannelsLast, DType::u8, &s.view());
  }
}

TEST(CudaKernelsOnHost, BadSavedArgmaxRaisesTheErrorFlag) {
  Case k = cases()[0];
  Geometry g3 = pad3(k.g);
  Shape ys = out_shape(k.g, k.xs);
  Tensor dy = uniform_tensor(DType::f32, ys, 1), dx(DType::f32, k.xs), am = filled(DType::u8, ys, 4);
  static_cast<uint8_t*>(am.view().data)[5] = 9;  // a 3x3 window has taps 0..8
  int error = 0;
  MaxBackward<float, int32_t> b;
  b.g = g3;
  b.dy = view5<const float, int32_t>(dy);
  b.dx = view5<float, int32_t>(dx);
  b.argmax = argmax_view(am);
  b.error = &error;
  b.C = int32_t(k.xs[1]);
  copy3(b.In, spatial3(dx));
  b.channels_last = false;
  run_host(b, int32_t(dx.numel()));
  EXPECT_EQ(error, 1);
  // The fast backward: the forward's argmax is accepted; a local tap past the window, or window 5's plane-flat
  // value set to cell (0, 0) (its window is rows 1-3, columns 3-5), raises the flag.
  Tensor x = uniform_tensor(DType::f32, k.xs, 2), y(DType::f32, ys);
  for (DType form : {DType::u8, DType::i64})
    for (bool corrupt : {false, true}) {
      Tensor saved(form, ys);
      ref::max_pool_forward(k.g, x, y, saved);
      if (corrupt && form == DType::u8) static_cast<uint8_t*>(saved.view().data)[5] = 9;
      if (corrupt && form == DType::i64) static_cast<int64_t*>(saved.view().data)[5] = 0;
      for (bool scatter : {false, true}) {  // the geometry overlaps: the scatter is forced here (checks only)
        error = 0;
        fast_max_backward<float>(g3, dy, saved, dx, &error, 1, 1, scatter, run_fast, zero_fast);
        EXPECT_EQ(error, corrupt ? 1 : 0) << dtype_name(form) << " scatter " << scatter;
      }
    }
}

TEST(CudaIndexing, FastDivisionMatchesIntegerDivision) {
  std::mt19937_64 rng(11);
  std::vector<int64_t> divisors = {1, 2, 3, 5, 7, 49, 112, 641, 1000, 65535, 65536, 65537, (1 << 30) - 1, 1 << 30,
                                   (int64_t(1) << 31) - 1};
  for (int k = 0; k < 200; ++k) divisors.push_back(int64_t(rng() % ((uint64_t(1) << 31) - 1)) + 1);
  for (int k = 0; k < 200; ++k) divisors.push_back(int64_t(rng() % 5000) + 1);
  for (int64_t d : divisors) {
    FastDiv f(d);
    std::vector<int64_t> ns = {0, 1, d - 1, d, d + 1, 2 * d - 1, 2 * d, (int64_t(1) << 31) - 1, (int64_t(1) << 31) - 2};
    for (int k = 0; k < 300; ++k) ns.push_back(int64_t(rng() % (uint64_t(1) << 31)));
    for (int k = 0; k < 100; ++k) ns.push_back(int64_t(rng() % 100000));
    for (int64_t n : ns) {
      if (n < 0 || n >= (int64_t(1) << 31)) continue;
      ASSERT_EQ(f.div(int32_t(n)), n / d) << n << " / " << d;
    }
  }
}

TEST(CudaIndexing, FastAxesMatchTheAxis) {
  for (const Axis& a : sample_axes()) {
    if (a.kind == AxisKind::Fractional) continue;
    FastAxis f = fast_axis(a);
    for (int64_t o = 0; o < a.out; ++o) {
      Taps<int32_t> want = taps_of<int32_t>(a, int32_t(o)), got = f.taps(int32_t(o));
      ASSERT_EQ(got.first, want.first) << "kind " << int(a.kind) << " in " << a.in << " k " << a.kernel << " o " << o;
      ASSERT_EQ(got.last, want.last);
      ASSERT_EQ(got.step, want.step);
      if (want.last > want.first) {
        ASSERT_EQ(got.origin, want.origin);
      }
      for (bool pad : {false, true}) ASSERT_EQ(f.divisor(got, pad), a.divisor(o, pad));
      for (int64_t i = -2; i < a.in + 2; ++i) {
        int64_t j = a.tap_at(o, i);
        bool inside = i >= 0 && i < a.in && j >= want.first && j < want.last;
        ASSERT_EQ(f.tap_of(got, int32_t(i)), inside ? j : -1) << "o " << o << " i " << i;
      }
    }
    for (int64_t i = 0; i < a.in; ++i) {
      std::vector<int64_t> want, got;
      for (int64_t o = 0; o < a.out; ++o)
        if (f.tap_of(f.taps(int32_t(o)), int32_t(i)) >= 0) want.push_back(o);
      Cover<int32_t> c = f.cover(int32_t(i));
      for (int32_t o = c.begin; o < c.end; ++o)
        if (f.tap_of(f.taps(o), int32_t(i)) >= 0) got.push_back(o);
      ASSERT_EQ(got, want) << "kind " << int(a.kind) << " in " << a.in << " i " << i;
    }
  }
}

template <class T, class I>
void check_avg(const Case& k, Layout layout, AvgOptions opt) {
  Geometry g3 = pad3(k.g);
  Shape ys = out_shape(k.g, k.xs);
  Tensor x = copy(uniform_tensor(dtype_of<T>(), k.xs, 9), layout);
  Tensor y(dtype_of<T>(), ys, layout), y_ref(dtype_of<T>(), ys);
  ref::avg_pool_forward(k.g, opt, x, y_ref);
  if (tiled2_eligible(g3, x, y, sizeof(T))) {
    constexpr int V = Vec16<T>::n;
    AvgForwardTiled2<T, I> f{g3, avg_params(opt), x.data<const T>(), y.data<T>(), I(g3.axes[2].out / V)};
    run_host(f, I(y.numel() / V));
  } else {
    AvgForward<T, I> f;
    f.g = g3;
    f.opt = avg_params(opt);
    f.x = view5<const T, I>(x);
    f.y = view5<T, I>(y);
    f.C = I(k.xs[1]);
    copy3(f.O, spatial3(y));
    f.channels_last = walks_channels_last(y);
    run_host(f, I(y.numel()));
  }
  EXPECT_TRUE(bits_equal(y, y_ref));
  const bool fast = fast_axes_eligible(g3) && std::is_same_v<I, int32_t>;
  if (fast)
    for (auto [lanes, len] : thread_shapes<T>({&x.view(), &y.view()})) {
      Tensor y2 = poisoned_like(dtype_of<T>(), ys, layout);
      fast_avg_forward<T>(g3, opt, x, y2, lanes, len, run_fast);
      EXPECT_TRUE(bits_equal(y2, y_ref)) << "fast, lanes " << lanes << " run " << len;
    }
  // dy in the other layout: autograd hands over a contiguous dy whatever the input's layout
  Tensor dy = copy(uniform_tensor(dtype_of<T>(), ys, 4),
                   layout == Layout::ChannelsLast ? Layout::ChannelsFirst : Layout::ChannelsLast);
  Tensor dx(dtype_of<T>(), k.xs, layout), dx_ref(dtype_of<T>(), k.xs);
  ref::avg_pool_backward(k.g, opt, dy, dx_ref);
  AvgBackward<T, I> b;
  b.g = g3;
  b.opt = avg_params(opt);
  b.dy = view5<const T, I>(dy);
  b.dx = view5<T, I>(dx);
  b.C = I(k.xs[1]);
  copy3(b.In, spatial3(dx));
  b.channels_last = walks_channels_last(dx);
  run_host(b, I(dx.numel()));
  EXPECT_TRUE(bits_equal(dx, dx_ref));
  if (fast)
    for (Layout dy_layout : {Layout::ChannelsFirst, Layout::ChannelsLast})  // and dy in the same layout: lanes
      for (bool scatter : {false, true}) {
        Tensor dyl = copy(dy, dy_layout), dx2 = poisoned_like(dtype_of<T>(), k.xs, layout);
        if (scatter && !scatters(g3, dx2)) continue;
        for (auto [lanes, len] : thread_shapes<T>({&dyl.view(), &dx2.view()})) {
          dx2 = poisoned_like(dtype_of<T>(), k.xs, layout);
          fast_avg_backward<T>(g3, opt, dyl, dx2, lanes, len, scatter, run_fast, zero_fast);
          EXPECT_TRUE(bits_equal(dx2, dx_ref)) << "fast, lanes " << lanes << " run " << len << " scatter " << scatter;
        }
      }
}

TEST(CudaKernelsOnHost, AverageMatchesTheReference) {
  for (const Case& k : cases())
    for (Layout layout : {Layout::ChannelsFirst, Layout::ChannelsLast})
      for (AvgOptions opt : {AvgOptions{}, AvgOptions{false, {}}, AvgOptions{true, 3}}) {
        SCOPED_TRACE(k.xs.str());
        check_avg<float, int32_t>(k, layout, opt);
        check_avg<bfloat16, int64_t>(k, layout, opt);
        check_avg<double, int32_t>(k, layout, opt);
      }
}

TEST(CudaKernelsOnHost, LpMixedAndStochasticMatchTheReference) {
  using T = float;
  using I = int32_t;
  for (const Case& k : cases()) {
    if (k.g.axes[0].kind != AxisKind::Regular) continue;
    SCOPED_TRACE(k.xs.str());
    Geometry g3 = pad3(k.g);
    Shape ys = out_shape(k.g, k.xs);
    Tensor x = copy(uniform_tensor(DType::f32, k.xs, 5, 0.1, 2), Layout::ChannelsLast);
    Tensor dy = uniform_tensor(DType::f32, ys, 6);
    Tensor y(DType::f32, ys), y_ref(DType::f32, ys), dx(DType::f32, k.xs), dx_ref(DType::f32, k.xs);
    auto fill = [&](auto& f, bool backward) {
      f.C = I(k.xs[1]);
      f.channels_last = backward ? walks_channels_last(dx) : walks_channels_last(y);
    };
    for (LpOptions opt : {LpOptions{2, LpConvention::Torch}, LpOptions{1.5, LpConvention::Onnx}}) {
      ref::lp_pool_forward(k.g, opt, x, y_ref);
      LpForward<T, I> f{g3, opt.p, opt.convention == LpConvention::Onnx, view5<const T, I>(x), view5<T, I>(y)};
      fill(f, false);
      copy3(f.O, spatial3(y));
      run_host(f, I(y.numel()));
      EXPECT_TRUE(bits_equal(y, y_ref));
      ref::lp_pool_backward(k.g, opt, dy, x, dx_ref);
      LpBackward<T, I> b{g3, opt.p, opt.convention == LpConvention::Onnx, view5<const T, I>(dy),
                         view5<const T, I>(x), view5<T, I>(dx)};
      fill(b, true);
      copy3(b.In, spatial3(dx));
      run_host(b, I(dx.numel()));
      EXPECT_TRUE(bits_equal(dx, dx_ref));
    }
    MixedOptions mo{0.3, AvgOptions{false, {}}};
    ref::mixed_pool_forward(k.g, mo, x, y_ref);
    MixedForward<T, I> mf{g3, avg_params(mo.avg), mo.lambda, view5<const T, I>(x), view5<T, I>(y)};
    fill(mf, false);
    copy3(mf.O, spatial3(y));
    run_host(mf, I(y.numel()));
    EXPECT_TRUE(bits_equal(y, y_ref));
    double dl_ref = 0;
    ref::mixed_pool_backward(k.g, mo, dy, x, dx_ref, &dl_ref);
    MixedBackward<T, I> mb{g3, avg_params(mo.avg), mo.lambda, view5<const T, I>(dy), view5<const T, I>(x),
                           view5<T, I>(dx)};
    fill(mb, true);
    copy3(mb.In, spatial3(dx));
    run_host(mb, I(dx.numel()));
    EXPECT_TRUE(bits_equal(dx, dx_ref));
    std::vector<double> terms(size_t(y.numel()));
    MixedLambdaTerms<T, I> mt{g3, avg_params(mo.avg), view5<const T, I>(dy), view5<const T, I>(x), terms.data()};
    mt.C = I(k.xs[1]);
    copy3(mt.O, spatial3(y));
    run_host(mt, I(y.numel()));
    double dl = 0;
    for (double v : terms) dl += v;
    EXPECT_EQ(dl, dl_ref);
    for (bool training : {true, false}) {
      StochasticOptions so{training, 1234};
      ref::stochastic_pool_forward(k.g, so, x, y_ref);
      StochasticForward<T, I> sf{g3, training, so.seed, view5<const T, I>(x), view5<T, I>(y)};
      fill(sf, false);
      copy3(sf.O, spatial3(y));
      run_host(sf, I(y.numel()));
      EXPECT_TRUE(bits_equal(y, y_ref)) << "training " << training;
      ref::stochastic_pool_backward(k.g, so, dy, x, dx_ref);
      StochasticBackward<T, I> sb{g3, training, so.seed, view5<const T, I>(dy), view5<const T, I>(x),
                                  view5<T, I>(dx)};
      fill(sb, true);
      copy3(sb.In, spatial3(dx));
      run_host(sb, I(dx.numel()));
      EXPECT_TRUE(bits_equal(dx, dx_ref)) << "training " << training;
    }
  }
}

TEST(CudaKernelsOnHost, UnpoolLastInputWinsAndBadIndicesRaise) {
  using I = int64_t;
  Shape xs{2, 3, 4, 3}, big{2, 3, 8, 6};
  Tensor x = uniform_tensor(DType::f32, xs, 2), idx(DType::i64, xs);
  // random indices with many duplicates, so the order rule matters
  std::mt19937_64 rng(3);
  for (int64_t k = 0; k < idx.numel(); ++k) idx.data<int64_t>()[k] = int64_t(rng() % 20);
  for (Layout layout : {Layout::ChannelsFirst, Layout::ChannelsLast}) {
    Tensor xl = copy(x, layout), il = copy(idx, layout);
    Tensor y(DType::f32, big, layout), y_ref(DType::f32, big);
    ref::max_unpool_forward(x, idx, y_ref);
    std::vector<I> winner(size_t(y.numel()), -1);
    int error = 0;
    UnpoolWinners<I> w{view5<const int64_t, I>(il), winner.data(), &error, 3, {1, 4, 3}, 48, walks_channels_last(xl)};
    run_host(w, I(x.numel()));
    EXPECT_EQ(error, 0);
    UnpoolGather<float, I> f{view5<const float, I>(xl), view5<float, I>(y), winner.data(), 3, {1, 4, 3}, {1, 8, 6},
                             walks_channels_last(y)};
    run_host(f, I(y.numel()));
    EXPECT_TRUE(bits_equal(y, y_ref));
    Tensor dy = uniform_tensor(DType::f32, big, 8), dx(DType::f32, xs, layout), dx_ref(DType::f32, xs);
    ref::max_unpool_backward(dy, idx, dx_ref);
    UnpoolBackward<float, I> b{view5<const float, I>(dy), view5<const int64_t, I>(il), view5<float, I>(dx), &error, 3,
                               {1, 4, 3}, {1, 8, 6}, walks_channels_last(dx)};
    run_host(b, I(dx.numel()));
    EXPECT_TRUE(bits_equal(dx, dx_ref));
    EXPECT_EQ(error, 0);
  }
  idx.data<int64_t>()[7] = 48;
  std::vector<I> winner(size_t(Shape(big).numel()), -1);
  int error = 0;
  UnpoolWinners<I> w{view5<const int64_t, I>(idx), winner.data(), &error, 3, {1, 4, 3}, 48, false};
  run_host(w, I(x.numel()));
  EXPECT_EQ(error, 1);
}

}  // namespace
}  // namespace poolkit::test
