#include "poolkit/geometry.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "../core/checked.hpp"
#include "poolkit/error.hpp"

namespace poolkit {
namespace {

std::string axis_name(const char* what, size_t i) { return std::string(what) + "[" + std::to_string(i) + "]"; }
std::string got(int64_t v) { return " (got " + std::to_string(v) + ")"; }
std::string got(double v) { return " (got " + std::to_string(v) + ")"; }

void check_rank(const std::vector<int64_t>& in) {
  if (in.empty() || in.size() > size_t(kMaxSpatial))
    fail("input", "must have 1, 2 or 3 spatial dimensions (got " + std::to_string(in.size()) + ")");
  for (size_t i = 0; i < in.size(); ++i)
    if (in[i] < 1) fail(axis_name("input size", i), "spatial sizes must be >= 1" + got(in[i]));
    else checked_add(in[i], 1, "input size");  // axis.hpp forms in + 1
}

// One value for every axis, one per axis, or (when allowed) none for the default.
std::vector<int64_t> expand(std::vector<int64_t> v, size_t rank, const char* name, std::optional<int64_t> dflt) {
  if (v.empty()) {
    if (!dflt) fail(name, "must be given");
    return std::vector<int64_t>(rank, *dflt);
  }
  if (v.size() == 1) return std::vector<int64_t>(rank, v[0]);
  if (v.size() != rank)
    fail(name, "must have 1 or " + std::to_string(rank) + " entries (got " + std::to_string(v.size()) + ")");
  return v;
}

void check_at_least(const std::vector<int64_t>& v, int64_t lo, const char* name, const char* rule) {
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i] < lo) fail(name, std::string(rule) + got(v[i]));
}

Axis regular_axis(int64_t in, int64_t k, int64_t s, int64_t d, int64_t lo, int64_t hi, bool ceil_mode, size_t i) {
  Axis a;
  a.kind = AxisKind::Regular;
  a.in = in; a.kernel = k; a.stride = s; a.dilation = d; a.pad_lo = lo; a.pad_hi = hi;
  int64_t eff = checked_add(checked_mul(d, k - 1, "dilation"), 1, "dilation");
  int64_t padded = checked_add(checked_add(in, lo, "padding"), hi, "padding");
  // PyTorch's pooling_output_shape: floor division, so a kernel longer than the padded input is fine in ceil
  // mode as long as one window results (its end is clipped to the input).
  // axis.hpp adds up to these terms without checks; their total must fit in int64.
  checked_add(checked_add(checked_add(padded, checked_mul(d, k, "dilation"), "dilation"), s, "stride"), s, "stride");
  int64_t span = padded - eff + (ceil_mode ? s - 1 : 0);
  int64_t out = (span >= 0 ? span / s : -((-span + s - 1) / s)) + 1;
  if (ceil_mode && (out - 1) * s >= in + lo) --out;
  a.out = out;
  if (out < 1)
    fail(axis_name("kernel_size", i), "the effective kernel dilation*(kernel-1)+1 = " + std::to_string(eff) +
                                          " is larger than the padded input " + std::to_string(padded) +
                                          ": the output size would be " + std::to_string(out) + ", it must be >= 1");
  checked_mul(out, s, "stride");
  // Every window must read at least one input cell, else padding alone would fill it.
  for (int64_t o : {int64_t(0), out - 1}) {
    Range r = a.valid_taps(o);
    if (r.end <= r.begin)
      fail(axis_name("padding", i), "too large: window " + std::to_string(o) + " reads no input cell");
  }
  // Dilation can step over an input shorter than it. Middle windows starting at or past 0 read their first tap; one
  // starting before 0 reads a cell iff its origin mod d is < in, which repeats with period d / gcd(s, d) windows.
  // Only windows starting before 0 (o < ceil(lo / s)) need a look, at most one period of them.
  int64_t period = d / std::gcd(s, d);
  int64_t checks = in < d ? std::min({out - 2, period, lo == 0 ? 0 : (lo - 1) / s}) : 0;
  if (checks > (int64_t(1) << 20))
    fail(axis_name("dilation", i), "larger than the input with over 2^20 windows starting in the padding: "
                                   "too many windows to check (got " + std::to_string(checks) + ")");
  for (int64_t o = 1; o <= checks; ++o) {
    Range r = a.valid_taps(o);
    if (r.end <= r.begin)
      fail(axis_name("dilation", i), "too large: window " + std::to_string(o) + " reads no input cell");
  }
  return a;
}

}  // namespace

