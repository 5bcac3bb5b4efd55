#pragma once
#include <array>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "poolkit/dtype.hpp"

namespace poolkit {

enum class Device : uint8_t { CPU, CUDA };

constexpr int kMaxRank = 5;  // N, C and up to three spatial axes

// Shape and strides (in elements) in logical order: N, C, spatial... Channels-last and any other strided
// view of the same logical tensor are the same type; only the strides differ.
struct Shape {
  int rank = 0;
  std::array<int64_t, kMaxRank> dims{};
  Shape() = default;
  Shape(std::initializer_list<int64_t> d);
  explicit Shape(const std::vector<int64_t>& d);
  int64_t operator[](int i) const { return dims[i]; }
  int64_t& operator[](int i) { return dims[i]; }
  int64_t numel() const;  // overflow-checked
  bool operator==(const Shape& o) const;
  bool operator!=(const Shape& o) const { return !(*this == o); }
  std::string str() const;
};

using Strides = Shape;

enum class Layout : uint8_t { ChannelsFirst, ChannelsLast };

Strides contiguous_strides(const Shape& shape, Layout layout = Layout::ChannelsFirst);

// A non-owning view of a tensor.
struct TensorView {
  void* data = nullptr;
  DType dtype = DType::f32;
  Device device = Device::CPU;
  Shape shape;
  Strides strides;

  TensorView() = default;
  TensorView(void* d, DType t, const Shape& s, const Strides& st, Device dev = Device::CPU)
      : data(d), dtype(t), device(dev), shape(s), strides(st) {}
  TensorView(void* d, DType t, const Shape& s, Layout layout = Layout::ChannelsFirst)
      : data(d), dtype(t), shape(s), strides(contiguous_strides(s, layout)) {}

  bool defined() const { return data != nullptr || (shape.rank > 0 && shape.numel() == 0); }
  int rank() const { return shape.rank; }
  int64_t numel() const { return shape.numel(); }
  bool is_contiguous(Layout layout = Layout::ChannelsFirst) const;
  template <class T> T* ptr() const { return static_cast<T*>(data); }
};

// An owning tensor for the convenience API and tests: 64-byte aligned, contiguous in the layout asked for.
class Tensor {
 public:
  Tensor() = default;
  Tensor(DType dtype, const Shape& shape, Layout layout = Layout::ChannelsFirst);
  const TensorView& view() const { return view_; }
  operator const TensorView&() const { return view_; }
  template <class T> T* data() const { return view_.ptr<T>(); }
  const Shape& shape() const { return view_.shape; }
  DType dtype() const { return view_.dtype; }
  int64_t numel() const { return view_.numel(); }
  // Element access by logical multi-index, converting through double (tests and examples).
  double get(std::initializer_list<int64_t> index) const;
  void set(std::initializer_list<int64_t> index, double value);

 private:
  std::shared_ptr<void> storage_;
  TensorView view_;
};

// Element offset of a logical multi-index in a view.
int64_t offset_of(const TensorView& t, const int64_t* index);
double load_as_double(const TensorView& t, int64_t offset);
// Into an integer dtype the value is truncated toward zero and wrapped modulo 2^bits (-1 stores 255 in uint8);
// NaN stores 0 and magnitudes beyond int64 saturate.
void store_from_double(const TensorView& t, int64_t offset, double v);

}  // namespace poolkit
