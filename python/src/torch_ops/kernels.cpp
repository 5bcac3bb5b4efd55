// C++ kernels, on host tensors, of the 'nograd' overloads of poolkit's torch operators (python/poolkit/torch/
// _ops.py defines them and their Python kernels, which still serve every other device): a compiled graph then
// reaches poolkit's core through the dispatcher alone, without Python between. Where a call is refused (a dtype
// or geometry the core does not take), the kernel calls the operator's default overload, whose Python kernel
// raises poolkit's own error, type and message as in eager mode. Built where the Python that builds poolkit has
// PyTorch with torch.library.custom_op (python/CMakeLists.txt); loaded by _ops.py.
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_strided.h>
#include <ATen/ops/from_blob.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "../recipe.hpp"
#include "poolkit/error.hpp"
#include "poolkit/ops.hpp"

namespace poolkit::torch_ops {
namespace {

using Str = c10::string_view;
using Ints = c10::IntArrayRef;
using Reals = c10::ArrayRef<double>;
using Pair = std::tuple<at::Tensor, at::Tensor>;

struct DTypes {
  at::ScalarType torch;
  DType core;
};
constexpr DTypes kDTypes[] = {
    {at::kFloat, DType::f32}, {at::kDouble, DType::f64}, {at::kHalf, DType::f16}, {at::kBFloat16, DType::bf16},
    {at::kLong, DType::i64},  {at::kInt, DType::i32},    {at::kShort, DType::i16}, {at::kByte, DType::u8},
    {at::kChar, DType::i8}};

std::optional<DType> core_dtype(at::ScalarType t) {
  for (const auto& d : kDTypes)
    if (d.torch == t) return d.core;
  return std::nullopt;
}

// The core's dtype of x where these kernels take x: (N, C, spatial...) of 1 to 3 spatial axes (whatever else goes
// to the default overload, which refuses it in Python), in a dtype the operator takes: every one of kDTypes for
// max pooling, floating types and int64 for average pooling (poolkit._types.ACCEPTED).
std::optional<DType> taken(const at::Tensor& x, bool average) {
  auto d = core_dtype(x.scalar_type());
  if (x.dim() < 3 || x.dim() > kMaxRank) return std::nullopt;
  return d && (!average || is_floating(*d) || *d == DType::i64) ? d : std::nullopt;
}

at::ScalarType torch_dtype(DType t) {
  for (const auto& d : kDTypes)
    if (d.core == t) return d.torch;
  fail("indices", "has no torch dtype");
}

TensorView view_of(const at::Tensor& t, DType dtype) {
  TensorView v;
  v.data = t.data_ptr();
  v.dtype = dtype;
  v.shape.rank = v.strides.rank = int(t.dim());
  for (int i = 0; i < int(t.dim()); ++i) {
    v.shape[i] = t.size(i);
    v.strides[i] = t.stride(i);
  }
  return v;
}

// poolkit._layout.is_channels_last's rule: the channel axis is the innermost one (outputs take the input's layout).
bool channels_last(const at::Tensor& x) {
  if (x.dim() < 3 || x.size(1) <= 1) return false;
  int64_t inner = -1;
  for (int i = 2; i < int(x.dim()); ++i)
    if (x.size(i) > 1 && (inner < 0 || std::abs(x.stride(i)) < inner)) inner = std::abs(x.stride(i));
  return inner >= 0 && std::abs(x.stride(1)) < inner;
}

std::vector<int64_t> spatial(const at::Tensor& x) { return {x.sizes().begin() + 2, x.sizes().end()}; }

// Outputs this large come from poolkit's memory cache, as poolkit.torch's (poolkit._layout.CACHED_BYTES): a call
// that frees and asks for the same size again faults no fresh pages. The cache is poolkit._core's (one per
// process, which poolkit.set_cache_limit governs): _ops.py hands its functions over after loading this library
// (poolkit_torch_use_allocator); until then outputs come from PyTorch's allocator.
constexpr size_t kCachedBytes = size_t(256) << 10;
void* (*g_allocate)(size_t) = nullptr;
void (*g_release)(void*) = nullptr;

// An output of (N, C, out...) in x's layout.
at::Tensor output(const Geometry& g, const at::Tensor& x, at::ScalarType dtype) {
  Shape s;
  s.rank = 2 + g.rank;
  s[0] = x.size(0);
  s[1] = x.size(1);
  auto out = g.output_size();
  for (int i = 0; i < g.rank; ++i) s[2 + i] = out[size_t(i)];
  Strides st = contiguous_strides(s, channels_last(x) ? Layout::ChannelsLast : Layout::ChannelsFirst);
  Ints sizes(s.dims.data(), size_t(s.rank)), strides(st.dims.data(), size_t(st.rank));
  size_t bytes = size_t(s.numel()) * c10::elementSize(dtype);
  if (bytes < kCachedBytes || !g_allocate) return at::empty_strided(sizes, strides, x.options().dtype(dtype));
  return at::from_blob(g_allocate(bytes), sizes, strides, [](void* p) { g_release(p); }, x.options().dtype(dtype));
}

Geometry geometry(const at::Tensor& x, Str builder, Ints ints, Ints lens, Reals reals, Str text, bool flag) {
  return py::recipe_geometry(std::string(builder), ints.vec(), lens.vec(), reals.vec(), std::string(text), flag,
                             spatial(x));
}

template <class Sig>
c10::TypedOperatorHandle<Sig> default_overload(const char* name) {
  return c10::Dispatcher::singleton().findSchemaOrThrow(name, "").typed<Sig>();
}

using MaxSig = Pair(const at::Tensor&, Str, Ints, Ints, Reals, Str, bool, bool, bool);

Pair max_pool(const at::Tensor& x, Str builder, Ints ints, Ints lens, Reals reals, Str text, bool flag,
              bool int64_indices, bool for_grad) {
  if (auto dt = taken(x, false)) {
    try {
      Geometry g = geometry(x, builder, ints, lens, reals, text, flag);
      at::Tensor y = output(g, x, x.scalar_type());
      // the indices as poolkit.torch._autograd.index_form gives them: int64 when asked for, else the compact
      // argmax where a backward may follow, else none (an empty tensor of the compact dtype)
      const DType local = local_argmax_dtype(g), form = int64_indices ? DType::i64 : local;
      const bool keep = int64_indices || (for_grad && x.is_floating_point());
      at::Tensor am = keep ? output(g, x, torch_dtype(form)) : at::empty({0}, x.options().dtype(torch_dtype(local)));
      TensorView av = keep ? view_of(am, form) : TensorView{};
      max_pool_forward(g, view_of(x, *dt), view_of(y, *dt), av);
      return {y, am};
    } catch (const Error&) {
    }
  }
  static auto op = default_overload<MaxSig>("poolkit::max_pool");
  return op.call(x, builder, ints, lens, reals, text, flag, int64_indices, for_grad);
}

using AvgSig = at::Tensor(const at::Tensor&, Str, Ints, Ints, Reals, Str, bool, bool, std::optional<int64_t>);

at::Tensor avg_pool(const at::Tensor& x, Str builder, Ints ints, Ints lens, Reals reals, Str text, bool flag,
                    bool count_include_pad, std::optional<int64_t> divisor_override) {
  if (auto dt = taken(x, true)) {
    try {
      Geometry g = geometry(x, builder, ints, lens, reals, text, flag);
      at::Tensor y = output(g, x, x.scalar_type());
      avg_pool_forward(g, AvgOptions{count_include_pad, divisor_override}, view_of(x, *dt), view_of(y, *dt));
      return y;
    } catch (const Error&) {
    }
  }
  static auto op = default_overload<AvgSig>("poolkit::avg_pool");
  return op.call(x, builder, ints, lens, reals, text, flag, count_include_pad, divisor_override);
}

}  // namespace
}  // namespace poolkit::torch_ops

extern "C" __attribute__((visibility("default"))) void poolkit_torch_use_allocator(void* (*allocate)(size_t),
                                                                                  void (*release)(void*)) {
  poolkit::torch_ops::g_release = release;
  poolkit::torch_ops::g_allocate = allocate;
}

TORCH_LIBRARY_IMPL(poolkit, CPU, m) {
  m.impl("max_pool.nograd", TORCH_FN(poolkit::torch_ops::max_pool));
  m.impl("avg_pool.nograd", TORCH_FN(poolkit::torch_ops::avg_pool));
}