std::vector<int64_t> Geometry::input_size() const {
  std::vector<int64_t> v;
  for (int i = 0; i < rank; ++i) v.push_back(axes[i].in);
  return v;
}
std::vector<int64_t> Geometry::output_size() const {
  std::vector<int64_t> v;
  for (int i = 0; i < rank; ++i) v.push_back(axes[i].out);
  return v;
}
int64_t Geometry::plane_in() const {
  int64_t n = 1;
  for (int i = 0; i < rank; ++i) n = checked_mul(n, axes[i].in, "input");
  return n;
}
int64_t Geometry::plane_out() const {
  int64_t n = 1;
  for (int i = 0; i < rank; ++i) n = checked_mul(n, axes[i].out, "output");
  return n;
}
int64_t Geometry::window_cells() const {
  int64_t n = 1;
  for (int i = 0; i < rank; ++i) n = checked_mul(n, axes[i].kernel, "kernel_size");
  return n;
}

Geometry regular_geometry(const std::vector<int64_t>& in, const RegularParams& p) {
  check_rank(in);
  size_t r = in.size();
  auto k = expand(p.kernel, r, "kernel_size", std::nullopt);
  check_at_least(k, 1, "kernel_size", "must be >= 1");
  auto s = expand(p.stride.empty() ? k : p.stride, r, "stride", std::nullopt);
  check_at_least(s, 1, "stride", "must be >= 1");
  auto d = expand(p.dilation, r, "dilation", 1);
  check_at_least(d, 1, "dilation", "must be >= 1");
  auto lo = expand(p.pad_lo, r, "padding", 0);
  auto hi = expand(p.pad_hi, r, "padding", 0);
  check_at_least(lo, 0, "padding", "must be >= 0");
  check_at_least(hi, 0, "padding", "must be >= 0");
  Geometry g;
  g.rank = int(r);
  for (size_t i = 0; i < r; ++i) g.axes[i] = regular_axis(in[i], k[i], s[i], d[i], lo[i], hi[i], p.ceil_mode, i);
  g.plane_in();
  g.plane_out();
  return g;
}

Geometry torch_geometry(const std::vector<int64_t>& in, std::vector<int64_t> kernel, std::vector<int64_t> stride,
                        std::vector<int64_t> padding, std::vector<int64_t> dilation, bool ceil_mode) {
  check_rank(in);
  size_t r = in.size();
  auto k = expand(std::move(kernel), r, "kernel_size", std::nullopt);
  check_at_least(k, 1, "kernel_size", "must be >= 1");
  auto d = expand(std::move(dilation), r, "dilation", 1);
  check_at_least(d, 1, "dilation", "must be >= 1");
  auto p = expand(std::move(padding), r, "padding", 0);
  check_at_least(p, 0, "padding", "must be >= 0");
  // PyTorch checks padding against the kernel size itself, dilation or not
  for (size_t i = 0; i < r; ++i)
    if (p[i] > k[i] / 2)
      fail(axis_name("padding", i), "must be at most half of the kernel size " + std::to_string(k[i]) + got(p[i]));
  RegularParams rp{k, stride.empty() ? k : std::move(stride), d, p, p, ceil_mode};
  return regular_geometry(in, rp);
}

Geometry keras_geometry(const std::vector<int64_t>& in, std::vector<int64_t> pool_size, std::vector<int64_t> strides,
                        const std::string& padding) {
  check_rank(in);
  size_t r = in.size();
  auto k = expand(std::move(pool_size), r, "pool_size", std::nullopt);
  check_at_least(k, 1, "pool_size", "must be >= 1");
  auto s = expand(strides.empty() ? k : std::move(strides), r, "strides", std::nullopt);
  check_at_least(s, 1, "strides", "must be >= 1");
  RegularParams rp{k, s, {}, {}, {}, false};
  if (padding == "same") {
    rp.pad_lo.resize(r);
    rp.pad_hi.resize(r);
    for (size_t i = 0; i < r; ++i) {
      int64_t out = in[i] / s[i] + (in[i] % s[i] != 0);
      int64_t total = std::max<int64_t>((out - 1) * s[i] - in[i] + k[i], 0);
      rp.pad_lo[i] = total / 2;
      rp.pad_hi[i] = total - total / 2;
    }
  } else if (padding != "valid") {
    fail("padding", "must be 'valid' or 'same' (got '" + padding + "')");
  }
  return regular_geometry(in, rp);
}

