// The MEX API subset of mx_octave.hpp over Octave's arrays (compiled only into the Octave-native entry).
#include "mx_octave.hpp"

#include "poolkit/memory.hpp"
#include "retain_memory.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

namespace pkmex {
namespace {

// Calls f(T{}) with T the element type Octave stores for a numeric class (octave_int<...> for integers).
template <class F>
decltype(auto) with_type(mxClassID c, F&& f) {
  switch (c) {
    case mxSINGLE_CLASS: return f(float{});
    case mxUINT8_CLASS: return f(octave_uint8{});
    case mxINT16_CLASS: return f(octave_int16{});
    case mxINT32_CLASS: return f(octave_int32{});
    case mxDOUBLE_CLASS: return f(double{});
    default: throw std::bad_alloc();  // pkmex creates no other class
  }
}

mxClassID class_of(const octave_value& v) {
  if (v.is_double_type()) return mxDOUBLE_CLASS;
  if (v.is_single_type()) return mxSINGLE_CLASS;
  if (v.is_int8_type()) return mxINT8_CLASS;
  if (v.is_uint8_type()) return mxUINT8_CLASS;
  if (v.is_int16_type()) return mxINT16_CLASS;
  if (v.is_uint16_type()) return mxUINT16_CLASS;
  if (v.is_int32_type()) return mxINT32_CLASS;
  if (v.is_uint32_type()) return mxUINT32_CLASS;
  if (v.is_int64_type()) return mxINT64_CLASS;
  if (v.is_uint64_type()) return mxUINT64_CLASS;
  if (v.is_string()) return mxCHAR_CLASS;
  if (v.islogical()) return mxLOGICAL_CLASS;
  if (v.iscell()) return mxCELL_CLASS;
  if (v.isstruct()) return mxSTRUCT_CLASS;
  if (v.is_function_handle()) return mxFUNCTION_CLASS;
  return mxUNKNOWN_CLASS;
}

}  // namespace

mxArray::mxArray(const octave_value& v) : value_(v), class_(class_of(v)), class_name_(v.class_name()) {
  dim_vector d = v.dims();
  for (int i = 0; i < d.ndims(); ++i) dims_.push_back(mwSize(d(i)));
  numel_ = size_t(v.numel());
  if (v.isnumeric() && !v.iscomplex() && !v.issparse()) {
    if (!v.mex_get_data()) value_ = v.full_value();  // e.g. a range such as 1:3, which stores no elements
    data_ = const_cast<void*>(value_.mex_get_data());  // an argument is only read
  }
}

mxArray::mxArray(mxClassID cls, const std::vector<mwSize>& dims, bool zero)
    : class_(cls), dims_(dims), numel_(1), owned_(true) {
  for (mwSize n : dims) numel_ *= size_t(n);
  with_type(cls, [&](auto t) {
    using T = decltype(t);
    // Raw memory (Octave's Array(dv) would write every element), freed by Octave's Array through std::allocator,
    // i.e. operator delete, i.e. free() (libstdc++). Each output of 2 MiB or more is a fresh mapping by default:
    // on 2 MiB boundaries (operator new's block left the 2 MiB around its unaligned ends to 4 KiB faults, 1.7 of
    // seed 000's 6.4 ms maxpool). With freed memory retained (retain_memory.hpp), outputs come from malloc's
    // heap without that alignment: its 2 MiB of slack made an output miss the hole of the same size that the
    // previous call's left, and the heap grew into fresh pages (seed 000's maxpool with compact indices: 64
    // faults a call, a 39 MiB output 220-250; with plain malloc none).
    const size_t bytes = numel_ * sizeof(T);
    T* p;
    if (freed_memory_retained()) {
      p = static_cast<T*>(std::malloc(std::max<size_t>(bytes, 1)));
      if (!p) throw std::bad_alloc();
      poolkit::advise_huge_pages(p, bytes);  // (the whole 2 MiB pages inside it)
    } else {
      p = static_cast<T*>(poolkit::allocate_uncached(bytes));
    }
    if (zero) std::memset(static_cast<void*>(p), 0, bytes);
    data_ = p;
  });
}

mxArray::~mxArray() {
  if (owned_)
    with_type(class_, [&](auto t) {
      using T = decltype(t);
      std::allocator<T>().deallocate(static_cast<T*>(data_), numel_);
    });
}

octave_value mxArray::value() {
  if (!owned_) return value_;
  dim_vector d = dim_vector::alloc(std::max(2, int(dims_.size())));  // Octave's arrays have two dimensions or more
  for (int i = 0; i < d.ndims(); ++i) d(i) = i < int(dims_.size()) ? octave_idx_type(dims_[size_t(i)]) : 1;
  owned_ = false;  // from here the Array owns the memory (Array's deleter is std::allocator's, as allocated)
  return with_type(class_, [&](auto t) {
    using T = decltype(t);
    return octave_value(Array<T>(static_cast<T*>(data_), d));
  });
}

int mxGetString(const mxArray* a, char* buf, mwSize n) {
  if (n <= 0) return 1;
  std::string s = a->input().string_value();
  size_t k = std::min(s.size(), size_t(n - 1));
  std::memcpy(buf, s.data(), k);
  buf[k] = '\0';
  return k == s.size() ? 0 : 1;
}

}  // namespace pkmex
