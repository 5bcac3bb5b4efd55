#pragma once
// Zero-copy conversion of NumPy arrays, torch tensors and other DLPack producers to poolkit views: host memory, or
// CUDA device memory (the CUDA backend's tensors).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <optional>
#include <string>

#include "poolkit/error.hpp"
#include "poolkit/tensor.hpp"

namespace poolkit::py {

namespace nb = nanobind;
using In = nb::ndarray<nb::ro>;  // read
using Out = nb::ndarray<>;       // written

DType dtype_from(const nb::dlpack::dtype& t, const char* name);
Device device_from(int dlpack_device_type, const char* name);

// The view of `a` (shape and element strides as they are); `name` is the argument named in errors.
template <class A>
TensorView view_of(const A& a, const char* name) {
  if (a.ndim() > size_t(kMaxRank))
    fail(name, "must have at most " + std::to_string(kMaxRank) + " dimensions (got " + std::to_string(a.ndim()) + ")");
  TensorView v;
  v.data = const_cast<void*>(static_cast<const void*>(a.data()));
  v.dtype = dtype_from(a.dtype(), name);
  v.device = device_from(a.device_type(), name);
  v.shape.rank = int(a.ndim());
  v.strides.rank = int(a.ndim());
  for (size_t i = 0; i < a.ndim(); ++i) {
    v.shape[int(i)] = int64_t(a.shape(i));
    v.strides[int(i)] = a.stride(i);
  }
  return v;
}

// An optional array: None gives an undefined view.
template <class A>
TensorView optional_view(const std::optional<A>& a, const char* name) {
  return a ? view_of(*a, name) : TensorView{};
}

}  // namespace poolkit::py