Geometry onnx_geometry(const std::vector<int64_t>& in, const OnnxParams& p) {
  check_rank(in);
  size_t r = in.size();
  if (p.kernel_shape.size() != r) fail("kernel_shape", "must have one entry per spatial axis");
  auto k = p.kernel_shape;
  check_at_least(k, 1, "kernel_shape", "must be >= 1");
  auto s = expand(p.strides, r, "strides", 1);
  check_at_least(s, 1, "strides", "must be >= 1");
  auto d = expand(p.dilations, r, "dilations", 1);
  check_at_least(d, 1, "dilations", "must be >= 1");
  RegularParams rp{k, s, d, std::vector<int64_t>(r, 0), std::vector<int64_t>(r, 0), p.ceil_mode};
  if (p.auto_pad == "NOTSET") {
    if (!p.pads.empty()) {
      if (p.pads.size() != 2 * r) fail("pads", "must have 2 entries per spatial axis (begins, then ends)");
      for (size_t i = 0; i < r; ++i) { rp.pad_lo[i] = p.pads[i]; rp.pad_hi[i] = p.pads[i + r]; }
      check_at_least(p.pads, 0, "pads", "must be >= 0");
    }
  } else if (p.auto_pad == "SAME_UPPER" || p.auto_pad == "SAME_LOWER") {
    for (size_t i = 0; i < r; ++i) {
      int64_t out = in[i] / s[i] + (in[i] % s[i] != 0);
      int64_t eff = checked_add(checked_mul(d[i], k[i] - 1, "dilations"), 1, "dilations");
      int64_t total = std::max<int64_t>((out - 1) * s[i] - in[i] + eff, 0);
      int64_t small = total / 2, large = total - small;
      rp.pad_lo[i] = p.auto_pad == "SAME_UPPER" ? small : large;
      rp.pad_hi[i] = total - rp.pad_lo[i];
    }
  } else if (p.auto_pad != "VALID") {
    fail("auto_pad", "must be NOTSET, VALID, SAME_UPPER or SAME_LOWER (got '" + p.auto_pad + "')");
  }
  return regular_geometry(in, rp);
}

Geometry adaptive_geometry(const std::vector<int64_t>& in, const std::vector<int64_t>& out) {
  check_rank(in);
  if (out.size() != in.size())
    fail("output_size", "must have one entry per spatial axis (" + std::to_string(in.size()) + ")");
  Geometry g;
  g.rank = int(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    if (out[i] < 1) fail(axis_name("output_size", i), "must be >= 1" + got(out[i]));
    // bin arithmetic stays in int64: taps() forms (o + 1) * in + out - 1
    checked_add(checked_mul(checked_add(in[i], 1, "input"), out[i], "output_size"), out[i], "output_size");
    Axis& a = g.axes[i];
    a.kind = AxisKind::Adaptive;
    a.in = in[i];
    a.out = out[i];
    // The largest bin, the radix of a window-local argmax (in O(1): out may be huge). Bin o has
    // ceil((o * in mod out + in) / out) cells, and o * in mod out takes every multiple of gcd(in, out) below out.
    int64_t top = out[i] - std::gcd(in[i], out[i]) + in[i];
    a.kernel = top / out[i] + (top % out[i] != 0);
  }
  g.plane_out();
  return g;
}

Geometry global_geometry(const std::vector<int64_t>& in) {
  check_rank(in);
  Geometry g;
  g.rank = int(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    Axis& a = g.axes[i];
    a.kind = AxisKind::Global;
    a.in = in[i];
    a.out = 1;
    a.kernel = in[i];
  }
  g.plane_in();
  return g;
}

Geometry fractional_geometry(const std::vector<int64_t>& in, const std::vector<int64_t>& out,
                             const std::vector<int64_t>& kernel, bool in_float) {
  check_rank(in);
  size_t r = in.size();
  auto k = expand(kernel, r, "kernel_size", std::nullopt);
  check_at_least(k, 1, "kernel_size", "must be >= 1");
  if (out.size() != r) fail("output_size", "must have one entry per spatial axis");
  Geometry g;
  g.rank = int(r);
  // PyTorch's FractionalMaxPool3d checks output + kernel - 1 < input (strictly), its 2-D version <=.
  const bool strict = r == 3;
  for (size_t i = 0; i < r; ++i) {
    // An output size of 0 gives an empty output, as PyTorch.
    if (out[i] < 0) fail(axis_name("output_size", i), "must be >= 0" + got(out[i]));
    // Window starts are computed in floating point (axis.hpp) and converted back to int64.
    if (in[i] > (int64_t(1) << 53))
      fail(axis_name("input size", i), "fractional pooling needs spatial sizes <= 2^53" + got(in[i]), ErrorKind::Overflow);
    if (out[i] > in[i] - (strict ? 1 : 0) - k[i] + 1)  // out + k - 1 > in (- 1), without overflow
      fail(axis_name("output_size", i), std::string("output_size + kernel_size - 1 must be ") +
                                            (strict ? "< " : "<= ") + "the input size " + std::to_string(in[i]) +
                                            got(out[i]));
    Axis& a = g.axes[i];
    a.kind = AxisKind::Fractional;
    a.sample_in_float = in_float;
    a.in = in[i];
    a.out = out[i];
    a.kernel = k[i];
  }
  return g;
}

