// The fast CPU path (src/cpu) against the reference, on random geometries swept around vector widths (W up to
// 2 * 16 + 3 covers AVX-512's float lanes) and the tiled path: both layouts, padding, ceil mode, dilation,
// row-sliced and strided views, all four float types, ties, NaN and -inf. Outputs are poisoned before each run; results must match bit for bit.
#include <gtest/gtest.h>

#include <cmath>

#include <cstring>
#include <random>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "backends.hpp"
#include "cpu/argmax_local.hpp"
#include "cpu/common.hpp"
#include "cpu/cpu_features.hpp"
#include "test_util.hpp"

namespace poolkit::test {
namespace {

struct Case {
  std::vector<int64_t> in, kernel, stride, pad, dilation;
  bool ceil = false;
  int64_t N = 1, C = 1;
  Layout layout = Layout::ChannelsFirst;
  bool slice = false;   // a view of a larger tensor (extra rows and planes)
  bool spread = false;  // every axis strided by 2
  DType dt = DType::f32;
};

// Values with many ties, some NaN and -inf.
void fill(const TensorView& t, std::mt19937_64& rng, bool specials) {
  std::uniform_int_distribution<int> v(-4, 4), p(0, 60);
  for_each_index(t.shape, [&](const int64_t* i) {
    int r = p(rng);
    double x = v(rng) * 0.5;
    if (specials && r == 0) x = std::nan("");
    if (specials && r == 1) x = -INFINITY;
    if (r == 2) x = -0.0;
    set(t, i, x);
  });
}

// A tensor (optionally a view into a bigger one), poisoned with NaN / 0xA5 bytes.
struct Buf {
  Tensor storage;
  TensorView view;
};
Buf make(DType dt, const Shape& s, Layout layout, bool slice, bool spread = false) {
  Shape big = s;
  if (slice) big[0] += 1, big[s.rank - 2 >= 2 ? s.rank - 2 : 1] += 2;
  if (spread)
    for (int i = 0; i < big.rank; ++i) big[i] *= 2;
  Buf b{Tensor(dt, big, layout), {}};
  std::memset(b.storage.view().data, 0xA5, size_t(big.numel() * dtype_size(dt)));
  Strides st = b.storage.view().strides;
  if (spread)
    for (int i = 0; i < st.rank; ++i) st[i] *= 2;
  b.view = TensorView(b.storage.view().data, dt, s, st);
  return b;
}
// A channels-first tensor whose spatial axes lie in memory in reverse order (W slowest), poisoned.
Buf make_reversed(DType dt, const Shape& s) {
  Shape mem = s;
  const int r = s.rank;
  for (int i = 2; i < r; ++i) mem[i] = s[r + 1 - i];
  Buf b{Tensor(dt, mem), {}};
  std::memset(b.storage.view().data, 0xA5, size_t(mem.numel() * dtype_size(dt)));
  Strides st = b.storage.view().strides, view_st = st;
  for (int i = 2; i < r; ++i) view_st[i] = st[r + 1 - i];
  b.view = TensorView(b.storage.view().data, dt, s, view_st);
  return b;
}

bool same_bits(const Buf& a, const Buf& b) {
  return std::memcmp(a.storage.view().data, b.storage.view().data,
                     size_t(a.storage.numel() * dtype_size(a.storage.dtype()))) == 0;
}

Shape shape_of(const Case& k, const std::vector<int64_t>& sp) {
  std::vector<int64_t> d{k.N, k.C};
  d.insert(d.end(), sp.begin(), sp.end());
  return Shape(d);
}

Case random_case(std::mt19937_64& rng) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  Case k;
  int rank = pick(0, 9) == 0 ? 1 : pick(0, 9) == 0 ? 3 : 2;
  for (int i = 0; i < rank; ++i) {
    bool last = i == rank - 1;
    int64_t ker = pick(1, 3), st = pick(0, 2) == 0 ? ker : pick(1, 3);
    k.kernel.push_back(ker);
    k.stride.push_back(st);
    k.dilation.push_back(pick(0, 5) == 0 ? 2 : 1);
    k.pad.push_back(pick(0, 2) == 0 ? pick(0, int(ker / 2)) : 0);
    k.in.push_back(last ? pick(1, 35) : pick(1, 6));
  }
  k.ceil = pick(0, 3) == 0;
  k.N = pick(1, 2);
  const int cs[] = {1, 2, 3, 8, 9, 17};
  k.C = cs[pick(0, 5)];
  k.layout = pick(0, 1) ? Layout::ChannelsLast : Layout::ChannelsFirst;
  k.slice = pick(0, 3) == 0;
  k.spread = !k.slice && pick(0, 5) == 0;
  const DType dts[] = {DType::f32, DType::f32, DType::f32, DType::f64, DType::bf16, DType::f16};
  k.dt = dts[pick(0, 5)];
  return k;
}

// Max (forward with each argmax form, backward from it) and average without padding in the count (forward,
// backward) on the fast path give the reference's bits, on a random input.
// Gradients whose sums round differently in another order: magnitudes 2^-20 to 2^20, some -0.
void fill_wide(const TensorView& t, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> m(-64, 64), e(-20, 20), p(0, 30);
  for_each_index(t.shape, [&](const int64_t* i) { set(t, i, p(rng) == 0 ? -0.0 : std::ldexp(1 + m(rng) / 128.0, e(rng))); });
}

// Values whose float32 sums and averages are denormal: 2^-140 to 2^-124, some -0 (bfloat16 rounds them as
// float32 does; the AVX512_BF16 conversion would flush them to zero).
void fill_tiny(const TensorView& t, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> m(-64, 64), e(-140, -124), p(0, 30);
  for_each_index(t.shape, [&](const int64_t* i) { set(t, i, p(rng) == 0 ? -0.0 : std::ldexp(1 + m(rng) / 128.0, e(rng))); });
}

enum class Values { Plain, WideDy, Tiny };

void expect_max_and_avg_match(const Geometry& g, DType dt, const Shape& xs, const Shape& ys, Layout lay, bool slice,
                              std::initializer_list<DType> forms, std::mt19937_64& rng, Values values = Values::Plain) {
  Buf x = make(dt, xs, lay, slice), dy = make(dt, ys, lay, slice);
  values == Values::Tiny ? fill_tiny(x.view, rng) : fill(x.view, rng, true);
  if (values == Values::Plain) fill(dy.view, rng, false);
  else values == Values::Tiny ? fill_tiny(dy.view, rng) : fill_wide(dy.view, rng);
  for (DType form : forms) {
    Buf y0 = make(dt, ys, lay, slice), y1 = make(dt, ys, lay, slice);
    Buf a0 = make(form, ys, lay, slice), a1 = make(form, ys, lay, slice);
    ref::max_pool_forward(g, x.view, y0.view, a0.view);
    ASSERT_TRUE(cpu::max_pool_forward(g, x.view, y1.view, a1.view));
    EXPECT_TRUE(same_bits(y0, y1)) << dtype_name(form);
    EXPECT_TRUE(same_bits(a0, a1)) << dtype_name(form);
    Buf dx0 = make(dt, xs, lay, slice), dx1 = make(dt, xs, lay, slice);
    ref::max_pool_backward(g, dy.view, a0.view, x.view, dx0.view);
    ASSERT_TRUE(cpu::max_pool_backward(g, dy.view, a1.view, x.view, dx1.view));
    EXPECT_TRUE(same_bits(dx0, dx1)) << dtype_name(form);
  }
  AvgOptions opt;
  opt.count_include_pad = false;
  Buf y0 = make(dt, ys, lay, slice), y1 = make(dt, ys, lay, slice);
  ref::avg_pool_forward(g, opt, x.view, y0.view);
  ASSERT_TRUE(cpu::avg_pool_forward(g, opt, x.view, y1.view));
  EXPECT_TRUE(same_bits(y0, y1));
  Buf dx0 = make(dt, xs, lay, slice), dx1 = make(dt, xs, lay, slice);
  ref::avg_pool_backward(g, opt, dy.view, dx0.view);
  ASSERT_TRUE(cpu::avg_pool_backward(g, opt, dy.view, dx1.view));
  EXPECT_TRUE(same_bits(dx0, dx1));
}

class CpuFast : public ::testing::Test {
 protected:
  std::mt19937_64 rng{12345};
  int handled_fwd = 0, handled_bwd = 0, cases = 0;
};

TEST_F(CpuFast, MaxAndAvgMatchReferenceBitForBit) {
  const DType forms[] = {DType::u8, DType::i16, DType::i32, DType::i64};
  while (cases < 700) {
    Case k = random_case(rng);
    Geometry g;
    try {
      g = torch_geometry(k.in, k.kernel, k.stride, k.pad, k.dilation, k.ceil);
    } catch (const Error&) {
      continue;  // padding larger than half the kernel, or an empty output
    }
    ++cases;
    Layout lay = k.in.size() == 2 || k.layout == Layout::ChannelsFirst ? k.layout : Layout::ChannelsFirst;
    Shape xs = shape_of(k, k.in), ys = shape_of(k, g.output_size());
    SCOPED_TRACE("case " + std::to_string(cases) + " x " + xs.str() + " y " + ys.str() + " layout " +
                 std::to_string(int(lay)) + " slice " + std::to_string(k.slice) + " spread " + std::to_string(k.spread) + " " + dtype_name(k.dt));
    Buf x = make(k.dt, xs, lay, k.slice, k.spread);
    fill(x.view, rng, true);
    // max forward, every argmax form and none
    for (int f = -1; f < 4; ++f) {
      DType form = f < 0 ? DType::u8 : forms[f];
      Buf y0 = make(k.dt, ys, lay, k.slice, k.spread), y1 = make(k.dt, ys, lay, k.slice, k.spread);
      Buf a0 = make(form, ys, lay, k.slice, k.spread), a1 = make(form, ys, lay, k.slice, k.spread);
      TensorView am0 = f < 0 ? TensorView{} : a0.view, am1 = f < 0 ? TensorView{} : a1.view;
      ref::max_pool_forward(g, x.view, y0.view, am0);
      bool handled = cpu::max_pool_forward(g, x.view, y1.view, am1);
      ASSERT_TRUE(handled);
      ++handled_fwd;
      ASSERT_TRUE(same_bits(y0, y1)) << "max forward values, form " << f;
      ASSERT_TRUE(same_bits(a0, a1)) << "max forward argmax, form " << f;
      // backward from that argmax (and recomputed when there is none)
      Buf dy = make(k.dt, ys, lay, k.slice, k.spread);
      fill(dy.view, rng, false);
      Buf dx0 = make(k.dt, xs, lay, k.slice, k.spread), dx1 = make(k.dt, xs, lay, k.slice, k.spread);
      ref::max_pool_backward(g, dy.view, am0, x.view, dx0.view);
      ASSERT_TRUE(cpu::max_pool_backward(g, dy.view, am1, x.view, dx1.view));
      ++handled_bwd;
      ASSERT_TRUE(same_bits(dx0, dx1)) << "max backward, form " << f;
    }
    // average, each divisor policy
    for (int p = 0; p < 3; ++p) {
      AvgOptions opt;
      opt.count_include_pad = p == 0;
      if (p == 2) opt.divisor_override = 3;
      Buf y0 = make(k.dt, ys, lay, k.slice, k.spread), y1 = make(k.dt, ys, lay, k.slice, k.spread);
      ref::avg_pool_forward(g, opt, x.view, y0.view);
      EXPECT_TRUE(cpu::avg_pool_forward(g, opt, x.view, y1.view));
      ASSERT_TRUE(same_bits(y0, y1)) << "avg forward, policy " << p;
      Buf dy = make(k.dt, ys, lay, k.slice, k.spread);
      fill(dy.view, rng, true);
      Buf dx0 = make(k.dt, xs, lay, k.slice, k.spread), dx1 = make(k.dt, xs, lay, k.slice, k.spread);
      ref::avg_pool_backward(g, opt, dy.view, dx0.view);
      ASSERT_TRUE(cpu::avg_pool_backward(g, opt, dy.view, dx1.view));
      ++handled_bwd;
      ASSERT_TRUE(same_bits(dx0, dx1)) << "avg backward, policy " << p;
    }
  }
  EXPECT_EQ(handled_fwd, 5 * cases);
  EXPECT_EQ(handled_bwd, 8 * cases);
}

// The seed's shape (small C, 2x2 stride 2) takes the fast path in both layouts, forward and backward.
TEST_F(CpuFast, SeedShapeIsHandledInBothLayouts) {
  for (Layout lay : {Layout::ChannelsFirst, Layout::ChannelsLast}) {
    Geometry g = torch_geometry({32, 32}, {2, 2}, {2, 2}, {0, 0}, {1, 1}, false);
    Shape xs{40, 2, 32, 32}, ys{40, 2, 16, 16};  // large enough to run on several threads
    Buf x = make(DType::f32, xs, lay, false), dy = make(DType::f32, ys, lay, false);
    fill(x.view, rng, true);
    fill(dy.view, rng, false);
    for (DType form : {DType::u8, DType::i64}) {
      Buf y0 = make(DType::f32, ys, lay, false), y1 = make(DType::f32, ys, lay, false);
      Buf a0 = make(form, ys, lay, false), a1 = make(form, ys, lay, false);
      ref::max_pool_forward(g, x.view, y0.view, a0.view);
      ASSERT_TRUE(cpu::max_pool_forward(g, x.view, y1.view, a1.view));
      EXPECT_TRUE(same_bits(y0, y1));
      EXPECT_TRUE(same_bits(a0, a1));
      Buf dx0 = make(DType::f32, xs, lay, false), dx1 = make(DType::f32, xs, lay, false);
      ref::max_pool_backward(g, dy.view, a0.view, x.view, dx0.view);
      ASSERT_TRUE(cpu::max_pool_backward(g, dy.view, a1.view, x.view, dx1.view));
      EXPECT_TRUE(same_bits(dx0, dx1));
    }
    Buf dx0 = make(DType::f32, xs, lay, false), dx1 = make(DType::f32, xs, lay, false);
    ref::avg_pool_backward(g, AvgOptions{}, dy.view, dx0.view);
    ASSERT_TRUE(cpu::avg_pool_backward(g, AvgOptions{}, dy.view, dx1.view));
    EXPECT_TRUE(same_bits(dx0, dx1));
  }
}

// Output rows walked down a plane in one call: planes of many outputs with border rows (padding, ceil mode,
// dilation), 3-D, and planes whose rows all see whole windows, run on from plane to plane (channels-first, and
// channels-last with lanes over (W, C)). Every argmax form, flat indices included, and both float types.
TEST_F(CpuFast, RowRunsDownPlanesMatchReference) {
  struct Run {
    std::vector<int64_t> in, kernel, stride, pad, dilation;
    bool ceil;
  };
  const Run runs[] = {
      {{40, 36}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, false},  {{41, 37}, {3, 2}, {2, 2}, {1, 0}, {1, 1}, true},
      {{30, 33}, {2, 3}, {1, 2}, {0, 1}, {2, 1}, false},  {{12, 20}, {2, 2}, {2, 2}, {0, 0}, {1, 1}, false},
      {{12, 21}, {3, 3}, {3, 3}, {0, 0}, {1, 1}, false},  {{13, 20}, {2, 2}, {2, 2}, {0, 0}, {1, 1}, false},
      {{6, 20, 20}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, false},
      {{8, 12, 12}, {2, 2, 2}, {2, 2, 2}, {0, 0, 0}, {1, 1, 1}, false}};
  for (const Run& run : runs)
    for (Layout lay : {Layout::ChannelsFirst, Layout::ChannelsLast})
      for (DType dt : {DType::f32, DType::f64})
        for (bool slice : {false, true}) {
          if (run.in.size() == 3 && lay == Layout::ChannelsLast) continue;
          Geometry g = torch_geometry(run.in, run.kernel, run.stride, run.pad, run.dilation, run.ceil);
          // channels-last: lanes over (W, C) for C = 2, and for C filling whole vectors (16; 24 for float64)
          for (int64_t C : lay == Layout::ChannelsLast ? std::vector<int64_t>{2, 16, 24} : std::vector<int64_t>{5}) {
            Case k;
            k.N = 3, k.C = C;
            const Shape xs = shape_of(k, run.in), ys = shape_of(k, g.output_size());
            SCOPED_TRACE(xs.str() + " -> " + ys.str() + " layout " + std::to_string(int(lay)) + " " +
                         dtype_name(dt) + " slice " + std::to_string(slice));
            expect_max_and_avg_match(g, dt, xs, ys, lay, slice, {DType::u8, DType::i32, DType::i64}, rng);
          }
        }
}

// Averages of small channels-first planes (global: tiles of planes summed in registers; adaptive: from blocks of
// planes) add in the reference's (window) order: values whose sums round differently in another order.
TEST_F(CpuFast, SmallPlaneAveragesSumInWindowOrder) {
  // (global: 49 cells, 30, 4 (one tile of 4 cells), 9 (a last tile overlapping the one before))
  const Geometry geoms[] = {global_geometry({7, 7}), global_geometry({2, 3, 5}), global_geometry({2, 2}),
                            global_geometry({9}), adaptive_geometry({13, 13}, {7, 7})};
  for (const Geometry& g : geoms)
    for (DType dt : {DType::f32, DType::f64})
      for (bool slice : {false, true}) {
        Case k;
        k.N = 2, k.C = 19;
        const Shape xs = shape_of(k, g.input_size()), ys = shape_of(k, g.output_size());
        SCOPED_TRACE(xs.str() + " -> " + ys.str() + " " + dtype_name(dt) + " slice " + std::to_string(slice));
        Buf x = make(dt, xs, Layout::ChannelsFirst, slice), y0 = make(dt, ys, Layout::ChannelsFirst, slice),
            y1 = make(dt, ys, Layout::ChannelsFirst, slice);
        fill_wide(x.view, rng);
        ref::avg_pool_forward(g, AvgOptions{}, x.view, y0.view);
        ASSERT_TRUE(cpu::avg_pool_forward(g, AvgOptions{}, x.view, y1.view));
        EXPECT_TRUE(same_bits(y0, y1));
      }
}

// Global averages of channels-last images (the cells read in memory order into sums kept in the cache) add in
// the reference's order too: channel counts with a tail past whole vectors, more channels than one chunk of
// sums holds (4100 float32, 2100 float64), one image split into chunks for the threads, views.
TEST_F(CpuFast, ChannelsLastGlobalAveragesSumInCellOrder) {
  const Geometry geoms[] = {global_geometry({7, 7}), global_geometry({2, 3, 5}), global_geometry({9})};
  for (const Geometry& g : geoms)
    for (DType dt : {DType::f32, DType::f64})
      for (int64_t C : {int64_t(19), int64_t(64), dt == DType::f32 ? int64_t(4100) : int64_t(2100)})
        for (int64_t N : {1, 3})
          for (bool slice : {false, true}) {
            Case k;
            k.N = N, k.C = C;
            const Shape xs = shape_of(k, g.input_size()), ys = shape_of(k, g.output_size());
            SCOPED_TRACE(xs.str() + " " + dtype_name(dt) + " slice " + std::to_string(slice));
            Buf x = make(dt, xs, Layout::ChannelsLast, slice), y0 = make(dt, ys, Layout::ChannelsLast, slice),
                y1 = make(dt, ys, Layout::ChannelsLast, slice);
            fill_wide(x.view, rng);
            ref::avg_pool_forward(g, AvgOptions{}, x.view, y0.view);
            ASSERT_TRUE(cpu::avg_pool_forward(g, AvgOptions{}, x.view, y1.view));
            EXPECT_TRUE(same_bits(y0, y1));
          }
}

// Small channels-first planes with narrow or irregular outputs (adaptive and global pooling) go through
// channels-last blocks of planes, forward and backward: block edges (33 planes), views, C = 1, every argmax
// form, both divisor policies.
TEST_F(CpuFast, SmallPlanesInBlocksMatchReference) {
  const Geometry geoms[] = {adaptive_geometry({13, 13}, {7, 7}), adaptive_geometry({5, 9}, {3, 4}),
                            global_geometry({7, 7}),             adaptive_geometry({10}, {4}),
                            adaptive_geometry({4, 5, 6}, {2, 3, 2}), global_geometry({2, 3, 5}),
                            torch_geometry({6, 9}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, true)};
  for (const Geometry& g : geoms)
    for (DType dt : {DType::f32, DType::f64, DType::bf16, DType::f16})
      for (int64_t C : {int64_t(11), int64_t(1)})
        for (int view = 0; view < 4; ++view) {  // contiguous, sliced, spread, spatial axes reversed in memory
          Case k;
          k.N = 3, k.C = C;
          std::vector<int64_t> in = g.input_size();
          const Shape xs = shape_of(k, in), ys = shape_of(k, g.output_size());
          const bool slice = view == 1, spread = view == 2;
          const Layout lay = Layout::ChannelsFirst;
          auto make = [&](DType t, const Shape& sh) {
            return view == 3 ? make_reversed(t, sh) : test::make(t, sh, lay, slice, spread);
          };
          SCOPED_TRACE(xs.str() + " -> " + ys.str() + " " + dtype_name(dt) + " view " + std::to_string(view));
          Buf x = make(dt, xs), dy = make(dt, ys);
          fill(x.view, rng, true);
          fill(dy.view, rng, true);
          for (int f = -1; f < 3; ++f) {  // no argmax, then uint8, int32, int64
            const DType form = f < 1 ? DType::u8 : f == 1 ? DType::i32 : DType::i64;
            Buf y0 = make(dt, ys), y1 = make(dt, ys);
            Buf a0 = make(form, ys), a1 = make(form, ys);
            const TensorView am0 = f < 0 ? TensorView{} : a0.view, am1 = f < 0 ? TensorView{} : a1.view;
            ref::max_pool_forward(g, x.view, y0.view, am0);
            ASSERT_TRUE(cpu::max_pool_forward(g, x.view, y1.view, am1));
            EXPECT_TRUE(same_bits(y0, y1)) << "form " << f;
            EXPECT_TRUE(same_bits(a0, a1)) << "form " << f;
            if (f < 0) continue;
            Buf dx0 = make(dt, xs), dx1 = make(dt, xs);
            ref::max_pool_backward(g, dy.view, am0, x.view, dx0.view);
            ASSERT_TRUE(cpu::max_pool_backward(g, dy.view, am1, x.view, dx1.view));
            EXPECT_TRUE(same_bits(dx0, dx1)) << "form " << f;
          }
          for (bool include : {true, false}) {
            AvgOptions opt;
            opt.count_include_pad = include;
            Buf y0 = make(dt, ys), y1 = make(dt, ys);
            ref::avg_pool_forward(g, opt, x.view, y0.view);
            ASSERT_TRUE(cpu::avg_pool_forward(g, opt, x.view, y1.view));
            EXPECT_TRUE(same_bits(y0, y1));
            Buf dx0 = make(dt, xs), dx1 = make(dt, xs);
            ref::avg_pool_backward(g, opt, dy.view, dx0.view);
            ASSERT_TRUE(cpu::avg_pool_backward(g, opt, dy.view, dx1.view));
            EXPECT_TRUE(same_bits(dx0, dx1));
          }
        }
}

// The elements where two 16-bit buffers differ, but for NaN against NaN: a sum of two NaN keeps one of their
// payloads, which one is up to the compiler's operand order (IEEE 754 leaves it open); there, both NaN is enough.
int64_t differ_but_nan_payloads(const Buf& a, const Buf& b, DType dt) {
  const uint16_t* u0 = static_cast<const uint16_t*>(a.storage.view().data);
  const uint16_t* u1 = static_cast<const uint16_t*>(b.storage.view().data);
  auto nan = [&](uint16_t v) { return dt == DType::bf16 ? (v & 0x7fff) > 0x7f80 : (v & 0x7fff) > 0x7c00; };
  int64_t differ = 0;
  for (int64_t i = 0; i < a.storage.numel(); ++i) differ += u0[i] != u1[i] && !(nan(u0[i]) && nan(u1[i]));
  return differ;
}

// The 16-bit forward kernels: every one of the 65,536 bit patterns (subnormals, infinities, quiet and signalling
// NaN) as input, next to every other in the windows, in both channels-first loads (pairs and units) and
// channels-last, gives the reference's bits (a signalling NaN comes out quiet, as dtype.hpp's rounding leaves it;
// for average, a window with several NaN gives a NaN, its payload open). 3x3 windows of stride 2: the integer keys
// of channels-first planes; 64 channels: those of channels-last pixels, 32 channels a vector, their outputs stored
// through the cache and, every output counting as past it, streamed.
TEST_F(CpuFast, HalfForwardOnEvery16BitPattern) {
  const int64_t windows[][2] = {{1, 1}, {2, 2}, {3, 1}, {3, 2}};  // (kernel, stride)
  for (DType dt : {DType::bf16, DType::f16})
    for (Layout lay : {Layout::ChannelsFirst, Layout::ChannelsLast})
      for (const auto& w : windows)
        for (const Shape& xs : {Shape{1, 8, 64, 128}, Shape{1, 64, 32, 32}}) {
          const int64_t k = w[0], s = w[1];
          SCOPED_TRACE(std::string(dtype_name(dt)) + " layout " + std::to_string(int(lay)) + " kernel " +
                       std::to_string(k) + " stride " + std::to_string(s) + " channels " + std::to_string(xs[1]));
          Geometry g = torch_geometry({xs[2], xs[3]}, {k, k}, {s, s}, {k / 2, k / 2}, {1, 1}, false);
          const Shape ys{1, xs[1], g.output_size()[0], g.output_size()[1]};
          Buf x = make(dt, xs, lay, false);
          uint16_t* bits = static_cast<uint16_t*>(x.view.data);
          for (int64_t i = 0; i < xs.numel(); ++i) bits[i] = uint16_t(i * 40503);  // a permutation of all patterns
          Buf y0 = make(dt, ys, lay, false), a0 = make(DType::u8, ys, lay, false);
          ref::max_pool_forward(g, x.view, y0.view, a0.view);
          const int64_t saved = cpu::stream_threshold_bytes.load();
          for (int64_t threshold : {saved, int64_t(0)}) {
            Buf y1 = make(dt, ys, lay, false), a1 = make(DType::u8, ys, lay, false);
            cpu::stream_threshold_bytes = threshold;
            ASSERT_TRUE(cpu::max_pool_forward(g, x.view, y1.view, a1.view));
            cpu::stream_threshold_bytes = saved;
            EXPECT_TRUE(same_bits(y0, y1)) << "threshold " << threshold;
            EXPECT_TRUE(same_bits(a0, a1)) << "threshold " << threshold;
          }
          Buf z0 = make(dt, ys, lay, false), z1 = make(dt, ys, lay, false);
          ref::avg_pool_forward(g, AvgOptions{}, x.view, z0.view);
          ASSERT_TRUE(cpu::avg_pool_forward(g, AvgOptions{}, x.view, z1.view));
          EXPECT_EQ(differ_but_nan_payloads(z0, z1, dt), 0);
        }
}

// The 16-bit 3x3 stride-2 max forwards' shorter way for non-negative windows (unsigned compares of the bits:
// kernels_k3s2_forward.cpp's channels-first planes, kernels_forward-inl.h's 64-channel channels-last pixels),
// without an index and with the byte argmax: every non-negative pattern (+0, subnormals, +inf) with many ties;
// then a block of +0 in image 1 with four cells of one pattern planted in one channel, -0 (the first of an
// all-zero window: -0 stays), a negative value, a NaN (positive or negative, quiet or signalling) or -inf, which
// send those windows back to the integer keys.
TEST_F(CpuFast, HalfMaxNonNegativeWindowsMatchReference) {
  std::uniform_int_distribution<int> pattern(0, 0x7C00), tie(0, 3);
  for (DType dt : {DType::bf16, DType::f16})
    for (Layout lay : {Layout::ChannelsFirst, Layout::ChannelsLast}) {
      const uint16_t inf = dt == DType::bf16 ? 0x7F80 : 0x7C00;
      // (channels-first: the planted plane late in image 1, so that the chunks before it on its thread, which may
      // go by the keys after the last run's miss, have run the short way again)
      const Shape xs = lay == Layout::ChannelsFirst ? Shape{2, 40, 21, 75} : Shape{2, 64, 21, 11};
      const int64_t planted_channel = lay == Layout::ChannelsFirst ? 38 : 1;
      const Geometry g = torch_geometry({xs[2], xs[3]}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, false);
      const Shape ys{xs[0], xs[1], g.output_size()[0], g.output_size()[1]};
      for (uint16_t planted : {uint16_t(0), uint16_t(0x8000), uint16_t(0xBC00), uint16_t(inf | 0x40),
                               uint16_t(inf | 1), uint16_t(0x8000 | inf | 0x40), uint16_t(0x8000 | inf)}) {
        SCOPED_TRACE(std::string(dtype_name(dt)) + " layout " + std::to_string(int(lay)) + " planted " +
                     std::to_string(planted));
        Buf x = make(dt, xs, lay, false);
        uint16_t* bits = static_cast<uint16_t*>(x.view.data);
        for (int64_t i = 0; i < xs.numel(); ++i)
          bits[i] = tie(rng) == 0 ? uint16_t(tie(rng) == 0 ? inf : 0) : uint16_t(pattern(rng) & ~3);
        const Strides& st = x.view.strides;
        auto cell = [&](int64_t c, int64_t h, int64_t w) -> uint16_t& {
          return bits[st[0] + c * st[1] + h * st[2] + w * st[3]];  // (image 1)
        };
        if (planted) {
          for (int64_t c = 0; c < xs[1]; ++c)
            for (int64_t h = 7; h < 13; ++h)
              for (int64_t w = 1; w < 9; ++w) cell(c, h, w) = 0;
          for (int64_t h : {9, 10})  // (cell (9, 3) is the top left one of the window at output (5, 2))
            for (int64_t w : {3, 4}) cell(planted_channel, h, w) = planted;
        }
        Buf y0 = make(dt, ys, lay, false), a0 = make(DType::u8, ys, lay, false);
        ref::max_pool_forward(g, x.view, y0.view, a0.view);
        Buf y1 = make(dt, ys, lay, false), a1 = make(DType::u8, ys, lay, false), y2 = make(dt, ys, lay, false);
        ASSERT_TRUE(cpu::max_pool_forward(g, x.view, y1.view, a1.view));
        ASSERT_TRUE(cpu::max_pool_forward(g, x.view, y2.view, TensorView{}));
        EXPECT_TRUE(same_bits(y0, y1));
        EXPECT_TRUE(same_bits(a0, a1));
        EXPECT_TRUE(same_bits(y0, y2));
      }
    }
}

// The 16-bit channels-last max backward of overlapping windows (3x3, stride 2: the gather, widening dy at each
// term): every one of the 65,536 bit patterns as a gradient gives the reference's bits (where two windows send
// NaN to one cell, both NaN is enough: see differ_but_nan_payloads).
TEST_F(CpuFast, HalfChannelsLastBackwardOnEvery16BitPattern) {
  for (DType dt : {DType::bf16, DType::f16}) {
    SCOPED_TRACE(dtype_name(dt));
    Geometry g = torch_geometry({9, 13}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, false);  // 5 x 7 outputs
    const Shape xs{32, 64, 9, 13}, ys{32, 64, 5, 7};                               // 71,680 gradients
    Buf x = make(dt, xs, Layout::ChannelsLast, false), dy = make(dt, ys, Layout::ChannelsLast, false);
    fill(x.view, rng, true);
    uint16_t* bits = static_cast<uint16_t*>(dy.view.data);
    for (int64_t i = 0; i < ys.numel(); ++i) bits[i] = uint16_t(i * 40503);  // every pattern, in a scattered order
    Buf y = make(dt, ys, Layout::ChannelsLast, false), am = make(DType::u8, ys, Layout::ChannelsLast, false);
    ref::max_pool_forward(g, x.view, y.view, am.view);
    Buf dx0 = make(dt, xs, Layout::ChannelsLast, false), dx1 = make(dt, xs, Layout::ChannelsLast, false);
    ref::max_pool_backward(g, dy.view, am.view, x.view, dx0.view);
    ASSERT_TRUE(cpu::max_pool_backward(g, dy.view, am.view, x.view, dx1.view));
    EXPECT_EQ(differ_but_nan_payloads(dx0, dx1, dt), 0);
  }
}

// The 16-bit max backward of stride-2 windows that do not overlap, by dy's bits (kernels_backward.cpp,
// half_tiled_max): every one of the 65,536 bit patterns as a gradient (-0 comes out +0, a NaN quiet, as the
// float32 sum rounds them) gives the reference's bits: channels-first rows of 16 outputs (seed's planes), of 35
// and 56 (halves across tap rows), 2x2x2 windows (tap rows a plane apart), row-sliced views (planes apart),
// channels-last 2 and 64 channels (3: the widening way); dx through the cache and, every output counting as past
// it, streamed.
TEST_F(CpuFast, HalfMaxBackwardWithoutOverlapOnEvery16BitPattern) {
  struct Run {
    Shape xs;
    Layout lay;
    bool slice;
  };
  const Run runs[] = {{Shape{64, 8, 32, 32}, Layout::ChannelsFirst, false},
                      {Shape{16, 8, 22, 70}, Layout::ChannelsFirst, false},
                      {Shape{8, 8, 20, 112}, Layout::ChannelsFirst, false},
                      {Shape{8, 8, 20, 70}, Layout::ChannelsFirst, true},
                      {Shape{16, 8, 20, 32}, Layout::ChannelsFirst, true},
                      {Shape{4, 8, 8, 16, 32}, Layout::ChannelsFirst, false},
                      {Shape{256, 2, 16, 16}, Layout::ChannelsLast, false},
                      {Shape{8, 64, 16, 16}, Layout::ChannelsLast, false},
                      {Shape{64, 3, 16, 22}, Layout::ChannelsLast, false}};
  for (DType dt : {DType::bf16, DType::f16})
    for (const Run& r : runs) {
      SCOPED_TRACE(std::string(dtype_name(dt)) + " " + r.xs.str() + " layout " + std::to_string(int(r.lay)) +
                   (r.slice ? " sliced" : ""));
      const int rank = r.xs.rank - 2;
      std::vector<int64_t> in(r.xs.dims.begin() + 2, r.xs.dims.begin() + r.xs.rank);
      const Geometry g = torch_geometry(in, std::vector<int64_t>(size_t(rank), 2), std::vector<int64_t>(size_t(rank), 2),
                                        std::vector<int64_t>(size_t(rank), 0), std::vector<int64_t>(size_t(rank), 1),
                                        false);
      std::vector<int64_t> yd{r.xs[0], r.xs[1]};
      for (int64_t n : g.output_size()) yd.push_back(n);
      const Shape ys(yd);
      Buf x = make(dt, r.xs, r.lay, r.slice), dy = make(dt, ys, r.lay, false);
      fill(x.view, rng, true);
      uint16_t* bits = static_cast<uint16_t*>(dy.view.data);
      for (int64_t i = 0; i < ys.numel(); ++i) bits[i] = uint16_t(i * 40503);  // every pattern, scattered
      Buf am = make(DType::u8, ys, r.lay, false), y = make(dt, ys, r.lay, false);
      ref::max_pool_forward(g, x.view, y.view, am.view);
      Buf dx0 = make(dt, r.xs, r.lay, r.slice);
      ref::max_pool_backward(g, dy.view, am.view, x.view, dx0.view);
      const int64_t saved = cpu::stream_threshold_bytes.load();
      for (int64_t threshold : {saved, int64_t(0)}) {
        Buf dx1 = make(dt, r.xs, r.lay, r.slice);
        cpu::stream_threshold_bytes = threshold;
        ASSERT_TRUE(cpu::max_pool_backward(g, dy.view, am.view, x.view, dx1.view));
        cpu::stream_threshold_bytes = saved;
        EXPECT_TRUE(same_bits(dx0, dx1)) << "threshold " << threshold;
      }
    }
}

// bfloat16 / float16 go through float32 blocks (channel ranges of one image, or several images): tensors big
// enough for several blocks and threads, both layouts, still the reference's bits.
TEST_F(CpuFast, HalfTypesInBlocksMatchReference) {
  Geometry g = torch_geometry({63, 64}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, true);
  for (DType dt : {DType::bf16, DType::f16})
    for (Layout lay : {Layout::ChannelsFirst, Layout::ChannelsLast})
      for (Shape xs : {Shape{2, 20, 63, 64}, Shape{24, 3, 63, 64}}) {
        SCOPED_TRACE(std::string(dtype_name(dt)) + " " + xs.str() + " layout " + std::to_string(int(lay)));
        Shape ys{xs[0], xs[1], 32, 33};
        expect_max_and_avg_match(g, dt, xs, ys, lay, false, {DType::u8, DType::i64}, rng);
      }
}

// 16-bit 3x3 stride-2 planes whose first two columns are -inf: each first window holds nothing else, and its
// left padding cell must give way to the row's first cell, which ties with it at -inf (the kernel's own padding
// value); chunks of 32 outputs (70 columns: 35 outputs) end in a partial one.
TEST_F(CpuFast, Kernel3Stride2HalfLeftEdgeMatchesReference) {
  Geometry g = torch_geometry({9, 70}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, false);
  const std::vector<int64_t> out = g.output_size();
  for (DType dt : {DType::bf16, DType::f16}) {
    SCOPED_TRACE(dtype_name(dt));
    const Shape xs{1, 3, 9, 70}, ys{1, 3, out[0], out[1]};
    Buf x = make(dt, xs, Layout::ChannelsFirst, false);
    fill(x.view, rng, true);
    for_each_index(xs, [&](const int64_t* i) {
      if (i[3] <= 1) set(x.view, i, -INFINITY);
    });
    Buf y0 = make(dt, ys, Layout::ChannelsFirst, false), y1 = make(dt, ys, Layout::ChannelsFirst, false);
    Buf a0 = make(DType::u8, ys, Layout::ChannelsFirst, false), a1 = make(DType::u8, ys, Layout::ChannelsFirst, false);
    ref::max_pool_forward(g, x.view, y0.view, a0.view);
    ASSERT_TRUE(cpu::max_pool_forward(g, x.view, y1.view, a1.view));
    EXPECT_TRUE(same_bits(y0, y1));
    EXPECT_TRUE(same_bits(a0, a1));
  }
}

// Channels-first backward of overlapping windows with dx beyond 16 MiB, which the row accumulation writes (for
// strided windows) by streaming stores through a small buffer: rows of 245 cells (not whole 64-byte lines),
// back to back, planes apart (a row slice), and rows apart (a column slice: each row a range of its own); and
// stride 1, written directly.
TEST_F(CpuFast, StreamedRowBackwardMatchesReference) {
  struct Run {
    int64_t stride;
    DType dt;
    bool slices;
  };
  for (Run r : {Run{2, DType::f32, true}, Run{1, DType::f32, false}, Run{2, DType::bf16, false}}) {
    Geometry g = torch_geometry({131, 245}, {3, 3}, {r.stride, r.stride}, {1, 1}, {1, 1}, false);
    const std::vector<int64_t> out = g.output_size();
    const int64_t n = r.dt == DType::f32 ? 4 : 8;
    const Shape xs{n, 33, 131, 245}, ys{n, 33, out[0], out[1]};
    SCOPED_TRACE(std::string(dtype_name(r.dt)) + " stride " + std::to_string(r.stride));
    expect_max_and_avg_match(g, r.dt, xs, ys, Layout::ChannelsFirst, false, {DType::u8}, rng);
    if (!r.slices) continue;
    expect_max_and_avg_match(g, r.dt, xs, ys, Layout::ChannelsFirst, true, {DType::u8}, rng);
    // dx a column slice of a wider tensor
    Buf x = make(r.dt, xs, Layout::ChannelsFirst, false), dy = make(r.dt, ys, Layout::ChannelsFirst, false);
    fill(x.view, rng, true);
    fill(dy.view, rng, false);
    Buf y = make(r.dt, ys, Layout::ChannelsFirst, false), am = make(DType::u8, ys, Layout::ChannelsFirst, false);
    ASSERT_TRUE(cpu::max_pool_forward(g, x.view, y.view, am.view));
    Buf wide0 = make(r.dt, Shape{n, 33, 131, 250}, Layout::ChannelsFirst, false);
    Buf wide1 = make(r.dt, Shape{n, 33, 131, 250}, Layout::ChannelsFirst, false);
    const TensorView dx0(wide0.view.data, r.dt, xs, wide0.view.strides);
    const TensorView dx1(wide1.view.data, r.dt, xs, wide1.view.strides);
    ref::max_pool_backward(g, dy.view, am.view, x.view, dx0);
    ASSERT_TRUE(cpu::max_pool_backward(g, dy.view, am.view, x.view, dx1));
    EXPECT_TRUE(same_bits(wide0, wide1)) << "column slice";
  }
}

// Average of stride-1 windows, forward and backward, over channels-first planes (the aligned rows of
// kernels_rows.cpp: 3 taps with padding 1 or 0, 2 taps without; 2 taps with padding 1 take the general rows) and
// channels-last images of whole vectors of channels (the gather's sliding runs of 3-wide windows): rows narrower
// than a vector, of whole vectors, and over several groups of four vectors; both divisor policies; float32,
// bfloat16, float16 and float64 (which the aligned rows leave to the general ones). The 3x3 padding-1 backward of
// rows over 16 wide is backward_stencil.cpp's (float32, float64). Random gradients, then gradients of -0.
TEST_F(CpuFast, StrideOneAverageMatchesReference) {
  struct Window {
    int64_t k, pad;
  };
  for (Layout layout : {Layout::ChannelsFirst, Layout::ChannelsLast})
    for (Window w : {Window{3, 1}, Window{3, 0}, Window{2, 0}, Window{2, 1}})
      for (int64_t width : {5, 16, 56, 64, 70, 131, 1100})
        for (DType dt : {DType::f32, DType::bf16, DType::f16, DType::f64})
          for (int p = 0; p < 2; ++p) {
            // (rows past 1024 cells, whose lane masks are made a block at a time: channels-first float32 alone)
            if (width > 1024 && (layout == Layout::ChannelsLast || dt != DType::f32)) continue;
            const Geometry g = torch_geometry({9, width}, {w.k, w.k}, {1, 1}, {w.pad, w.pad}, {1, 1}, false);
            const std::vector<int64_t> out = g.output_size();
            // channels-last: channels that fill whole vectors (the gather's pixels slide along W)
            const int64_t C = layout == Layout::ChannelsLast ? 32 : 3;
            const Shape xs{2, C, 9, width}, ys{2, C, out[0], out[1]};
            SCOPED_TRACE(std::string(dtype_name(dt)) + " kernel " + std::to_string(w.k) + " pad " +
                         std::to_string(w.pad) + " width " + std::to_string(width) + " policy " + std::to_string(p) +
                         (layout == Layout::ChannelsLast ? " channels-last" : ""));
            AvgOptions opt;
            opt.count_include_pad = p == 0;
            Buf x = make(dt, xs, layout, false);
            fill_wide(x.view, rng);  // (sums that round: a change of order shows)
            Buf y0 = make(dt, ys, layout, false), y1 = make(dt, ys, layout, false);
            ref::avg_pool_forward(g, opt, x.view, y0.view);
            ASSERT_TRUE(cpu::avg_pool_forward(g, opt, x.view, y1.view));
            EXPECT_TRUE(same_bits(y0, y1));
            Buf dy = make(dt, ys, layout, false);
            fill_wide(dy.view, rng);
            Buf dx0 = make(dt, xs, layout, false), dx1 = make(dt, xs, layout, false);
            ref::avg_pool_backward(g, opt, dy.view, dx0.view);
            ASSERT_TRUE(cpu::avg_pool_backward(g, opt, dy.view, dx1.view));
            EXPECT_TRUE(same_bits(dx0, dx1));
            // dy of -0 alone: every dx cell a sum from +0, so +0
            for_each_index(ys, [&](const int64_t* i) { set(dy.view, i, -0.0); });
            ref::avg_pool_backward(g, opt, dy.view, dx0.view);
            ASSERT_TRUE(cpu::avg_pool_backward(g, opt, dy.view, dx1.view));
            EXPECT_TRUE(same_bits(dx0, dx1)) << "dy of -0";
          }
}

// 3x3 windows of stride 2 over channels-first planes (the dedicated backward of backward_k3s2.cpp, and the
// forward of kernels_k3s2_forward.cpp for the one-byte argmax and none): widths and heights around their vectors
// of output columns (16 lanes and less, one vector to several overlapping), padding 0 or 1 on each axis, ceil
// mode, every float type and argmax form, row-sliced views, gradients whose sums round differently in another
// order; then dx streamed past the cache, and dx a column slice.
TEST_F(CpuFast, Kernel3Stride2BackwardMatchesReference) {
  const DType dts[] = {DType::f32, DType::f64, DType::bf16, DType::f16};
  int runs = 0;
  for (int64_t ph : {0, 1})
    for (int64_t pw : {0, 1})
      for (bool ceil : {false, true})
        for (int64_t H : {2, 3, 4, 5, 8})
          for (int64_t W : {3, 4, 5, 6, 7, 15, 16, 17, 31, 32, 33, 34, 35, 64, 65, 97}) {
            Geometry g;
            try {
              g = torch_geometry({H, W}, {3, 3}, {2, 2}, {ph, pw}, {1, 1}, ceil);
            } catch (const Error&) {
              continue;  // an empty output
            }
            const DType dt = dts[runs % 4];
            const bool slice = runs % 3 == 0;
            ++runs;
            const std::vector<int64_t> out = g.output_size();
            SCOPED_TRACE("H " + std::to_string(H) + " W " + std::to_string(W) + " pad " + std::to_string(ph) +
                         "," + std::to_string(pw) + " ceil " + std::to_string(ceil) + " " + dtype_name(dt) +
                         " slice " + std::to_string(slice));
            const Shape xs{2, 3, H, W}, ys{2, 3, out[0], out[1]};
            expect_max_and_avg_match(g, dt, xs, ys, Layout::ChannelsFirst, slice,
                                     {DType::u8, DType::i16, DType::i32, DType::i64}, rng,
                                     runs % 2 == 0 ? Values::WideDy : Values::Plain);
            // Peaks of random heights on the cells that up to four windows share (c + pad even on both axes): a
            // peak above its neighbours takes four terms, whose sum in another order rounds differently.
            Buf x = make(dt, xs, Layout::ChannelsFirst, slice), dy = make(dt, ys, Layout::ChannelsFirst, slice);
            fill(x.view, rng, false);
            fill_wide(dy.view, rng);
            for_each_index(xs, [&](const int64_t* i) {
              if ((i[2] + ph) % 2 == 0 && (i[3] + pw) % 2 == 0) set(x.view, i, 8.0 + double(rng() % 64) / 8);
            });
            Buf y = make(dt, ys, Layout::ChannelsFirst, slice), am = make(DType::u8, ys, Layout::ChannelsFirst, slice);
            ref::max_pool_forward(g, x.view, y.view, am.view);
            Buf dx0 = make(dt, xs, Layout::ChannelsFirst, slice), dx1 = make(dt, xs, Layout::ChannelsFirst, slice);
            ref::max_pool_backward(g, dy.view, am.view, x.view, dx0.view);
            ASSERT_TRUE(cpu::max_pool_backward(g, dy.view, am.view, x.view, dx1.view));
            EXPECT_TRUE(same_bits(dx0, dx1)) << "peaks";
            Buf yn = make(dt, ys, Layout::ChannelsFirst, slice);
            ASSERT_TRUE(cpu::max_pool_forward(g, x.view, yn.view, TensorView{}));
            EXPECT_TRUE(same_bits(y, yn)) << "forward without an index";
          }
  EXPECT_GT(runs, 200);
  // Two layouts of the same padded rows one after the other, the second with fewer output columns: the buffers
  // (each thread's) hold the first one's rows where the second's margins lie, which must be filled again.
  for (int64_t W : {35, 34}) {  // (34: output column 17 of 35 would reach dx column 33)
    Geometry g = torch_geometry({8, W}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, false);
    SCOPED_TRACE("one after another, W " + std::to_string(W));
    expect_max_and_avg_match(g, DType::f32, Shape{2, 3, 8, W}, Shape{2, 3, 4, g.output_size()[1]},
                             Layout::ChannelsFirst, false, {DType::u8}, rng);
  }
  const int64_t saved = cpu::stream_threshold_bytes.exchange(0);
  const bool direct = cpu::cpu_half_rows_direct;
  // planes of whole lines; rows of whole lines, or (16-bit, 48 wide) every other row from the middle of a line;
  // 16-bit rows straight to dx and through the plane
  for (bool half_direct : {true, false}) {
    cpu::cpu_half_rows_direct = half_direct;
    for (int64_t W : {64, 48})
      for (DType dt : dts) {
        Geometry g = torch_geometry({56, W}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, false);
        SCOPED_TRACE(std::string("streamed ") + dtype_name(dt) + " W " + std::to_string(W) + " half rows direct " +
                     std::to_string(half_direct));
        expect_max_and_avg_match(g, dt, Shape{2, 5, 56, W}, Shape{2, 5, 28, W / 2}, Layout::ChannelsFirst, false,
                                 {DType::u8}, rng);
      }
  }
  cpu::stream_threshold_bytes = saved, cpu::cpu_half_rows_direct = direct;
  for (DType dt : dts) {  // dx a column slice of a wider tensor: rows not back to back
    Geometry g = torch_geometry({9, 37}, {3, 3}, {2, 2}, {1, 0}, {1, 1}, false);
    const Shape xs{2, 3, 9, 37}, ys{2, 3, 5, 18};
    Buf x = make(dt, xs, Layout::ChannelsFirst, false), dy = make(dt, ys, Layout::ChannelsFirst, false);
    fill(x.view, rng, true);
    fill(dy.view, rng, false);
    Buf y = make(dt, ys, Layout::ChannelsFirst, false), am = make(DType::u8, ys, Layout::ChannelsFirst, false);
    ASSERT_TRUE(cpu::max_pool_forward(g, x.view, y.view, am.view));
    Buf wide0 = make(dt, Shape{2, 3, 9, 41}, Layout::ChannelsFirst, false);
    Buf wide1 = make(dt, Shape{2, 3, 9, 41}, Layout::ChannelsFirst, false);
    ref::max_pool_backward(g, dy.view, am.view, x.view, TensorView(wide0.view.data, dt, xs, wide0.view.strides));
    ASSERT_TRUE(cpu::max_pool_backward(g, dy.view, am.view, x.view, TensorView(wide1.view.data, dt, xs, wide1.view.strides)));
    EXPECT_TRUE(same_bits(wide0, wide1)) << "column slice " << dtype_name(dt);
  }
  // A refused call (a bad code in the first row) leaves nothing behind for the next call of the same geometry.
  for (DType dt : dts) {
    Geometry g = torch_geometry({13, 50}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, false);
    const Shape xs{1, 2, 13, 50}, ys{1, 2, 7, 25};
    Buf x = make(dt, xs, Layout::ChannelsFirst, false), dy = make(dt, ys, Layout::ChannelsFirst, false);
    fill(x.view, rng, false);
    fill_wide(dy.view, rng);
    Buf y = make(dt, ys, Layout::ChannelsFirst, false), am = make(DType::u8, ys, Layout::ChannelsFirst, false);
    ref::max_pool_forward(g, x.view, y.view, am.view);
    uint8_t* a = static_cast<uint8_t*>(am.view.data);
    const uint8_t kept = a[3];
    a[3] = 9;
    Buf dx0 = make(dt, xs, Layout::ChannelsFirst, false), dx1 = make(dt, xs, Layout::ChannelsFirst, false);
    EXPECT_FALSE(cpu::max_pool_backward(g, dy.view, am.view, x.view, dx1.view)) << dtype_name(dt);
    a[3] = kept;
    ref::max_pool_backward(g, dy.view, am.view, x.view, dx0.view);
    ASSERT_TRUE(cpu::max_pool_backward(g, dy.view, am.view, x.view, dx1.view));
    EXPECT_TRUE(same_bits(dx0, dx1)) << "after a refused call " << dtype_name(dt);
  }
}

// Channels-last rows of 2, 4 or 8 channels, vectorised over (W, C): at stride 1 the groups follow one another
// (contiguous loads), at stride 2 every other block of 4 or 8 float32 channels (kBlocks4 / kBlocks8 of
// kernels-inl.h); flat indices take the lane's output from its group. Widths around the vectors, padding,
// dilation, ceil mode, every float type and argmax form, row-sliced views.
TEST_F(CpuFast, ChannelsLastFewChannelsMatchReference) {
  const DType dts[] = {DType::f32, DType::f32, DType::f64, DType::bf16, DType::f16};
  int runs = 0;
  for (int64_t C : {2, 4, 8})
    for (int64_t st : {1, 2})
      for (int64_t k : {2, 3})
        for (int64_t W : {5, 8, 16, 17, 33, 40}) {
          const int64_t p = runs % 3 == 0 ? k / 2 : 0, dil = runs % 5 == 4 ? 2 : 1, H = 3 + runs % 4;
          const bool ceil = runs % 4 == 1, slice = runs % 3 == 2;
          const DType dt = dts[runs % 5];
          ++runs;
          Geometry g;
          try {
            g = torch_geometry({H, W}, {k, k}, {st, st}, {p, p}, {dil, dil}, ceil);
          } catch (const Error&) {
            continue;
          }
          const std::vector<int64_t> out = g.output_size();
          SCOPED_TRACE("C " + std::to_string(C) + " stride " + std::to_string(st) + " k " + std::to_string(k) +
                       " W " + std::to_string(W) + " H " + std::to_string(H) + " pad " + std::to_string(p) +
                       " dil " + std::to_string(dil) + " ceil " + std::to_string(ceil) + " " + dtype_name(dt));
          expect_max_and_avg_match(g, dt, Shape{2, C, H, W}, Shape{2, C, out[0], out[1]}, Layout::ChannelsLast,
                                   slice, {DType::u8, DType::i32, DType::i64}, rng);
        }
  EXPECT_GT(runs, 60);
}

// 3-D windows whose slices are 3x3 stride-2 windows (forward.cpp's k3s2_forward, slice by slice, merged by
// kernels_slice_max.cpp): depth kernels 1-3, strides 1-3, depth padding, dilation and ceil mode, padding 0 or 1
// on H and W, widths around the 2-D kernel's smallest, every float type and argmax form (int64 takes another
// path), then the integer types without an argmax and with the one-byte one; ties, NaN, -inf and -0 in the input.
TEST_F(CpuFast, SlicesOfKernel3Stride2MatchReference) {
  const DType dts[] = {DType::f32, DType::f64, DType::bf16, DType::f16};
  const DType ints[] = {DType::u8, DType::i8, DType::i16, DType::i32, DType::i64};
  int runs = 0;
  for (int64_t kt : {1, 2, 3})
    for (int64_t st : {1, 2, 3})
      for (int64_t T : {1, 2, 4, 7})
        for (int64_t pt : {int64_t(0), kt / 2}) {
          if (T + 2 * pt < kt) continue;
          Geometry g;
          const int64_t p = runs % 2, W = 32 + runs % 5, H = 5 + runs % 3;
          const bool ceil = runs % 3 == 1;
          const int64_t dil = runs % 4 == 3 && T >= 2 * kt ? 2 : 1;
          try {
            g = torch_geometry({T, H, W}, {kt, 3, 3}, {st, 2, 2}, {pt, p, p}, {dil, 1, 1}, ceil);
          } catch (const Error&) {
            continue;
          }
          const DType dt = dts[runs % 4];
          const bool slice = runs % 3 == 0;
          ++runs;
          const std::vector<int64_t> out = g.output_size();
          SCOPED_TRACE("T " + std::to_string(T) + " kt " + std::to_string(kt) + " st " + std::to_string(st) +
                       " pt " + std::to_string(pt) + " dil " + std::to_string(dil) + " H " + std::to_string(H) +
                       " W " + std::to_string(W) + " pad " + std::to_string(p) + " ceil " + std::to_string(ceil) +
                       " " + dtype_name(dt));
          const Shape xs{2, 3, T, H, W}, ys{2, 3, out[0], out[1], out[2]};
          expect_max_and_avg_match(g, dt, xs, ys, Layout::ChannelsFirst, slice, {DType::u8, DType::i64}, rng);
          Buf x = make(dt, xs, Layout::ChannelsFirst, slice), y0 = make(dt, ys, Layout::ChannelsFirst, slice),
              y1 = make(dt, ys, Layout::ChannelsFirst, slice);
          fill(x.view, rng, true);
          ref::max_pool_forward(g, x.view, y0.view, TensorView{});
          ASSERT_TRUE(cpu::max_pool_forward(g, x.view, y1.view, TensorView{}));
          EXPECT_TRUE(same_bits(y0, y1)) << "without an argmax";
          const DType it = ints[runs % 5];
          Buf xi = make(it, xs, Layout::ChannelsFirst, slice);
          fill(xi.view, rng, false);
          for (DType form : {DType::u8, DType::i64}) {  // (one byte: the integer kernels' own argmax)
            Buf yi0 = make(it, ys, Layout::ChannelsFirst, slice), yi1 = make(it, ys, Layout::ChannelsFirst, slice);
            Buf a0 = make(form, ys, Layout::ChannelsFirst, slice), a1 = make(form, ys, Layout::ChannelsFirst, slice);
            ref::max_pool_forward(g, xi.view, yi0.view, a0.view);
            ASSERT_TRUE(cpu::max_pool_forward(g, xi.view, yi1.view, a1.view));
            EXPECT_TRUE(same_bits(yi0, yi1)) << dtype_name(it) << " " << dtype_name(form);
            EXPECT_TRUE(same_bits(a0, a1)) << dtype_name(it) << " " << dtype_name(form);
            ASSERT_TRUE(cpu::max_pool_forward(g, xi.view, yi1.view, TensorView{}));
            EXPECT_TRUE(same_bits(yi0, yi1)) << dtype_name(it) << " without an argmax";
          }
        }
  EXPECT_GT(runs, 50);
}

// 3-D windows of one cell along the depth (1 x kh x kw, stride 1 and no padding there) run as 2-D pooling of each
// depth slice, the depth merged into the batch (channels-last) or the channels (channels-first): every layout and
// view, the two mixed, every float type and argmax form, and integer inputs; and adaptive pools that keep the depth;
// against the reference.
TEST_F(CpuFast, DepthOfOneCellMatchesReference) {
  const DType dts[] = {DType::f32, DType::f64, DType::bf16, DType::f16};
  int runs = 0;
  for (int64_t k : {2, 3})
    for (int64_t st : {1, 2})
      for (int64_t T : {1, 3, 4})
        for (Layout lay : {Layout::ChannelsFirst, Layout::ChannelsLast}) {
          const int64_t p = k == 3 ? runs % 2 : 0, H = 5 + runs % 3, W = 9 + 7 * (runs % 4), C = runs % 3 == 0 ? 1 : 16;
          const Geometry g = torch_geometry({T, H, W}, {1, k, k}, {1, st, st}, {0, p, p}, {1, 1, 1}, runs % 5 == 1);
          const DType dt = dts[runs % 4];
          const bool slice = runs % 3 == 1;
          ++runs;
          const std::vector<int64_t> out = g.output_size();
          SCOPED_TRACE("T " + std::to_string(T) + " k " + std::to_string(k) + " st " + std::to_string(st) + " H " +
                       std::to_string(H) + " W " + std::to_string(W) + " C " + std::to_string(C) +
                       (lay == Layout::ChannelsLast ? " channels-last " : " channels-first ") + dtype_name(dt) +
                       (slice ? " slice" : ""));
          const Shape xs{2, C, T, H, W}, ys{2, C, out[0], out[1], out[2]};
          expect_max_and_avg_match(g, dt, xs, ys, lay, slice, {DType::u8, DType::i64}, rng);
          // the input in one layout, the output and argmax in the other (one merge suits both only for one channel
          // or one slice)
          const Layout other = lay == Layout::ChannelsLast ? Layout::ChannelsFirst : Layout::ChannelsLast;
          Buf x = make(dt, xs, lay, slice), y0 = make(dt, ys, other, false), y1 = make(dt, ys, other, false);
          Buf a0 = make(DType::u8, ys, other, false), a1 = make(DType::u8, ys, other, false);
          fill(x.view, rng, true);
          ref::max_pool_forward(g, x.view, y0.view, a0.view);
          ASSERT_TRUE(cpu::max_pool_forward(g, x.view, y1.view, a1.view));
          EXPECT_TRUE(same_bits(y0, y1)) << "mixed layouts";
          EXPECT_TRUE(same_bits(a0, a1)) << "mixed layouts";
          Buf dx0 = make(dt, xs, lay, slice), dx1 = make(dt, xs, lay, slice);
          ref::max_pool_backward(g, y0.view, a0.view, x.view, dx0.view);
          ASSERT_TRUE(cpu::max_pool_backward(g, y0.view, a0.view, x.view, dx1.view));
          EXPECT_TRUE(same_bits(dx0, dx1)) << "mixed layouts";
          const DType it = runs % 2 ? DType::i32 : DType::u8;
          Buf xi = make(it, xs, lay, slice), yi0 = make(it, ys, lay, slice), yi1 = make(it, ys, lay, slice);
          fill(xi.view, rng, false);
          ref::max_pool_forward(g, xi.view, yi0.view, TensorView{});
          ASSERT_TRUE(cpu::max_pool_forward(g, xi.view, yi1.view, TensorView{}));
          EXPECT_TRUE(same_bits(yi0, yi1)) << dtype_name(it);
        }
  EXPECT_EQ(runs, 24);
  // adaptive pooling that keeps the depth (bins of one cell), and for contrast bins of two or more there
  for (int64_t T : {1, 3, 4})
    for (int64_t OT : {T, (T + 1) / 2})
      for (int64_t o : {1, 3})
        for (Layout lay : {Layout::ChannelsFirst, Layout::ChannelsLast}) {
          const Geometry g = adaptive_geometry({T, 7, 10}, {OT, o, o + 1});
          const DType dt = dts[runs % 4];
          ++runs;
          SCOPED_TRACE("adaptive T " + std::to_string(T) + " -> " + std::to_string(OT) + " o " + std::to_string(o) +
                       (lay == Layout::ChannelsLast ? " channels-last " : " channels-first ") + dtype_name(dt));
          expect_max_and_avg_match(g, dt, {2, 16, T, 7, 10}, {2, 16, OT, o, o + 1}, lay, runs % 3 == 0,
                                   {DType::u8, DType::i64}, rng);
        }
}

// The fast path declines a backward from this argmax and the public call raises the reference's IndexError.
void expect_refused(const Geometry& g, const TensorView& dy, const TensorView& am, const TensorView& dx) {
  EXPECT_FALSE(cpu::max_pool_backward(g, dy, am, TensorView{}, dx));
  try {
    max_pool_backward(g, dy, am, TensorView{}, dx);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Index);
  }
}

