// Integer max pooling on the fast CPU path (src/cpu: kernels_int.cpp through the forward drivers) against the
// reference, for uint8, int8, int16, int32 and int64: widths around the vector lengths (64 lanes of 8-bit on
// AVX-512, 32 of 16-bit, ...), both layouts, channel counts filling whole vectors or not, padding, dilation,
// ceil mode, sliced views, adaptive and global windows, 1-D to 3-D, every argmax form, streaming stores. Values
// tie often and reach each type's extremes. Outputs are poisoned first; results must match bit for bit.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <random>

#include "backends.hpp"
#include "cpu/common.hpp"
#include "test_util.hpp"

namespace poolkit::test {
namespace {

const DType kInts[] = {DType::u8, DType::i8, DType::i16, DType::i32, DType::i64};

// Few distinct values (ties), the type's lowest and highest among them.
void fill_ints(const TensorView& t, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> v(0, 6);
  const double lo = t.dtype == DType::u8 ? 0 : t.dtype == DType::i8 ? -128 : t.dtype == DType::i16 ? -32768
                    : t.dtype == DType::i32 ? -2147483648.0 : -9223372036854775808.0;
  const double hi = t.dtype == DType::u8 ? 255 : t.dtype == DType::i8 ? 127 : t.dtype == DType::i16 ? 32767
                    : t.dtype == DType::i32 ? 2147483647.0 : 4611686018427387904.0;
  for_each_index(t.shape, [&](const int64_t* i) {
    int r = v(rng);
    set(t, i, r == 0 ? lo : r == 6 ? hi : r + (t.dtype == DType::u8 ? 0 : -3));
  });
}

struct Buf {
  Tensor storage;
  TensorView view;
};
// A tensor, or (slice) a view of rows and planes of a bigger one; every byte poisoned.
Buf make(DType dt, const Shape& s, Layout layout, bool slice) {
  Shape big = s;
  if (slice) big[0] += 1, big[s.rank - 1] += 3;
  Buf b{Tensor(dt, big, layout), {}};
  std::memset(b.storage.view().data, 0xA5, size_t(big.numel() * dtype_size(dt)));
  b.view = TensorView(b.storage.view().data, dt, s, b.storage.view().strides);
  return b;
}
bool same_bits(const Buf& a, const Buf& b) {
  return std::memcmp(a.storage.view().data, b.storage.view().data,
                     size_t(a.storage.numel() * dtype_size(a.storage.dtype()))) == 0;
}

void expect_match(const Geometry& g, int64_t N, int64_t C, Layout lay, bool slice, std::mt19937_64& rng) {
  Shape xs, ys;
  xs.rank = ys.rank = g.rank + 2;
  xs[0] = ys[0] = N, xs[1] = ys[1] = C;
  for (int i = 0; i < g.rank; ++i) xs[i + 2] = g.axes[i].in, ys[i + 2] = g.axes[i].out;
  if (lay == Layout::ChannelsLast && g.rank != 2) lay = Layout::ChannelsFirst;
  for (DType dt : kInts) {
    Buf x = make(dt, xs, lay, slice);
    fill_ints(x.view, rng);
    for (int f = -1; f < 4; ++f) {
      const DType form = f < 0 ? DType::u8 : kInts[f == 0 ? 0 : f + 1];  // none, u8, i16, i32, i64
      if (f >= 0 && form != DType::i64 && g.window_cells() > (form == DType::u8 ? 255 : 32767)) continue;
      SCOPED_TRACE(std::string(dtype_name(dt)) + (f < 0 ? " no argmax" : std::string(" argmax ") + dtype_name(form)));
      Buf y0 = make(dt, ys, lay, slice), y1 = make(dt, ys, lay, slice);
      Buf a0 = make(form, ys, lay, slice), a1 = make(form, ys, lay, slice);
      const TensorView am0 = f < 0 ? TensorView{} : a0.view, am1 = f < 0 ? TensorView{} : a1.view;
      ref::max_pool_forward(g, x.view, y0.view, am0);
      ASSERT_TRUE(cpu::max_pool_forward(g, x.view, y1.view, am1));
      EXPECT_TRUE(same_bits(y0, y1));
      if (f >= 0) {
        EXPECT_TRUE(same_bits(a0, a1));
      }
    }
  }
}

class CpuInt : public ::testing::Test {
 protected:
  std::mt19937_64 rng{2121};
};

TEST_F(CpuInt, WindowsAroundVectorWidthsMatchReference) {
  const int64_t widths[] = {1, 5, 33, 63, 64, 65, 129, 130};
  struct K { int64_t k, s, p, d; bool ceil; };
  const K ks[] = {{2, 2, 0, 1, false}, {3, 2, 1, 1, false}, {3, 1, 1, 1, false}, {3, 2, 1, 2, true}, {1, 1, 0, 1, false}};
  for (int64_t w : widths)
    for (const K& k : ks)
      for (Layout lay : {Layout::ChannelsFirst, Layout::ChannelsLast})
        for (int64_t C : {int64_t(1), int64_t(3), int64_t(64)}) {
          if (w < (k.k - 1) * k.d + 1 - 2 * k.p) continue;
          SCOPED_TRACE("W " + std::to_string(w) + " k " + std::to_string(k.k) + " s " + std::to_string(k.s) + " C " +
                       std::to_string(C) + (lay == Layout::ChannelsLast ? " channels-last" : ""));
          Geometry g = torch_geometry({3, w}, {k.k, k.k}, {k.s, k.s}, {k.p, k.p}, {k.d, k.d}, k.ceil);
          expect_match(g, 2, C, lay, w == 65, rng);
        }
}

TEST_F(CpuInt, AdaptiveGlobalAndOtherRanksMatchReference) {
  for (Layout lay : {Layout::ChannelsFirst, Layout::ChannelsLast})
    for (int64_t C : {int64_t(2), int64_t(70), int64_t(128)}) {
      SCOPED_TRACE("C " + std::to_string(C) + (lay == Layout::ChannelsLast ? " channels-last" : ""));
      expect_match(adaptive_geometry({7, 9}, {3, 4}), 2, C, lay, false, rng);
      expect_match(global_geometry({6, 5}), 2, C, lay, C == 70, rng);
      expect_match(torch_geometry({67}, {3}, {2}, {1}, {1}, false), 2, C, lay, false, rng);
      expect_match(torch_geometry({3, 4, 66}, {2, 2, 2}, {2, 2, 2}, {0, 0, 0}, {1, 1, 1}, true), 1, C, lay, false, rng);
      expect_match(global_geometry({17, 17}), 1, C, lay, false, rng);  // 289 cells: tap numbers past one byte
    }
}

TEST_F(CpuInt, ChannelsLastFewChannelsAtStrideTwoMatchReference) {
  // (channels-last rows of 2, 4 or 8 channels read as every other unit of 2-8 bytes)
  for (int64_t w : {int64_t(63), int64_t(64), int64_t(130)})
    for (int64_t C : {int64_t(2), int64_t(4), int64_t(8)}) {
      SCOPED_TRACE("W " + std::to_string(w) + " C " + std::to_string(C));
      expect_match(torch_geometry({2, w}, {2, 2}, {2, 2}, {0, 0}, {1, 1}, false), 2, C, Layout::ChannelsLast, false, rng);
      expect_match(torch_geometry({3, w}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, true), 1, C, Layout::ChannelsLast, w == 64, rng);
    }
}

TEST_F(CpuInt, ThreeByThreeStrideTwoPlanesMatchReference) {
  // (channels-first 3x3 stride 2 without an argmax: the separable kernel, rows around its vector widths)
  for (int64_t h : {int64_t(7), int64_t(8)})
    for (int64_t w : {int64_t(32), int64_t(33), int64_t(64), int64_t(112), int64_t(130)})
      for (int64_t p : {int64_t(0), int64_t(1)})
        for (bool ceil : {false, true}) {
          SCOPED_TRACE("H " + std::to_string(h) + " W " + std::to_string(w) + " pad " + std::to_string(p) +
                       (ceil ? " ceil" : ""));
          expect_match(torch_geometry({h, w}, {3, 3}, {2, 2}, {p, p}, {1, 1}, ceil), 2, 3, Layout::ChannelsFirst,
                       w == 33, rng);
        }
}

TEST_F(CpuInt, TwoByTwoStrideTwoRowsOf32MatchReference) {
  // (channels-first planes 32 wide packed back to back: two output rows to a vector, an odd row at the end alone)
  struct P { int64_t n, c, h; };
  for (const P& p : {P{1, 1, 2}, P{1, 1, 34}, P{2, 3, 6}, P{3, 5, 4}, P{2, 2, 7}})
    for (bool slice : {false, true}) {
      SCOPED_TRACE("N " + std::to_string(p.n) + " C " + std::to_string(p.c) + " H " + std::to_string(p.h) +
                   (slice ? " sliced" : ""));
      expect_match(torch_geometry({p.h, 32}, {2, 2}, {2, 2}, {0, 0}, {1, 1}, false), p.n, p.c, Layout::ChannelsFirst,
                   slice, rng);
    }
  const int64_t saved = cpu::stream_threshold_bytes.load();
  cpu::stream_threshold_bytes = 0;  // streaming stores
  expect_match(torch_geometry({8, 32}, {2, 2}, {2, 2}, {0, 0}, {1, 1}, false), 4, 5, Layout::ChannelsFirst, false, rng);
  cpu::stream_threshold_bytes = saved;
}

TEST_F(CpuInt, StreamingStoresMatchReference) {
  const int64_t saved = cpu::stream_threshold_bytes.load();
  cpu::stream_threshold_bytes = 0;  // every output past the cache: whole aligned rows stream
  for (Layout lay : {Layout::ChannelsFirst, Layout::ChannelsLast}) {
    expect_match(torch_geometry({4, 256}, {2, 2}, {2, 2}, {0, 0}, {1, 1}, false), 1, 64, lay, false, rng);
    expect_match(torch_geometry({5, 258}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, false), 1, 64, lay, false, rng);
    // (rows of 128 outputs: the 3x3 kernel's int64 indices stream whole lines)
    expect_match(torch_geometry({5, 256}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, false), 1, 4, lay, false, rng);
  }
  cpu::stream_threshold_bytes = saved;
}

}  // namespace
}  // namespace poolkit::test