std::vector<int64_t> fractional_output_size(const std::vector<int64_t>& in, const std::vector<double>& ratio,
                                            const std::vector<int64_t>& kernel) {
  check_rank(in);
  std::vector<double> rt = ratio.size() == 1 ? std::vector<double>(in.size(), ratio[0]) : ratio;
  if (rt.size() != in.size()) fail("output_ratio", "must have 1 or one entry per spatial axis");
  std::vector<int64_t> out(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    // PyTorch's functional form truncates input * ratio toward zero and takes whatever output fits (a ratio of 0,
    // or a small negative one, gives an empty output); its modules ask for (0, 1), which poolkit.torch.nn checks.
    const double size = double(in[i]) * rt[i];
    if (!std::isfinite(size) || std::fabs(size) >= 0x1p62)
      fail("output_ratio", "must be a finite number giving a representable output size" + got(rt[i]));
    out[i] = int64_t(size);
    if (out[i] < 0)
      fail("output_ratio", "gives a negative output size " + std::to_string(out[i]) + got(rt[i]));
  }
  fractional_geometry(in, out, kernel);  // validates
  return out;
}

Geometry with_fractional_samples(Geometry g, const double* samples) {
  for (int i = 0; i < g.rank; ++i) {
    if (!(samples[i] >= 0 && samples[i] < 1))
      fail("_random_samples", "must lie in [0, 1) (got " + std::to_string(samples[i]) + ")");
    g.axes[i].sample = samples[i];
  }
  return g;
}

std::vector<int64_t> unpool_output_size(const std::vector<int64_t>& in, std::vector<int64_t> kernel,
                                        std::vector<int64_t> stride, std::vector<int64_t> padding,
                                        const std::optional<std::vector<int64_t>>& requested) {
  check_rank(in);
  size_t r = in.size();
  auto k = expand(std::move(kernel), r, "kernel_size", std::nullopt);
  check_at_least(k, 1, "kernel_size", "must be >= 1");
  auto s = expand(stride.empty() ? k : std::move(stride), r, "stride", std::nullopt);
  check_at_least(s, 1, "stride", "must be >= 1");
  auto p = expand(std::move(padding), r, "padding", 0);
  check_at_least(p, 0, "padding", "must be >= 0");
  std::vector<int64_t> def(r);
  for (size_t i = 0; i < r; ++i) {
    def[i] = checked_add(checked_mul(in[i] - 1, s[i], "stride"),
                         checked_add(k[i], -checked_mul(2, p[i], "padding"), "padding"), "kernel_size");
    // As PyTorch: the default must be usable only when it is used; a requested size is checked against it below.
    // A size of 0 gives an empty output, as PyTorch.
    if (def[i] < 0 && !requested)
      fail(axis_name("output_size", i), "default output size must be >= 0" + got(def[i]));
  }
  if (!requested) return def;
  std::vector<int64_t> want = *requested;
  if (want.size() == r + 2) want.erase(want.begin(), want.begin() + 2);
  if (want.size() != r) fail("output_size", "must have one entry per spatial axis (optionally with N and C first)");
  for (size_t i = 0; i < r; ++i) {
    int64_t lo = checked_add(def[i], -s[i], "stride"), hi = checked_add(def[i], s[i], "stride");
    if (want[i] < 0 || want[i] <= lo || want[i] >= hi)
      fail(axis_name("output_size", i), "must be between " + std::to_string(lo) + " and " + std::to_string(hi) +
                                            ", exclusive (the default size " + std::to_string(def[i]) +
                                            " plus or minus less than stride " + std::to_string(s[i]) + ")" +
                                            got(want[i]));
  }
  return want;
}

}  // namespace poolkit