// Channels-last max backward of 64 channels and more (the gather's byte compares of 64 codes at once, on AVX-512)
// and the check of border windows' codes by a table: overlapping and strided windows with padding, blocks of 64
// channels with a tail, every float type, window-local and int64 argmax, gradients whose sums round.
TEST_F(CpuFast, ChannelsLastGatherOfManyChannelsMatchesReference) {
  struct Run {
    int64_t k, s, p, C;
  };
  const DType dts[] = {DType::f32, DType::bf16, DType::f16, DType::f64};
  int i = 0;
  const bool ahead = cpu::cpu_group_prefetch;
  // the float max forward's groups asking for their taps ahead or not (5x5: a tap count known at run time only)
  for (bool group_ahead : {true, false}) {
    cpu::cpu_group_prefetch = group_ahead;
    for (Run r : {Run{3, 2, 1, 64}, Run{3, 1, 1, 130}, Run{2, 1, 0, 64}, Run{3, 2, 0, 128}, Run{5, 2, 2, 64}})
      for (bool slice : {false, true}) {
        const DType dt = dts[i++ % 4];
        Geometry g = torch_geometry({9, 13}, {r.k, r.k}, {r.s, r.s}, {r.p, r.p}, {1, 1}, false);
        const std::vector<int64_t> out = g.output_size();
        SCOPED_TRACE("kernel " + std::to_string(r.k) + " stride " + std::to_string(r.s) + " C " +
                     std::to_string(r.C) + " " + dtype_name(dt) + " slice " + std::to_string(slice) +
                     " group prefetch " + std::to_string(group_ahead));
        expect_max_and_avg_match(g, dt, Shape{2, r.C, 9, 13}, Shape{2, r.C, out[0], out[1]}, Layout::ChannelsLast,
                                 slice, {DType::u8, DType::i16, DType::i32, DType::i64}, rng, Values::WideDy);
      }
    // 2x2x2 windows (pool3d's; eight taps, a count the groups are compiled for) over 64 channels
    for (DType dt : dts) {
      const Geometry g = torch_geometry({4, 6, 7}, {2, 2, 2}, {2, 2, 2}, {0, 0, 0}, {1, 1, 1}, false);
      SCOPED_TRACE(std::string("2x2x2 ") + dtype_name(dt) + " group prefetch " + std::to_string(group_ahead));
      expect_max_and_avg_match(g, dt, Shape{2, 64, 4, 6, 7}, Shape{2, 64, 2, 3, 3}, Layout::ChannelsLast, false,
                               {DType::u8, DType::i64}, rng, Values::WideDy);
    }
  }
  cpu::cpu_group_prefetch = ahead;
  // a border window's code that names a padding tap, or is negative, in the 16- and 32-bit forms
  Geometry g = torch_geometry({9, 13}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, false);  // 5 x 7 outputs
  for (DType form : {DType::i16, DType::i32})
    for (int64_t bad : {int64_t(0), int64_t(-1)}) {
      SCOPED_TRACE(std::string(dtype_name(form)) + " code " + std::to_string(bad));
      Buf am = make(form, {1, 70, 5, 7}, Layout::ChannelsLast, false), dy = make(DType::f32, {1, 70, 5, 7}, Layout::ChannelsLast, false);
      Buf dx = make(DType::f32, {1, 70, 9, 13}, Layout::ChannelsLast, false);
      for_each_index(am.view.shape, [&](const int64_t* at) { set(am.view, at, 4.0); });  // the centre: in every window
      const int64_t at[4] = {0, 65, 0, 3};  // output (0, 3): tap row 0 lies in the padding
      set(am.view, at, double(bad));
      fill(dy.view, rng, false);
      expect_refused(g, dy.view, am.view, dx.view);
    }
}

