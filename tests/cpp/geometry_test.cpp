// Output sizes and window arithmetic of every convention, against hand-computed cases and brute force.
#include <random>
#include <set>

#include "test_util.hpp"

namespace poolkit::test {
namespace {

using V = std::vector<int64_t>;

TEST(Geometry, TorchCeilModeKeepsTheLastWindowInside) {
  // in 5, k 2, s 2, p 1: ceil gives 4 windows, but the 4th would start at 6 >= 5 + 1, so 3.
  EXPECT_EQ(torch_geometry({5}, {2}, {2}, {1}, {1}, true).axes[0].out, 3);
  EXPECT_EQ(torch_geometry({5}, {2}, {2}, {1}, {1}, false).axes[0].out, 3);
  EXPECT_EQ(torch_geometry({6}, {3}, {2}, {0}, {1}, true).axes[0].out, 3);   // (6-3+1)/2+1
  EXPECT_EQ(torch_geometry({6}, {3}, {2}, {0}, {1}, false).axes[0].out, 2);
  // dilation 2, k 3: effective kernel 5; (10 + 2 - 5) / 3 + 1 = 3
  EXPECT_EQ(torch_geometry({10}, {3}, {3}, {1}, {2}, false).axes[0].out, 3);
  EXPECT_EQ(torch_geometry({10}, {3}, {}, {}, {}, false).axes[0].stride, 3);  // stride defaults to the kernel
}

TEST(Geometry, KerasSamePutsTheOddCellAtTheEnd) {
  Geometry g = keras_geometry({7, 6, 5}, {2, 3, 3}, {2, 2, 1}, "same");
  EXPECT_EQ(g.output_size(), (V{4, 3, 5}));  // ceil(in / s)
  EXPECT_EQ(g.axes[0].pad_lo, 0); EXPECT_EQ(g.axes[0].pad_hi, 1);  // total (4-1)*2+2-7 = 1
  EXPECT_EQ(g.axes[1].pad_lo, 0); EXPECT_EQ(g.axes[1].pad_hi, 1);  // total (3-1)*2+3-6 = 1
  EXPECT_EQ(g.axes[2].pad_lo, 1); EXPECT_EQ(g.axes[2].pad_hi, 1);  // total 2
  Geometry v = keras_geometry({7}, {2}, {}, "valid");
  EXPECT_EQ(v.axes[0].out, 3);
  EXPECT_EQ(v.axes[0].stride, 2);
}

TEST(Geometry, OnnxPadsAndAutoPad) {
  OnnxParams p;
  p.kernel_shape = {3, 3};
  p.strides = {2, 2};
  p.pads = {0, 1, 1, 0};  // begins (0, 1), ends (1, 0)
  Geometry g = onnx_geometry({5, 5}, p);
  EXPECT_EQ(g.axes[0].pad_lo, 0); EXPECT_EQ(g.axes[0].pad_hi, 1);
  EXPECT_EQ(g.axes[1].pad_lo, 1); EXPECT_EQ(g.axes[1].pad_hi, 0);
  EXPECT_EQ(g.output_size(), (V{2, 2}));  // (5 + 1 - 3) / 2 + 1
  p.pads.clear();
  p.auto_pad = "SAME_LOWER";
  Geometry lower = onnx_geometry({6, 6}, p);  // out 3, total (3-1)*2+3-6 = 1, the odd cell first
  EXPECT_EQ(lower.axes[0].pad_lo, 1); EXPECT_EQ(lower.axes[0].pad_hi, 0);
  p.auto_pad = "SAME_UPPER";
  Geometry upper = onnx_geometry({6, 6}, p);
  EXPECT_EQ(upper.axes[0].pad_lo, 0); EXPECT_EQ(upper.axes[0].pad_hi, 1);
  p.auto_pad = "VALID";
  EXPECT_EQ(onnx_geometry({6, 6}, p).output_size(), (V{2, 2}));
}

TEST(Geometry, AdaptiveBins) {
  // in 5, out 3: [0, 2), [1, 4), [3, 5) from floor(i*5/3) and ceil((i+1)*5/3)
  Axis a = adaptive_geometry({5}, {3}).axes[0];
  EXPECT_EQ(a.kernel, 3);
  int64_t want[3][2] = {{0, 2}, {1, 4}, {3, 5}};
  for (int o = 0; o < 3; ++o) {
    Range r = a.valid_taps(o);
    EXPECT_EQ(a.position(o, r.begin), want[o][0]);
    EXPECT_EQ(a.position(o, r.end - 1) + 1, want[o][1]);
  }
  // larger output than input: in 3, out 5 -> [0,1) [0,2) [1,2) [1,3) [2,3)
  Axis b = adaptive_geometry({3}, {5}).axes[0];
  int64_t up[5][2] = {{0, 1}, {0, 2}, {1, 2}, {1, 3}, {2, 3}};
  for (int o = 0; o < 5; ++o) {
    EXPECT_EQ(b.origin(o), up[o][0]);
    EXPECT_EQ(b.origin(o) + b.taps(o), up[o][1]);
  }
}

TEST(Geometry, FractionalSequence) {
  // in 10, out 4, kernel 2, u = 0.5 in float: alpha = 8/3; int((i + .5) * alpha) - int(.5 * alpha) = 0, 3, 5;
  // the last window ends the input: 10 - 2 = 8.
  Geometry g = fractional_geometry({10}, {4}, {2});
  double u = 0.5;
  Axis a = with_fractional_samples(g, &u).axes[0];
  EXPECT_EQ((V{a.origin(0), a.origin(1), a.origin(2), a.origin(3)}), (V{0, 3, 5, 8}));
  EXPECT_EQ(fractional_output_size({10, 9}, {0.5}, {2}), (V{5, 4}));
}

TEST(Geometry, UnpoolOutputSize) {
  EXPECT_EQ(unpool_output_size({4, 5}, {2}, {}, {0}, std::nullopt), (V{8, 10}));
  EXPECT_EQ(unpool_output_size({4}, {3}, {2}, {1}, std::nullopt), (V{7}));  // (4-1)*2 + 3 - 2
  EXPECT_EQ(unpool_output_size({4}, {3}, {2}, {1}, V{8}), (V{8}));
  EXPECT_EQ(unpool_output_size({4}, {3}, {2}, {1}, V{1, 1, 6}), (V{6}));
  EXPECT_THROW(unpool_output_size({4}, {3}, {2}, {1}, V{9}), Error);
}

// covering(i) + tap_at must name exactly the windows that read i, found by scanning every window.
void check_covering(const Axis& a) {
  for (int64_t i = 0; i < a.in; ++i) {
    std::set<int64_t> brute, fast;
    for (int64_t o = 0; o < a.out; ++o) {
      Range r = a.valid_taps(o);
      for (int64_t j = r.begin; j < r.end; ++j)
        if (a.position(o, j) == i) brute.insert(o);
    }
    Range c = a.covering(i);
    for (int64_t o = c.begin; o < c.end; ++o)
      if (a.tap_at(o, i) >= 0) fast.insert(o);
    ASSERT_EQ(brute, fast) << "input " << i << " kind " << int(a.kind) << " in " << a.in << " out " << a.out;
  }
  for (int64_t o = 0; o < a.out; ++o) {  // valid taps really are inside and all the others outside
    Range r = a.valid_taps(o);
    for (int64_t j = 0; j < a.taps(o); ++j) {
      int64_t p = a.position(o, j);
      ASSERT_EQ(p >= 0 && p < a.in, j >= r.begin && j < r.end) << "window " << o << " tap " << j;
    }
  }
}

TEST(Geometry, CoveringMatchesBruteForce) {
  std::mt19937 rng(7);
  auto pick = [&](int lo, int hi) { return int64_t(std::uniform_int_distribution<int>(lo, hi)(rng)); };
  int checked = 0;
  for (int t = 0; t < 3000; ++t) {
    int64_t in = pick(1, 20), k = pick(1, 5), s = pick(1, 4), d = pick(1, 3), lo = pick(0, 3), hi = pick(0, 3);
    try {
      RegularParams p{{k}, {s}, {d}, {lo}, {hi}, bool(pick(0, 1))};
      check_covering(regular_geometry({in}, p).axes[0]);
      ++checked;
    } catch (const Error&) {
    }
    check_covering(adaptive_geometry({in}, {pick(1, 25)}).axes[0]);
    int64_t out = pick(1, in), fk = pick(1, in - out + 1);
    double u = std::uniform_real_distribution<double>(0, 1)(rng);
    check_covering(with_fractional_samples(fractional_geometry({in}, {out}, {fk}, bool(pick(0, 1))), &u).axes[0]);
  }
  check_covering(global_geometry({9}).axes[0]);
  EXPECT_GT(checked, 1000);
}

TEST(Geometry, DivisorCountsPaddingOnlyUpToItsEnd) {
  // in 5, k 3, s 2, p 1, ceil: windows start at -1, 1, 3; the last reads 3, 4 and the pad cell 5.
  Axis a = torch_geometry({5}, {3}, {2}, {1}, {1}, true).axes[0];
  ASSERT_EQ(a.out, 3);
  EXPECT_EQ(a.divisor(0, true), 3); EXPECT_EQ(a.divisor(0, false), 2);
  EXPECT_EQ(a.divisor(2, true), 3); EXPECT_EQ(a.divisor(2, false), 2);
  // in 6, k 3, s 2, p 1, ceil: out (6+2-3+1)/2+1 = 4, last starts at 5: cells 5 and pad 6; tap 7 is beyond it.
  Axis b = torch_geometry({6}, {3}, {2}, {1}, {1}, true).axes[0];
  ASSERT_EQ(b.out, 4);
  EXPECT_EQ(b.divisor(3, true), 2);
  EXPECT_EQ(b.divisor(3, false), 1);
}

}  // namespace
}  // namespace poolkit::test
