// Fuzzes the geometry builders with arbitrary int64 arguments, hostile ones included. Every call must either
// raise poolkit::Error or return a geometry whose windows are consistent: each window reads at least one input
// cell, tap positions lie inside the input, and covering() finds exactly the windows that read a cell. Any
// other exception, a sanitizer report or a hang is a finding.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fuzz_check.hpp"
#include "poolkit/error.hpp"
#include "poolkit/geometry.hpp"
#include "poolkit/ops.hpp"

using namespace poolkit;

namespace {

// Mostly small values (so that builders succeed and the invariants get checked), sometimes anything at all.
int64_t value(FuzzedDataProvider& f, int64_t lo, int64_t hi) {
  switch (f.ConsumeIntegralInRange<int>(0, 7)) {
    case 0: return f.ConsumeIntegral<int64_t>();
    case 1: return INT64_MAX - f.ConsumeIntegralInRange<int64_t>(0, 3);
    case 2: return f.ConsumeIntegralInRange<int64_t>(-2, 0);
    default: return f.ConsumeIntegralInRange<int64_t>(lo, hi);
  }
}

// A per-axis list: empty, one value, one per axis, or a wrong length.
std::vector<int64_t> list(FuzzedDataProvider& f, size_t rank, int64_t lo, int64_t hi) {
  size_t len;
  switch (f.ConsumeIntegralInRange<int>(0, 5)) {
    case 0: len = 0; break;
    case 1: len = 1; break;
    case 2: len = rank + 1; break;
    default: len = rank; break;
  }
  std::vector<int64_t> v(len);
  for (auto& x : v) x = value(f, lo, hi);
  return v;
}

void check_axis(const Axis& a, int i) {
  // Fractional pooling may have an output size of 0 (PyTorch's empty output); no other axis may.
  const int64_t min_out = a.kind == AxisKind::Fractional ? 0 : 1;
  FUZZ_CHECK(a.in >= 1 && a.out >= min_out && a.kernel >= 1, "axis %d: in %lld out %lld kernel %lld", i, (long long)a.in,
             (long long)a.out, (long long)a.kernel);
  if (a.out == 0) return;  // no windows
  // Windows at both ends and in the middle.
  std::vector<int64_t> outs{0, a.out / 2, a.out - 1};
  if (a.out <= 64)
    for (int64_t o = 0; o < a.out; ++o) outs.push_back(o);
  for (int64_t o : outs) {
    int64_t k = a.taps(o);
    FUZZ_CHECK(k >= 1 && k <= a.kernel, "axis %d window %lld has %lld taps, kernel %lld", i, (long long)o,
               (long long)k, (long long)a.kernel);
    Range r = a.valid_taps(o);
    FUZZ_CHECK(r.begin >= 0 && r.begin < r.end && r.end <= k, "axis %d window %lld reads no cell: taps [%lld, %lld)",
               i, (long long)o, (long long)r.begin, (long long)r.end);
    for (int64_t j : {r.begin, r.end - 1}) {
      int64_t p = a.position(o, j);
      FUZZ_CHECK(p >= 0 && p < a.in, "axis %d window %lld tap %lld at %lld outside [0, %lld)", i, (long long)o,
                 (long long)j, (long long)p, (long long)a.in);
      FUZZ_CHECK(a.tap_at(o, p) == j, "axis %d: tap_at(%lld, %lld) != %lld", i, (long long)o, (long long)p,
                 (long long)j);
    }
    if (r.begin > 0) FUZZ_CHECK(a.position(o, r.begin - 1) < 0, "axis %d window %lld: a valid tap skipped", i, (long long)o);
    if (r.end < k) FUZZ_CHECK(a.position(o, r.end) >= a.in, "axis %d window %lld: a valid tap cut", i, (long long)o);
  }
  // covering(i) must hold every window that reads i; the neighbours outside it must not read i.
  std::vector<int64_t> cells{0, a.in / 2, a.in - 1};
  if (a.in <= 64)
    for (int64_t c = 0; c < a.in; ++c) cells.push_back(c);
  for (int64_t c : cells) {
    Range cov = a.covering(c);
    FUZZ_CHECK(cov.begin >= 0 && cov.begin <= cov.end && cov.end <= a.out, "axis %d covering(%lld) = [%lld, %lld)",
               i, (long long)c, (long long)cov.begin, (long long)cov.end);
    if (cov.begin > 0) FUZZ_CHECK(a.tap_at(cov.begin - 1, c) < 0, "axis %d: covering(%lld) misses a window", i, (long long)c);
    if (cov.end < a.out) FUZZ_CHECK(a.tap_at(cov.end, c) < 0, "axis %d: covering(%lld) misses a window", i, (long long)c);
    if (a.out <= 64)
      for (int64_t o = 0; o < a.out; ++o)
        if (a.tap_at(o, c) >= 0) {
          Range r = a.valid_taps(o);
          FUZZ_CHECK(o >= cov.begin && o < cov.end, "axis %d: window %lld reads %lld outside covering", i,
                     (long long)o, (long long)c);
          FUZZ_CHECK(a.tap_at(o, c) >= r.begin && a.tap_at(o, c) < r.end, "axis %d: tap outside valid range", i);
        }
  }
}

void check(const Geometry& g) {
  FUZZ_CHECK(g.rank >= 1 && g.rank <= kMaxSpatial, "rank %d", g.rank);
  int64_t plane_out = 1;
  for (int i = 0; i < g.rank; ++i) {
    check_axis(g.axes[i], i);
    plane_out *= g.axes[i].out;
  }
  FUZZ_CHECK(g.plane_in() >= 1 && g.plane_out() == plane_out, "plane sizes");
  try {
    DType t = local_argmax_dtype(g);
    FUZZ_CHECK(t == DType::u8 || t == DType::i16 || t == DType::i32, "local argmax dtype");
  } catch (const Error& e) {
    FUZZ_CHECK(e.kind() == ErrorKind::Overflow, "local_argmax_dtype: %s", e.what());
  }
}

void build(FuzzedDataProvider& f) {
  size_t rank = f.ConsumeIntegralInRange<size_t>(0, 4);
  std::vector<int64_t> in(rank);
  for (auto& v : in) v = value(f, 1, 40);
  bool ceil_mode = f.ConsumeBool();
  switch (f.ConsumeIntegralInRange<int>(0, 8)) {
    case 0: {
      auto k = list(f, rank, 1, 6), s = list(f, rank, 1, 4), p = list(f, rank, 0, 3), d = list(f, rank, 1, 3);
      check(torch_geometry(in, k, s, p, d, ceil_mode));
      break;
    }
    case 1: {
      auto k = list(f, rank, 1, 6), s = list(f, rank, 1, 4);
      const char* pads[] = {"valid", "same", "SAME", ""};
      check(keras_geometry(in, k, s, pads[f.ConsumeIntegralInRange<int>(0, 3)]));
      break;
    }
    case 2: {
      OnnxParams p;
      p.kernel_shape = list(f, rank, 1, 6);
      p.strides = list(f, rank, 1, 4);
      p.dilations = list(f, rank, 1, 3);
      p.pads = f.ConsumeBool() ? list(f, 2 * rank, 0, 3) : std::vector<int64_t>{};
      const char* modes[] = {"NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER", "same_upper"};
      p.auto_pad = modes[f.ConsumeIntegralInRange<int>(0, 4)];
      p.ceil_mode = ceil_mode;
      check(onnx_geometry(in, p));
      break;
    }
    case 3: {
      RegularParams p;
      p.kernel = list(f, rank, 1, 6);
      p.stride = list(f, rank, 1, 4);
      p.dilation = list(f, rank, 1, 3);
      p.pad_lo = list(f, rank, 0, 5);
      p.pad_hi = list(f, rank, 0, 5);
      p.ceil_mode = ceil_mode;
      check(regular_geometry(in, p));
      break;
    }
    case 4: check(adaptive_geometry(in, list(f, rank, 1, 50))); break;
    case 5: check(global_geometry(in)); break;
    case 6: {
      auto out = list(f, rank, 1, 20), k = list(f, rank, 1, 5);
      Geometry g = fractional_geometry(in, out, k, f.ConsumeBool());
      double u[kMaxSpatial];
      for (int i = 0; i < g.rank; ++i) u[i] = f.ConsumeProbability<double>();
      if (f.ConsumeIntegralInRange<int>(0, 15) == 0) u[0] = f.ConsumeBool() ? 1.0 : -0.25;
      check(with_fractional_samples(g, u));
      break;
    }
    case 7: {
      std::vector<double> ratio(f.ConsumeIntegralInRange<size_t>(1, 3));
      for (auto& r : ratio) r = f.ConsumeFloatingPoint<double>();
      auto k = list(f, rank, 1, 5);
      auto out = fractional_output_size(in, ratio, k);
      FUZZ_CHECK(out.size() == rank, "fractional_output_size rank");
      check(fractional_geometry(in, out, k));
      break;
    }
    case 8: {
      auto k = list(f, rank, 1, 6), s = list(f, rank, 1, 4), p = list(f, rank, 0, 3);
      std::optional<std::vector<int64_t>> want;
      if (f.ConsumeBool()) want = list(f, rank + (f.ConsumeBool() ? 2 : 0), 1, 60);
      auto out = unpool_output_size(in, k, s, p, want);
      FUZZ_CHECK(out.size() == rank, "unpool_output_size rank");
      // PyTorch (and the torch convention) gives an empty output for a size of 0; never a negative one
      for (int64_t v : out) FUZZ_CHECK(v >= 0, "unpool output size %lld", (long long)v);
      break;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider f(data, size);
  try {
    build(f);
  } catch (const Error& e) {
    FUZZ_CHECK(!e.argument().empty(), "an error without an argument name: %s", e.what());
  }
  return 0;
}