// bfloat16 values whose sums and averages are denormal floats, on the kernels that round by the AVX512_BF16
// instruction where the CPU has it (3x3 stride 2 planes, channels-last gather, tiles, overlapping averages, the
// row backward, streamed or not), with the instruction and without.
TEST_F(CpuFast, BFloat16DenormalSumsRoundAsReference) {
  const bool has = cpu::cpu_bf16_insn;
  const int64_t saved = cpu::stream_threshold_bytes.load();
  for (bool insn : {has, false})
    for (int64_t threshold : {saved, int64_t(0)}) {
      cpu::cpu_bf16_insn = insn, cpu::stream_threshold_bytes = threshold;
      for (int64_t k : {2, 3})
        for (Layout lay : {Layout::ChannelsFirst, Layout::ChannelsLast}) {
          SCOPED_TRACE("insn " + std::to_string(insn) + " threshold " + std::to_string(threshold) + " kernel " +
                       std::to_string(k) + " layout " + std::to_string(int(lay)));
          Geometry g = torch_geometry({24, 64}, {k, k}, {2, 2}, {k - 2, k - 2}, {1, 1}, false);
          const std::vector<int64_t> out = g.output_size();
          expect_max_and_avg_match(g, DType::bf16, Shape{2, 33, 24, 64}, Shape{2, 33, out[0], out[1]}, lay, false,
                                   {DType::u8, DType::i64}, rng, Values::Tiny);
        }
    }
  cpu::cpu_bf16_insn = has, cpu::stream_threshold_bytes = saved;
}

