#include "poolkit/tensor.hpp"

#include <cmath>
#include <cstring>
#include <limits>

#include "poolkit/error.hpp"
#include "poolkit/memory.hpp"
#include "checked.hpp"

namespace poolkit {

Shape::Shape(std::initializer_list<int64_t> d) : Shape(std::vector<int64_t>(d)) {}

Shape::Shape(const std::vector<int64_t>& d) {
  if (d.size() > size_t(kMaxRank)) fail("shape", "rank must be at most " + std::to_string(kMaxRank));
  rank = int(d.size());
  for (int i = 0; i < rank; ++i) dims[i] = d[i];
}

int64_t Shape::numel() const {
  int64_t n = 1;
  for (int i = 0; i < rank; ++i) n = checked_mul(n, dims[i], "shape");
  return n;
}

bool Shape::operator==(const Shape& o) const {
  if (rank != o.rank) return false;
  for (int i = 0; i < rank; ++i)
    if (dims[i] != o.dims[i]) return false;
  return true;
}

std::string Shape::str() const {
  std::string s = "(";
  for (int i = 0; i < rank; ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + (rank == 1 ? ",)" : ")");
}

Strides contiguous_strides(const Shape& shape, Layout layout) {
  Strides st;
  st.rank = shape.rank;
  std::vector<int> order;  // axes from slowest to fastest
  for (int i = 0; i < shape.rank; ++i) order.push_back(i);
  if (layout == Layout::ChannelsLast && shape.rank >= 3) {
    order.erase(order.begin() + 1);
    order.push_back(1);
  }
  int64_t s = 1;
  for (int k = shape.rank - 1; k >= 0; --k) {
    st[order[k]] = s;
    s = checked_mul(s, std::max<int64_t>(shape[order[k]], 1), "shape");
  }
  return st;
}

bool TensorView::is_contiguous(Layout layout) const {
  Strides want = contiguous_strides(shape, layout);
  for (int i = 0; i < shape.rank; ++i)
    if (shape[i] != 1 && strides[i] != want[i]) return false;
  return true;
}

Tensor::Tensor(DType dtype, const Shape& shape, Layout layout) {
  int64_t bytes = checked_mul(shape.numel(), dtype_size(dtype), "shape");
  void* p = allocate(size_t(bytes));
  std::memset(p, 0, size_t(bytes));
  storage_ = std::shared_ptr<void>(p, release);
  view_ = TensorView(p, dtype, shape, layout);
}

int64_t offset_of(const TensorView& t, const int64_t* index) {
  int64_t off = 0;
  for (int i = 0; i < t.rank(); ++i) off += index[i] * t.strides[i];
  return off;
}

double load_as_double(const TensorView& t, int64_t off) {
  const char* base = static_cast<const char*>(t.data);
  switch (t.dtype) {
    case DType::f32: return reinterpret_cast<const float*>(base)[off];
    case DType::f64: return reinterpret_cast<const double*>(base)[off];
    case DType::bf16: return float(reinterpret_cast<const bfloat16*>(base)[off]);
    case DType::f16: return float(reinterpret_cast<const float16*>(base)[off]);
    case DType::i64: return double(reinterpret_cast<const int64_t*>(base)[off]);
    case DType::u8: return reinterpret_cast<const uint8_t*>(base)[off];
    case DType::i16: return reinterpret_cast<const int16_t*>(base)[off];
    case DType::i32: return reinterpret_cast<const int32_t*>(base)[off];
    case DType::i8: return reinterpret_cast<const int8_t*>(base)[off];
  }
  return 0;
}

namespace {
// C++ leaves a double-to-integer conversion undefined when the value does not fit: go through int64 (defined for
// every finite value within +-2^63), whose conversion to a narrower integer wraps.
int64_t to_int64(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 0x1p63) return std::numeric_limits<int64_t>::max();
  if (v < -0x1p63) return std::numeric_limits<int64_t>::min();
  return int64_t(v);
}
}  // namespace

void store_from_double(const TensorView& t, int64_t off, double v) {
  char* base = static_cast<char*>(t.data);
  switch (t.dtype) {
    case DType::f32: reinterpret_cast<float*>(base)[off] = float(v); break;
    case DType::f64: reinterpret_cast<double*>(base)[off] = v; break;
    case DType::bf16: reinterpret_cast<bfloat16*>(base)[off] = bfloat16(float(v)); break;
    case DType::f16: reinterpret_cast<float16*>(base)[off] = float16(float(v)); break;
    case DType::i64: reinterpret_cast<int64_t*>(base)[off] = to_int64(v); break;
    case DType::u8: reinterpret_cast<uint8_t*>(base)[off] = uint8_t(to_int64(v)); break;
    case DType::i16: reinterpret_cast<int16_t*>(base)[off] = int16_t(to_int64(v)); break;
    case DType::i32: reinterpret_cast<int32_t*>(base)[off] = int32_t(to_int64(v)); break;
    case DType::i8: reinterpret_cast<int8_t*>(base)[off] = int8_t(to_int64(v)); break;
  }
}

static int64_t checked_index_offset(const Tensor& t, std::initializer_list<int64_t> index) {
  if (int(index.size()) != t.view().rank()) fail("index", "must have one entry per dimension", ErrorKind::Index);
  int64_t idx[kMaxRank];
  int i = 0;
  for (int64_t v : index) {
    if (v < 0 || v >= t.shape()[i]) fail("index", "out of range for dimension " + std::to_string(i), ErrorKind::Index);
    idx[i++] = v;
  }
  return offset_of(t.view(), idx);
}

double Tensor::get(std::initializer_list<int64_t> index) const { return load_as_double(view_, checked_index_offset(*this, index)); }
void Tensor::set(std::initializer_list<int64_t> index, double v) { store_from_double(view_, checked_index_offset(*this, index), v); }

}  // namespace poolkit
