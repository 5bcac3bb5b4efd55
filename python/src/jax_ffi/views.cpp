#include "views.hpp"

#include "poolkit/memory.hpp"

#include <cstdint>


namespace poolkit::jax_ffi {
namespace {

DType dtype_of(ffi::DataType t, const char* name) {
  switch (t) {
    case ffi::DataType::F32: return DType::f32;
    case ffi::DataType::F64: return DType::f64;
    case ffi::DataType::BF16: return DType::bf16;
    case ffi::DataType::F16: return DType::f16;
    case ffi::DataType::U8: return DType::u8;
    case ffi::DataType::S8: return DType::i8;
    case ffi::DataType::S16: return DType::i16;
    case ffi::DataType::S32: return DType::i32;
    case ffi::DataType::S64: return DType::i64;
    default: break;
  }
  fail(name, "dtype must be float32, float64, bfloat16, float16, uint8, int8, int16, int32 or int64", ErrorKind::Type);
}

std::vector<int64_t> ints(const ffi::Dictionary& attrs, const char* name) {
  auto s = attr<ffi::Span<const int64_t>>(attrs, name);
  return std::vector<int64_t>(s.begin(), s.end());
}

}  // namespace

Layout layout_of(const ffi::Dictionary& attrs) {
  Layout l;
  l.rank = int(attr<int64_t>(attrs, "rank"));
  l.channels_last = attr<int64_t>(attrs, "channels_last") != 0;
  if (l.rank < 1 || l.rank > kMaxSpatial) fail("attribute rank", "must be 1, 2 or 3");
  return l;
}

TensorView view_of(const ffi::AnyBuffer& b, const Layout& l, const char* name) {
  auto d = b.dimensions();
  const int r = int(d.size()), lead = r - l.rank - 1;
  if (lead < 1)
    fail(name, "needs a batch axis, a channel axis and " + std::to_string(l.rank) + " spatial axes (got " +
                   std::to_string(r) + " axes)");
  std::vector<int64_t> st(r);
  int64_t s = 1;
  for (int i = r - 1; i >= 0; --i) { st[i] = s; s *= d[i]; }
  int64_t n = 1;
  for (int i = 0; i < lead; ++i) n *= d[i];  // leading axes are outermost and contiguous: one N
  TensorView v;
  v.data = b.untyped_data();
  v.dtype = dtype_of(b.element_type(), name);
  v.shape.rank = v.strides.rank = l.rank + 2;
  v.shape[0] = n;
  v.strides[0] = st[lead - 1];
  const int c = l.channels_last ? r - 1 : lead, sp0 = l.channels_last ? lead : lead + 1;
  v.shape[1] = d[c];
  v.strides[1] = st[c];
  for (int i = 0; i < l.rank; ++i) {
    v.shape[2 + i] = d[sp0 + i];
    v.strides[2 + i] = st[sp0 + i];
  }
  return v;
}

TensorView output_view(const ffi::AnyBuffer& b, const Layout& l, const char* name) {
  // XLA's CPU client hands a large output over as fresh memory, each 4 KiB page of which faults (and is zeroed)
  // on the kernel's first write: at the seed case's sizes that costs more than the pooling.
  poolkit::advise_huge_pages(b.untyped_data(), b.size_bytes());
  return view_of(b, l, name);
}

TensorView samples_view(const ffi::AnyBuffer& b, const Layout& l) {
  auto d = b.dimensions();
  const int r = int(d.size());
  if (r < 3 || d[r - 1] != l.rank)
    fail("_random_samples", "must be (batch..., C, " + std::to_string(l.rank) + ") (got " + std::to_string(r) +
                                " axes)");
  int64_t n = 1;
  for (int i = 0; i < r - 2; ++i) n *= d[i];
  TensorView v(b.untyped_data(), dtype_of(b.element_type(), "_random_samples"), Shape{n, d[r - 2], d[r - 1]});
  return v;
}

TensorView slice_n(TensorView v, int64_t begin, int64_t count) {
  v.data = static_cast<char*>(v.data) + begin * v.strides[0] * dtype_size(v.dtype);
  v.shape[0] = count;
  return v;
}

std::vector<int64_t> spatial_size(const TensorView& v) {
  return std::vector<int64_t>(v.shape.dims.begin() + 2, v.shape.dims.begin() + v.shape.rank);
}

Geometry geometry_of(const ffi::Dictionary& attrs, const std::vector<int64_t>& in) {
  auto kind = attr<std::string_view>(attrs, "geometry");
  if (kind == "window") {
    OnnxParams p;
    p.kernel_shape = ints(attrs, "kernel");
    p.strides = ints(attrs, "strides");
    p.pads = ints(attrs, "pads");
    p.auto_pad = std::string(attr<std::string_view>(attrs, "auto_pad"));
    p.ceil_mode = attr<int64_t>(attrs, "ceil_mode") != 0;
    return onnx_geometry(in, p);
  }
  if (kind == "torch")
    return torch_geometry(in, ints(attrs, "kernel"), ints(attrs, "strides"), ints(attrs, "pads"),
                          ints(attrs, "dilation"), attr<int64_t>(attrs, "ceil_mode") != 0);
  if (kind == "fractional")
    return fractional_geometry(in, ints(attrs, "output_size"), ints(attrs, "kernel"),
                               attr<int64_t>(attrs, "in_float") != 0);
  if (kind == "adaptive") return adaptive_geometry(in, ints(attrs, "output_size"));
  if (kind == "global") return global_geometry(in);
  fail("attribute geometry",
       "must be 'window', 'torch', 'adaptive', 'global' or 'fractional' (got '" + std::string(kind) + "')");
}

}  // namespace poolkit::jax_ffi