// A flat (int64) argmax naming a cell of the plane that is not in its window, or no cell at all, is refused too
// (it goes through the conversion to window-local codes first), for tiled and overlapping windows.
// Every output streamed past the cache (the threshold lowered to nothing): forward rows whose vector stores are
// all whole and aligned go by streaming stores (channels-last groups of 16 and more channels, channels-first
// rows of multiples of 16 outputs, few channels merged along W), the row backward through its line stream.
TEST_F(CpuFast, StreamedOutputsMatchReference) {
  struct Run {
    std::vector<int64_t> in, kernel, stride, pad;
    int64_t C;
    Layout layout;
    DType dt;
  };
  const Run runs[] = {
      {{32, 64}, {2, 2}, {2, 2}, {0, 0}, 3, Layout::ChannelsFirst, DType::f32},
      {{32, 32}, {2, 2}, {2, 2}, {0, 0}, 2, Layout::ChannelsLast, DType::f32},
      {{17, 23}, {3, 3}, {2, 2}, {1, 1}, 32, Layout::ChannelsLast, DType::f32},
      {{9, 12}, {3, 3}, {1, 1}, {1, 1}, 16, Layout::ChannelsLast, DType::f64},
      {{17, 23}, {3, 3}, {2, 2}, {1, 1}, 48, Layout::ChannelsLast, DType::bf16},
      {{8, 64}, {2, 2}, {2, 2}, {0, 0}, 2, Layout::ChannelsFirst, DType::f16},
      {{8, 6, 64}, {2, 2, 2}, {2, 2, 2}, {0, 0, 0}, 2, Layout::ChannelsFirst, DType::f32},
      // rows of whole lines whose last vector overlaps the one before (24 outputs, or 12 pairs of channels)
      {{6, 48}, {2, 2}, {2, 2}, {0, 0}, 3, Layout::ChannelsFirst, DType::f32},
      {{4, 24}, {2, 2}, {2, 2}, {0, 0}, 2, Layout::ChannelsLast, DType::f32},
  };
  const int64_t saved = cpu::stream_threshold_bytes.exchange(0);
  for (const Run& r : runs) {
    Geometry g = torch_geometry(r.in, r.kernel, r.stride, r.pad, std::vector<int64_t>(r.in.size(), 1), false);
    std::vector<int64_t> x{3, r.C}, y{3, r.C};
    x.insert(x.end(), r.in.begin(), r.in.end());
    const std::vector<int64_t> out = g.output_size();
    y.insert(y.end(), out.begin(), out.end());
    SCOPED_TRACE(Shape(x).str() + " " + dtype_name(r.dt) + " layout " + std::to_string(int(r.layout)));
    for (bool slice : {false, true})  // (a slice leaves room past the last row for the vector loads of stride 2)
      expect_max_and_avg_match(g, r.dt, Shape(x), Shape(y), r.layout, slice, {DType::u8, DType::i64}, rng);
  }
  cpu::stream_threshold_bytes = saved;
}

