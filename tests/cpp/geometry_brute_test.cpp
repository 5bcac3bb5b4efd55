// Output sizes of every convention against brute force: the windows are enumerated one by one and counted, with
// no use of the output-size formula in src/geometry (the fast-vs-reference suites share that geometry, so they
// cannot see its mistakes). A geometry with a window that reads no input cell, or with none at all, is refused.
#include <optional>
#include <string>

#include "test_util.hpp"

namespace poolkit::test {
namespace {

struct Sweep1 {
  int64_t in, k, s, d;
};

// Every (in, kernel, stride, dilation) of the sweep.
template <class F>
void sweep(F&& f) {
  for (int64_t in = 1; in <= 11; ++in)
    for (int64_t k = 1; k <= 5; ++k)
      for (int64_t s = 1; s <= 4; ++s)
        for (int64_t d = 1; d <= 3; ++d) f(Sweep1{in, k, s, d});
}

// The windows of one axis with padding lo | hi, counted. Window o starts at o*s - lo and has taps start + j*d.
// Floor mode keeps the windows that lie inside the padded input. Ceil mode also keeps a window that hangs over
// its end, as long as it starts inside the input (or the left padding) and the window before it had not yet
// reached the end (for the first window: it overhangs by less than a stride). nullopt: refused (no window, or a
// window of padding alone).
std::optional<int64_t> count_windows(int64_t in, int64_t k, int64_t s, int64_t d, int64_t lo, int64_t hi,
                                     bool ceil_mode) {
  const int64_t span = d * (k - 1) + 1, end = in + hi;
  int64_t count = 0;
  for (int64_t o = 0;; ++o) {
    const int64_t start = o * s - lo;
    if (start >= end) break;
    const bool inside = start + span <= end;
    const bool overhang = ceil_mode && start < in && start - s + span < end;
    if (!inside && !overhang) break;  // (neither holds again for later windows)
    bool reads = false;
    for (int64_t j = 0; j < k; ++j) reads |= start + j * d >= 0 && start + j * d < in;
    if (!reads) return std::nullopt;
    ++count;
  }
  if (count == 0) return std::nullopt;
  return count;
}

// For 'same' rules: the outputs are the windows anchored at o*s < in; the total padding is the least that lets
// all of them fit.
struct Same {
  int64_t out, total;
};
Same same_rule(int64_t in, int64_t span, int64_t s) {
  Same r{0, 0};
  while (r.out * s < in) ++r.out;
  while ((r.out - 1) * s + span > in + r.total) ++r.total;
  return r;
}

std::string what(const char* conv, const Sweep1& c, int64_t lo, int64_t hi, bool ceil_mode) {
  return std::string(conv) + " in=" + std::to_string(c.in) + " k=" + std::to_string(c.k) + " s=" +
         std::to_string(c.s) + " d=" + std::to_string(c.d) + " pads=" + std::to_string(lo) + "|" +
         std::to_string(hi) + " ceil=" + std::to_string(ceil_mode);
}

// The geometry built by `build` has axis (out, lo, hi) as expected, or is refused when `want` is nullopt.
template <class Build>
void expect_axis(Build&& build, std::optional<int64_t> want, int64_t lo, int64_t hi, const std::string& label,
                 int64_t& refused) {
  std::optional<Axis> a;
  try {
    a = build().axes[0];
  } catch (const Error&) {
  }
  if (!want) {
    EXPECT_FALSE(a.has_value()) << label << ": accepted with output " << a->out << ", brute force refuses";
    ++refused;
    return;
  }
  ASSERT_TRUE(a.has_value()) << label << ": refused, brute force counts " << *want << " windows";
  EXPECT_EQ(a->out, *want) << label;
  EXPECT_EQ(a->pad_lo, lo) << label;
  EXPECT_EQ(a->pad_hi, hi) << label;
}

TEST(GeometryBrute, Torch) {
  int64_t cases = 0, refused = 0;
  sweep([&](const Sweep1& c) {
    const int64_t span = c.d * (c.k - 1) + 1;
    for (int64_t p = 0; p <= span / 2 + 1; ++p)
      for (bool ceil_mode : {false, true}) {
        // PyTorch checks the padding against the undilated kernel (p <= k / 2), whatever the dilation
        auto want = p > c.k / 2 ? std::nullopt : count_windows(c.in, c.k, c.s, c.d, p, p, ceil_mode);
        expect_axis([&] { return torch_geometry({c.in}, {c.k}, {c.s}, {p}, {c.d}, ceil_mode); }, want, p, p,
                    what("torch", c, p, p, ceil_mode), refused);
        ++cases;
      }
  });
  EXPECT_GT(refused, 0);
  EXPECT_GT(cases - refused, 2000);
}

TEST(GeometryBrute, TorchStrideDefaultsToKernelOnEveryAxis) {
  for (int64_t in = 1; in <= 11; ++in)
    for (int64_t k = 1; k <= in; ++k) {
      Geometry g = torch_geometry({in, in + 1}, {k, 1}, {}, {0}, {1}, false);
      EXPECT_EQ(g.axes[0].out, *count_windows(in, k, k, 1, 0, 0, false));
      EXPECT_EQ(g.axes[1].out, in + 1);
    }
}

TEST(GeometryBrute, Keras) {
  int64_t refused = 0;
  sweep([&](const Sweep1& c) {
    if (c.d != 1) return;  // Keras has no dilation
    expect_axis([&] { return keras_geometry({c.in}, {c.k}, {c.s}, "valid"); },
                count_windows(c.in, c.k, c.s, 1, 0, 0, false), 0, 0, what("keras valid", c, 0, 0, false), refused);
    Same same = same_rule(c.in, c.k, c.s);  // the odd padding cell at the end
    expect_axis([&] { return keras_geometry({c.in}, {c.k}, {c.s}, "same"); }, same.out, same.total / 2,
                same.total - same.total / 2, what("keras same", c, same.total / 2, same.total - same.total / 2, false),
                refused);
  });
  EXPECT_GT(refused, 0);  // 'valid' with a pool larger than the input
}

TEST(GeometryBrute, OnnxPads) {
  int64_t cases = 0, refused = 0;
  sweep([&](const Sweep1& c) {
    const int64_t span = c.d * (c.k - 1) + 1;
    for (int64_t lo = 0; lo < span; ++lo)
      for (int64_t hi = 0; hi < span; ++hi)
        for (bool ceil_mode : {false, true}) {
          OnnxParams p;
          p.kernel_shape = {c.k}, p.strides = {c.s}, p.dilations = {c.d}, p.pads = {lo, hi}, p.ceil_mode = ceil_mode;
          expect_axis([&] { return onnx_geometry({c.in}, p); }, count_windows(c.in, c.k, c.s, c.d, lo, hi, ceil_mode),
                      lo, hi, what("onnx pads", c, lo, hi, ceil_mode), refused);
          ++cases;
        }
  });
  EXPECT_GT(refused, 0);
  EXPECT_GT(cases - refused, 5000);
}

TEST(GeometryBrute, OnnxAutoPad) {
  int64_t refused = 0;
  sweep([&](const Sweep1& c) {
    const int64_t span = c.d * (c.k - 1) + 1;
    for (bool ceil_mode : {false, true}) {
      OnnxParams p;
      p.kernel_shape = {c.k}, p.strides = {c.s}, p.dilations = {c.d}, p.ceil_mode = ceil_mode;
      p.auto_pad = "VALID";
      expect_axis([&] { return onnx_geometry({c.in}, p); }, count_windows(c.in, c.k, c.s, c.d, 0, 0, ceil_mode), 0,
                  0, what("onnx VALID", c, 0, 0, ceil_mode), refused);
      Same same = same_rule(c.in, span, c.s);
      const int64_t small = same.total / 2, large = same.total - small;
      // the windows anchored in the input must each read a cell (a dilated window can step over a short input)
      const auto upper = count_windows(c.in, c.k, c.s, c.d, small, large, false);
      const auto lower = count_windows(c.in, c.k, c.s, c.d, large, small, false);
      p.auto_pad = "SAME_UPPER";
      expect_axis([&] { return onnx_geometry({c.in}, p); }, upper ? std::optional<int64_t>(same.out) : std::nullopt,
                  small, large, what("onnx SAME_UPPER", c, small, large, ceil_mode), refused);
      p.auto_pad = "SAME_LOWER";
      expect_axis([&] { return onnx_geometry({c.in}, p); }, lower ? std::optional<int64_t>(same.out) : std::nullopt,
                  large, small, what("onnx SAME_LOWER", c, large, small, ceil_mode), refused);
    }
  });
  EXPECT_GT(refused, 0);
}

TEST(GeometryBrute, EveryAxisOfARank3Geometry) {
  // Each axis counted on its own, in every position.
  for (int64_t a = 1; a <= 7; ++a)
    for (int64_t k = 1; k <= 3; ++k) {
      OnnxParams p;
      p.kernel_shape = {k, 2, 3}, p.strides = {2, 1, 3}, p.pads = {0, 1, k - 1, 1, 0, 0}, p.ceil_mode = true;
      auto want = count_windows(a, k, 2, 1, 0, 1, true);
      if (!want) continue;
      Geometry g = onnx_geometry({a, a + 2, a + 3}, p);
      EXPECT_EQ(g.axes[0].out, *want);
      EXPECT_EQ(g.axes[1].out, *count_windows(a + 2, 2, 1, 1, 1, 0, true));
      EXPECT_EQ(g.axes[2].out, *count_windows(a + 3, 3, 3, 1, k - 1, 0, true));
    }
}

}  // namespace
}  // namespace poolkit::test
