#include "validate.hpp"

#include <cmath>
#include <string>

#include "poolkit/error.hpp"
#include "poolkit/ops.hpp"

namespace poolkit::validate {
namespace {

void defined(const TensorView& t, const char* name) {
  if (t.shape.rank == 0) fail(name, "must be given (got an undefined tensor)");
  for (int i = 0; i < t.rank(); ++i)
    if (t.shape[i] < 0) fail(name, "sizes must be >= 0 (got " + t.shape.str() + ")");
  int64_t cells = 1;  // the sizes' product must fit in int64, data or not
  for (int i = 0; i < t.rank(); ++i)
    if (__builtin_mul_overflow(cells, t.shape[i], &cells))
      fail(name, "sizes " + t.shape.str() + " have more cells than int64 holds", ErrorKind::Overflow);
  if (t.data == nullptr && cells != 0) fail(name, "has no data pointer");
}

bool given(const TensorView& t) { return t.shape.rank != 0; }

void same(const TensorView& t, const char* name, const Shape& shape, DType dtype) {
  defined(t, name);
  if (t.shape != shape) fail(name, "must have shape " + shape.str() + " (got " + t.shape.str() + ")");
  if (t.dtype != dtype)
    fail(name, std::string("must be ") + dtype_name(dtype) + " (got " + dtype_name(t.dtype) + ")", ErrorKind::Type);
}

void same_device(const TensorView& t, const char* name, const TensorView& ref) {
  if (given(t) && t.device != ref.device) fail(name, "must be on the same device as the other tensors", ErrorKind::Type);
}

// Which element types an operator pools (PyTorch's rules): max pooling and max-unpooling take integers too (max
// is exact), average pooling int64 over fixed windows (sums in int64, divided with truncation, as avg_pool does),
// the others floating types alone; no gradient exists for an integer tensor.
enum class Accepts { Floating, MaxTypes, AvgTypes, Gradient };

bool fixed_windows(const Geometry& g) {
  for (int i = 0; i < g.rank; ++i)
    if (g.axes[i].kind != AxisKind::Regular) return false;
  return true;
}

void element_type(const Geometry* g, const TensorView& x, const char* name, Accepts rule) {
  if (is_floating(x.dtype)) return;
  const std::string got = std::string(" (got ") + dtype_name(x.dtype) + ")";
  const char* floats = "must be float32, float64, bfloat16 or float16";
  switch (rule) {
    case Accepts::MaxTypes: return;
    case Accepts::AvgTypes:
      if (x.dtype != DType::i64)
        fail(name, std::string(floats) + ", or int64: average pooling takes no other integer type" + got,
             ErrorKind::Type);
      if (g && fixed_windows(*g)) return;
      fail(name, std::string(floats) + ": int64 is averaged over fixed windows alone (not adaptive or global ones)" +
                     got, ErrorKind::Type);
    case Accepts::Gradient:
      fail(name, std::string(floats) + ": integer tensors have no gradient" + got, ErrorKind::Type);
    case Accepts::Floating:
      fail(name, std::string(floats) + ": only max pooling and max-unpooling take integers" + got, ErrorKind::Type);
  }
}

// x (N, C, in...) of an element type `rule` accepts, matching the geometry.
void input(const Geometry& g, const TensorView& x, const char* name, Accepts rule) {
  defined(x, name);
  if (x.rank() != g.rank + 2)
    fail(name, "must be (N, C, " + std::to_string(g.rank) + " spatial dims) to match the geometry (got shape " +
                   x.shape.str() + ")");
  element_type(&g, x, name, rule);
  for (int i = 0; i < g.rank; ++i)
    if (x.shape[i + 2] != g.axes[i].in)
      fail(name, "spatial size " + std::to_string(x.shape[i + 2]) + " differs from the geometry's input " +
                     std::to_string(g.axes[i].in) + " on axis " + std::to_string(i));
}

void forward(const Geometry& g, const TensorView& x, const TensorView& y, Accepts rule = Accepts::Floating) {
  input(g, x, "x", rule);
  same(y, "y", output_shape(g, x), x.dtype);
  same_device(y, "y", x);
}

void backward(const Geometry& g, const TensorView& dy, const TensorView& dx) {
  defined(dx, "grad_input");
  defined(dy, "grad_output");
  element_type(&g, dy, "grad_output", Accepts::Gradient);  // (named first: the host allocates dx like dy)
  input(g, dx, "grad_input", Accepts::Gradient);
  same(dy, "grad_output", output_shape(g, dx), dx.dtype);
  same_device(dy, "grad_output", dx);
}

void argmax_of(const Geometry& g, const TensorView& a, const Shape& y_shape, const TensorView& like) {
  if (!given(a)) return;
  defined(a, "argmax");
  same_device(a, "argmax", like);
  if (a.shape != y_shape) fail("argmax", "must have the output's shape " + y_shape.str() + " (got " + a.shape.str() + ")");
  if (a.dtype == DType::i64) return;
  DType need = local_argmax_dtype(g);
  bool fits = (a.dtype == DType::u8 && need == DType::u8) ||
              (a.dtype == DType::i16 && (need == DType::u8 || need == DType::i16)) || a.dtype == DType::i32;
  if (!fits)
    fail("argmax", std::string("must be int64 (flat) or an integer type holding ") + std::to_string(g.window_cells()) +
                       " window cells, at least " + dtype_name(need) + " (got " + dtype_name(a.dtype) + ")",
         ErrorKind::Type);
}

void max_backward_inputs(const Geometry& g, const TensorView& dy, const TensorView& am, const TensorView& x,
                         const TensorView& dx) {
  backward(g, dy, dx);
  argmax_of(g, am, dy.shape, dx);
  if (!given(am)) {
    if (!given(x)) fail("x", "is needed to recompute the argmax when no argmax is given");
    same(x, "x", dx.shape, dx.dtype);
    same_device(x, "x", dx);
  }
}

void samples(const Geometry& g, const TensorView& s, const TensorView& x) {
  defined(s, "_random_samples");
  Shape want{x.shape[0], x.shape[1], g.rank};
  if (s.shape != want) fail("_random_samples", "must have shape " + want.str() + " (got " + s.shape.str() + ")");
  if (s.dtype != DType::f32 && s.dtype != DType::f64)
    fail("_random_samples", std::string("must be float32 or float64 (got ") + dtype_name(s.dtype) + ")", ErrorKind::Type);
  if (s.device != Device::CPU) fail("_random_samples", "must be in host memory");
  for (int64_t n = 0; n < want[0]; ++n)
    for (int64_t c = 0; c < want[1]; ++c)
      for (int64_t i = 0; i < want[2]; ++i) {
        double u = load_as_double(s, n * s.strides[0] + c * s.strides[1] + i * s.strides[2]);
        if (!(u >= 0 && u < 1)) fail("_random_samples", "must lie in [0, 1) (got " + std::to_string(u) + ")");
      }
}

void avg_options(const AvgOptions& opt) {
  if (opt.divisor_override && *opt.divisor_override <= 0)
    fail("divisor_override", "must be > 0 (got " + std::to_string(*opt.divisor_override) + ")");
}

void lp_options(const LpOptions& opt) {
  // PyTorch's lp_pool takes any finite non-zero power (its +-inf are max pooling of |x|: the hosts compose them);
  // ONNX's LpPool a positive one.
  if (opt.convention == LpConvention::Onnx && !(std::isfinite(opt.p) && opt.p > 0))
    fail("norm_type", "must be finite and > 0 in the ONNX convention (got " + std::to_string(opt.p) + ")");
  if (!(std::isfinite(opt.p) && opt.p != 0)) fail("norm_type", "must be finite and non-zero (got " + std::to_string(opt.p) + ")");
}

void mixed_options(const MixedOptions& opt) {
  if (!std::isfinite(opt.lambda)) fail("lambda", "must be finite");
  avg_options(opt.avg);
}

// Unpool: small (N, C, in...) and big (N, C, out...) of one dtype (floating or integer), indices int64 of small's
// shape with every index inside the output plane.
void unpool(const TensorView& small, const char* small_name, const TensorView& big, const char* big_name,
            const TensorView& indices) {
  defined(small, small_name);
  defined(big, big_name);
  if (small.rank() < 3 || small.rank() > 5)
    fail(small_name, "must be (N, C, 1 to 3 spatial dims) (got shape " + small.shape.str() + ")");
  element_type(nullptr, small, small_name, Accepts::MaxTypes);
  if (big.rank() != small.rank() || big.shape[0] != small.shape[0] || big.shape[1] != small.shape[1])
    fail(big_name, "must have the N, C and rank of " + std::string(small_name) + " (got " + big.shape.str() +
                       " and " + small.shape.str() + ")");
  for (int i = 2; i < big.rank(); ++i)
    if (big.shape[i] < 1) fail(big_name, "spatial sizes must be >= 1 (got " + big.shape.str() + ")");
  if (big.dtype != small.dtype) fail(big_name, "must have the dtype of " + std::string(small_name), ErrorKind::Type);
  same(indices, "indices", small.shape, DType::i64);
  same_device(big, big_name, small);
  same_device(indices, "indices", small);
  if (small.device != Device::CPU) return;  // device backends check their indices on the device
  int64_t plane = 1;
  for (int i = 2; i < big.rank(); ++i) plane *= big.shape[i];
  int64_t idx[kMaxRank] = {};
  int64_t total = small.numel();
  for (int64_t k = 0; k < total; ++k) {  // odometer over every index
    int64_t v = static_cast<const int64_t*>(indices.data)[offset_of(indices, idx)];
    if (v < 0 || v >= plane)
      fail("indices", "found an invalid max index " + std::to_string(v) + " (the output plane has " +
                          std::to_string(plane) + " cells)", ErrorKind::Index);
    for (int i = small.rank() - 1; i >= 0 && ++idx[i] == small.shape[i]; --i) idx[i] = 0;
  }
}

}  // namespace

Shape output_shape(const Geometry& g, const TensorView& x) {
  Shape s;
  s.rank = g.rank + 2;
  s[0] = x.shape[0];
  s[1] = x.shape[1];
  for (int i = 0; i < g.rank; ++i) s[i + 2] = g.axes[i].out;
  return s;
}

void max_pool_forward(const Geometry& g, const TensorView& x, const TensorView& y, const TensorView& am) {
  forward(g, x, y, Accepts::MaxTypes);
  argmax_of(g, am, y.shape, x);
}
void max_pool_backward(const Geometry& g, const TensorView& dy, const TensorView& am, const TensorView& x,
                       const TensorView& dx) {
  max_backward_inputs(g, dy, am, x, dx);
}
void avg_pool_forward(const Geometry& g, const AvgOptions& opt, const TensorView& x, const TensorView& y) {
  forward(g, x, y, Accepts::AvgTypes);
  avg_options(opt);
}
void avg_pool_backward(const Geometry& g, const AvgOptions& opt, const TensorView& dy, const TensorView& dx) {
  backward(g, dy, dx);
  avg_options(opt);
}
void lp_pool_forward(const Geometry& g, const LpOptions& opt, const TensorView& x, const TensorView& y) {
  forward(g, x, y);
  lp_options(opt);
}
void lp_pool_backward(const Geometry& g, const LpOptions& opt, const TensorView& dy, const TensorView& x,
                      const TensorView& dx) {
  backward(g, dy, dx);
  same(x, "x", dx.shape, dx.dtype);
  lp_options(opt);
}
void mixed_pool_forward(const Geometry& g, const MixedOptions& opt, const TensorView& x, const TensorView& y) {
  forward(g, x, y);
  mixed_options(opt);
}
void mixed_pool_backward(const Geometry& g, const MixedOptions& opt, const TensorView& dy, const TensorView& x,
                         const TensorView& dx, double*) {
  backward(g, dy, dx);
  same(x, "x", dx.shape, dx.dtype);
  mixed_options(opt);
}
void stochastic_pool_forward(const Geometry& g, const StochasticOptions&, const TensorView& x, const TensorView& y) {
  forward(g, x, y);
}
void stochastic_pool_backward(const Geometry& g, const StochasticOptions&, const TensorView& dy, const TensorView& x,
                              const TensorView& dx) {
  backward(g, dy, dx);
  same(x, "x", dx.shape, dx.dtype);
}
void fractional_max_pool_forward(const Geometry& g, const TensorView& s, const TensorView& x, const TensorView& y,
                                 const TensorView& am) {
  validate::max_pool_forward(g, x, y, am);
  samples(g, s, x);
}
void fractional_max_pool_backward(const Geometry& g, const TensorView& s, const TensorView& dy, const TensorView& am,
                                  const TensorView& x, const TensorView& dx) {
  max_backward_inputs(g, dy, am, x, dx);
  samples(g, s, dx);
}
void max_unpool_forward(const TensorView& x, const TensorView& indices, const TensorView& y) {
  unpool(x, "x", y, "y", indices);
}
void max_unpool_backward(const TensorView& dy, const TensorView& indices, const TensorView& dx) {
  unpool(dx, "grad_input", dy, "grad_output", indices);
}

}  // namespace poolkit::validate

namespace poolkit {

DType local_argmax_dtype(const Geometry& g) {
  int64_t cells = g.window_cells();
  if (cells <= 255) return DType::u8;
  if (cells <= 32767) return DType::i16;
  if (cells <= 2147483647) return DType::i32;
  fail("argmax", "a window of " + std::to_string(cells) + " cells has no compact form: use int64 flat indices",
       ErrorKind::Overflow);
}

}  // namespace poolkit