// Outputs starting inside a cache line (as an array of malloc's does, 16 bytes past one), streamed: the forward
// rows and the tiled backward then store each whole line made of two vectors' lanes, the lanes before the first
// line and after the last by ordinary stores; every shift of a float within a line, both layouts (channels-last:
// pairs of channels), the byte argmax 16 bytes past a line (streamed) and 1 byte past (not).
TEST_F(CpuFast, StreamedOutputsIntoShiftedRowsMatchReference) {
  auto shifted = [](DType dt, const Shape& s, Layout lay, int64_t shift) {  // poisoned around the view
    const Strides st = Tensor(dt, s, lay).view().strides;
    Buf b{Tensor(dt, Shape{s.numel() + 16}), {}};
    std::memset(b.storage.view().data, 0xA5, size_t((s.numel() + 16) * dtype_size(dt)));
    b.view = TensorView(static_cast<char*>(b.storage.view().data) + shift * dtype_size(dt), dt, s, st);
    return b;
  };
  const int64_t saved = cpu::stream_threshold_bytes.exchange(0);
  for (Layout lay : {Layout::ChannelsFirst, Layout::ChannelsLast})
    for (int64_t shift = 0; shift < 16; ++shift) {
      SCOPED_TRACE("layout " + std::to_string(int(lay)) + " shift " + std::to_string(shift));
      const int64_t C = lay == Layout::ChannelsFirst ? 3 : 2;
      const Shape xs{2, C, 8, 64}, ys{2, C, 4, 32};
      Geometry g = torch_geometry({8, 64}, {2, 2}, {2, 2}, {0, 0}, {1, 1}, false);
      Buf x = make(DType::f32, xs, lay, false), dy = make(DType::f32, ys, lay, false);
      fill(x.view, rng, true);
      fill(dy.view, rng, false);
      for (int64_t am_shift : {0, 1, 16}) {
        Buf y0 = shifted(DType::f32, ys, lay, shift), y1 = shifted(DType::f32, ys, lay, shift);
        Buf a0 = shifted(DType::u8, ys, lay, am_shift), a1 = shifted(DType::u8, ys, lay, am_shift);
        ref::max_pool_forward(g, x.view, y0.view, a0.view);
        ASSERT_TRUE(cpu::max_pool_forward(g, x.view, y1.view, a1.view));
        EXPECT_TRUE(same_bits(y0, y1) && same_bits(a0, a1)) << "byte argmax shifted " << am_shift;
        Buf y2 = shifted(DType::f32, ys, lay, shift);
        ASSERT_TRUE(cpu::max_pool_forward(g, x.view, y2.view, TensorView{}));
        EXPECT_TRUE(same_bits(y0, y2)) << "no argmax";
      }
      {
        Buf y0 = shifted(DType::f32, ys, lay, shift), y1 = shifted(DType::f32, ys, lay, shift);
        ref::avg_pool_forward(g, AvgOptions{}, x.view, y0.view);
        ASSERT_TRUE(cpu::avg_pool_forward(g, AvgOptions{}, x.view, y1.view));
        EXPECT_TRUE(same_bits(y0, y1)) << "average forward";
      }
      for (DType form : {DType::u8, DType::i64}) {
        Buf y = make(DType::f32, ys, lay, false), am = make(form, ys, lay, false);
        ref::max_pool_forward(g, x.view, y.view, am.view);
        Buf dx0 = shifted(DType::f32, xs, lay, shift), dx1 = shifted(DType::f32, xs, lay, shift);
        ref::max_pool_backward(g, dy.view, am.view, x.view, dx0.view);
        ASSERT_TRUE(cpu::max_pool_backward(g, dy.view, am.view, x.view, dx1.view));
        EXPECT_TRUE(same_bits(dx0, dx1)) << dtype_name(form);
      }
      Buf dx0 = shifted(DType::f32, xs, lay, shift), dx1 = shifted(DType::f32, xs, lay, shift);
      AvgOptions opt;
      ref::avg_pool_backward(g, opt, dy.view, dx0.view);
      ASSERT_TRUE(cpu::avg_pool_backward(g, opt, dy.view, dx1.view));
      EXPECT_TRUE(same_bits(dx0, dx1)) << "average";
    }
  cpu::stream_threshold_bytes = saved;
}

