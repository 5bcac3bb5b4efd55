#pragma once
// XLA's buffers as poolkit views, and the geometry an FFI call's attributes describe.
#include <string>
#include <vector>

#include "poolkit/error.hpp"
#include "poolkit/geometry.hpp"
#include "poolkit/tensor.hpp"
#include "xla/ffi/api/ffi.h"

namespace poolkit::jax_ffi {

namespace ffi = xla::ffi;

// How the Python side laid the pooled axes out in every buffer of a call: `rank` spatial axes, the channels last
// (batch..., spatial..., C) or first (batch..., C, spatial...). Leading batch axes (vmap adds some) fold into N.
struct Layout {
  int rank = 0;
  bool channels_last = true;
};

Layout layout_of(const ffi::Dictionary& attrs);

// The row-major buffer `b` as an (N, C, spatial...) view; no copy. `name` is the argument named in errors.
TensorView view_of(const ffi::AnyBuffer& b, const Layout& l, const char* name);

// view_of() for an output that the kernel writes whole: asks the OS for huge pages on a large buffer first.
TensorView output_view(const ffi::AnyBuffer& b, const Layout& l, const char* name);

// Fractional pooling's samples (batch..., C, rank) as the (N, C, rank) view the core reads.
TensorView samples_view(const ffi::AnyBuffer& b, const Layout& l);

// Entries [begin, begin + count) of v's N axis.
TensorView slice_n(TensorView v, int64_t begin, int64_t count);

std::vector<int64_t> spatial_size(const TensorView& v);

// The geometry for input spatial size `in`, from the core's builder the attributes name ("window": ONNX-style
// kernel/strides/pads/auto_pad; "torch": PyTorch's kernel/strides/pads/dilation/ceil_mode; "adaptive":
// output_size; "global"; "fractional": output_size/kernel/in_float).
Geometry geometry_of(const ffi::Dictionary& attrs, const std::vector<int64_t>& in);

// Attribute `name` of type T, or a poolkit error naming it.
template <class T>
T attr(const ffi::Dictionary& attrs, const char* name) {
  auto v = attrs.get<T>(name);
  if (!v.has_value()) fail(std::string("attribute ") + name, "missing or of the wrong type");
  return *v;
}

}  // namespace poolkit::jax_ffi