#if defined(__linux__)
// The backward streams dx only into memory already written: a fresh mapping reads as untouched until written.
TEST(PageState, FreshMappingIsUntouchedUntilWritten) {
  const size_t size = size_t(4) << 20;
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  char* c = static_cast<char*>(p);
  EXPECT_TRUE(cpu::untouched_page(c + 100));
  c[100] = 1;
  EXPECT_FALSE(cpu::untouched_page(c + 100));
  EXPECT_FALSE(cpu::untouched_page(c));  // the same page
  std::vector<float> warm(1 << 20, 1.0f);
  EXPECT_FALSE(cpu::untouched_page(warm.data() + 12345));
  munmap(p, size);
}
#endif

TEST_F(CpuFast, BadFlatArgmaxIsAnIndexError) {
  for (int64_t k : {2, 3})
    for (Layout lay : {Layout::ChannelsFirst, Layout::ChannelsLast})
      for (int64_t bad : {int64_t(15), int64_t(-1), int64_t(16)}) {
        Geometry g = torch_geometry({4, 4}, {k, k}, {2, 2}, {k - 2, k - 2}, {1, 1}, false);
        Buf am = make(DType::i64, {1, 3, 2, 2}, lay, false), dy = make(DType::f32, {1, 3, 2, 2}, lay, false);
        Buf dx = make(DType::f32, {1, 3, 4, 4}, lay, false);
        Buf x = make(DType::f32, {1, 3, 4, 4}, lay, false), y = make(DType::f32, {1, 3, 2, 2}, lay, false);
        fill(x.view, rng, false);
        fill(dy.view, rng, false);
        ref::max_pool_forward(g, x.view, y.view, am.view);  // valid indices, then one spoiled
        const int64_t at[4] = {0, 1, 0, 0};
        set(am.view, at, double(bad));  // cell 15 is in the last window only; -1 and 16 are no cell
        SCOPED_TRACE("kernel " + std::to_string(k) + " bad " + std::to_string(bad));
        expect_refused(g, dy.view, am.view, dx.view);
      }
}

// Window-local codes of overlapping windows with padding (the row accumulation, and the channels-last gather):
// a border window's code that names a padding tap (inside the kernel, outside the window: top row, left
// column, bottom row), and a code past the kernel's cells, each alone among valid codes.
TEST_F(CpuFast, BadArgmaxOfBorderWindowsIsAnIndexError) {
  Geometry g = torch_geometry({9, 40}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, false);  // 5 x 20 outputs
  struct Bad {
    int64_t oh, ow, code;
  };
  for (DType dt : {DType::f32, DType::bf16})
    for (Layout lay : {Layout::ChannelsFirst, Layout::ChannelsLast})
      for (Bad bad : {Bad{0, 5, 1}, Bad{2, 0, 3}, Bad{4, 19, 8}, Bad{3, 7, 9}, Bad{3, 19, 9}}) {
        SCOPED_TRACE(std::string(dtype_name(dt)) + " layout " + std::to_string(int(lay)) + " output (" +
                     std::to_string(bad.oh) + ", " + std::to_string(bad.ow) + ") code " + std::to_string(bad.code));
        Buf am = make(DType::u8, {1, 2, 5, 20}, lay, false), dy = make(dt, {1, 2, 5, 20}, lay, false);
        Buf dx = make(dt, {1, 2, 9, 40}, lay, false);
        uint8_t* a = static_cast<uint8_t*>(am.view.data);
        for (int64_t c = 0; c < 2; ++c)
          for (int64_t oh = 0; oh < 5; ++oh)
            for (int64_t ow = 0; ow < 20; ++ow)  // the centre tap: inside every window
              a[c * am.view.strides[1] + oh * am.view.strides[2] + ow * am.view.strides[3]] = 4;
        a[am.view.strides[1] + bad.oh * am.view.strides[2] + bad.ow * am.view.strides[3]] = uint8_t(bad.code);
        fill(dy.view, rng, false);
        expect_refused(g, dy.view, am.view, dx.view);
      }
}

// The same on rows wide enough for the vector conversion (whole windows, 40 outputs a row): values just before
// the window's first tap, inside its span but on no tap, at its span's end and beyond, and a tap's value plus or
// minus 2^32 or plus 2^31 (the conversion's lanes are the values' low halves).
TEST_F(CpuFast, BadFlatArgmaxInWideRowsIsAnIndexError) {
  const int64_t W = 80, span = W + 2;  // a 2x2 window's flat offsets: 0, 1, W, W + 1
  const int64_t wide = int64_t(1) << 32;
  Geometry g = torch_geometry({4, W}, {2, 2}, {2, 2}, {0, 0}, {1, 1}, false);
  for (Layout lay : {Layout::ChannelsFirst, Layout::ChannelsLast})
    for (int64_t r : {int64_t(-1), int64_t(2), W - 1, span, span + 5, wide + 1, -wide + W, wide / 2 + W + 1}) {
      Buf am = make(DType::i64, {1, 3, 2, W / 2}, lay, false), dy = make(DType::f32, {1, 3, 2, W / 2}, lay, false);
      Buf dx = make(DType::f32, {1, 3, 4, W}, lay, false);
      Buf x = make(DType::f32, {1, 3, 4, W}, lay, false), y = make(DType::f32, {1, 3, 2, W / 2}, lay, false);
      fill(x.view, rng, false);
      fill(dy.view, rng, false);
      ref::max_pool_forward(g, x.view, y.view, am.view);
      const int64_t at[4] = {0, 1, 1, 21};  // output (1, 21): its window starts at flat 2 * W + 42
      set(am.view, at, double(2 * W + 42 + r));
      SCOPED_TRACE("layout " + std::to_string(int(lay)) + " offset " + std::to_string(r));
      expect_refused(g, dy.view, am.view, dx.view);
    }
}

// Flat values of border windows turned into window-local codes, in channels-last rows of 32 channels (a vector of
// codes an output), channels-first planes (one run each) and views of both with every stride doubled (one value
// at a time): the
// reference's codes from its flat values; and refused, by the conversion itself and by the public call, a padding
// tap whose flat offset is that of a cell of the input (the left column of output (1, 0) lies one before row 2's
// start: the last cell of row 1), a top padding tap (a negative value), a bottom padding tap (a value one row past
// the plane), each in one lane and in every lane.
TEST_F(CpuFast, FlatArgmaxOfBorderWindowsToLocalCodes) {
  const int64_t H = 9, W = 20, C = 32;
  Geometry g = torch_geometry({H, W}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, false);  // 5 x 10 outputs
  const Shape xs{2, C, H, W}, ys{2, C, 5, 10};
  struct Bad {
    int64_t oh, ow, value;
  };
  for (Layout lay : {Layout::ChannelsLast, Layout::ChannelsFirst})
    for (bool spread : {false, true}) {  // (every stride doubled: the values one at a time)
      Buf x = make(DType::f32, xs, lay, false, spread), y = make(DType::f32, ys, lay, false, spread);
      fill(x.view, rng, false);
      auto saved = [&](DType form) {
        Buf am = make(form, ys, lay, false, spread);
        ref::max_pool_forward(g, x.view, y.view, am.view);
        return am;
      };
      Buf flat = saved(DType::i64), local = saved(DType::u8), codes = make(DType::u8, ys, lay, false, spread);
      SCOPED_TRACE("layout " + std::to_string(int(lay)) + " spread " + std::to_string(spread));
      ASSERT_TRUE(cpu::flat_argmax_to_local(cpu::as3d(g), flat.view, codes.view));
      EXPECT_TRUE(same_bits(local, codes));
      for (Bad bad : {Bad{1, 0, 2 * W - 1}, Bad{1, 0, W - 1}, Bad{0, 3, 6 - W}, Bad{4, 3, H * W + 5}})
        for (bool all_lanes : {false, true}) {
          SCOPED_TRACE("output (" + std::to_string(bad.oh) + ", " + std::to_string(bad.ow) + ") value " +
                       std::to_string(bad.value) + (all_lanes ? " in every lane" : " in one lane"));
          Buf am = saved(DType::i64), dy = make(DType::f32, ys, lay, false, spread);
          Buf dx = make(DType::f32, xs, lay, false, spread);
          fill(dy.view, rng, false);
          for (int64_t c = 0; c < (all_lanes ? C : 1); ++c) {
            const int64_t at[4] = {1, all_lanes ? c : 17, bad.oh, bad.ow};
            set(am.view, at, double(bad.value));
          }
          EXPECT_FALSE(cpu::flat_argmax_to_local(cpu::as3d(g), am.view, codes.view));
          expect_refused(g, dy.view, am.view, dx.view);
        }
    }
}

// A saved argmax that names a cell outside its window is not routed silently: the fast path declines and the
// public call raises the reference's IndexError.
TEST_F(CpuFast, BadArgmaxIsAnIndexError) {
  Geometry g = torch_geometry({4, 4}, {2, 2}, {2, 2}, {0, 0}, {1, 1}, false);
  for (Layout lay : {Layout::ChannelsFirst, Layout::ChannelsLast}) {
    Buf am = make(DType::u8, {1, 2, 2, 2}, lay, false), dy = make(DType::f32, {1, 2, 2, 2}, lay, false);
    Buf dx = make(DType::f32, {1, 2, 4, 4}, lay, false);
    std::memset(am.view.data, 0, 8);
    static_cast<uint8_t*>(am.view.data)[5] = 4;  // a 2x2 window has taps 0..3
    fill(dy.view, rng, false);
    expect_refused(g, dy.view, am.view, dx.view);
  }
}

}  // namespace
}  // namespace poolkit::test
