#pragma once
// Window geometry: which input cells each output cell reads. The builders below are the only place in poolkit
// where output sizes are computed and pooling parameters validated; each framework's convention is translated
// here into the same explicit per-axis description.
#include <optional>
#include <string>
#include <vector>

#include "poolkit/axis.hpp"

namespace poolkit {

constexpr int kMaxSpatial = 3;

struct Geometry {
  int rank = 0;  // spatial axes, 1..3
  Axis axes[kMaxSpatial];

  std::vector<int64_t> input_size() const;
  std::vector<int64_t> output_size() const;
  int64_t plane_in() const;   // cells of one (n, c) input plane
  int64_t plane_out() const;  // cells of one (n, c) output plane
  int64_t window_cells() const;  // product of the largest windows: the range of a window-local argmax
};

// ---- Explicit form: per-axis kernel, stride, dilation and padding on each side ----
struct RegularParams {
  std::vector<int64_t> kernel;
  std::vector<int64_t> stride;    // empty: equal to kernel
  std::vector<int64_t> dilation;  // empty: 1
  std::vector<int64_t> pad_lo;    // empty: 0
  std::vector<int64_t> pad_hi;    // empty: 0
  bool ceil_mode = false;
};
// Output size per axis: floor((in + lo + hi - d(k-1) - 1 + (ceil ? s-1 : 0)) / s) + 1, and in ceil mode
// one fewer when the last window would start at or past the end of the input (it must start inside the
// input or the left padding). Every window must read at least one input cell.
Geometry regular_geometry(const std::vector<int64_t>& in, const RegularParams& p);

// ---- PyTorch: symmetric padding of at most half the kernel size (dilation not counted) ----
Geometry torch_geometry(const std::vector<int64_t>& in, std::vector<int64_t> kernel, std::vector<int64_t> stride,
                        std::vector<int64_t> padding, std::vector<int64_t> dilation, bool ceil_mode);

// ---- Keras / TensorFlow: 'valid' or 'same' (the odd padding cell at the end), strides default to pool_size ----
Geometry keras_geometry(const std::vector<int64_t>& in, std::vector<int64_t> pool_size,
                        std::vector<int64_t> strides, const std::string& padding);

// ---- ONNX: explicit pads [begin..., end...] or auto_pad NOTSET / VALID / SAME_UPPER / SAME_LOWER ----
struct OnnxParams {
  std::vector<int64_t> kernel_shape;
  std::vector<int64_t> strides;    // empty: 1
  std::vector<int64_t> dilations;  // empty: 1
  std::vector<int64_t> pads;       // empty: 0
  std::string auto_pad = "NOTSET";
  bool ceil_mode = false;
};
Geometry onnx_geometry(const std::vector<int64_t>& in, const OnnxParams& p);

// ---- Adaptive (PyTorch's bins), global, fractional ----
Geometry adaptive_geometry(const std::vector<int64_t>& in, const std::vector<int64_t>& out);
Geometry global_geometry(const std::vector<int64_t>& in);
// Fractional max pooling: windows of `kernel` cells at pseudo-random starts. The samples u (one per axis) are
// set per (n, c) plane with with_fractional_samples(). `in_float`: compute the sequence in float32. An output
// size of 0 is valid (an empty output, as PyTorch).
Geometry fractional_geometry(const std::vector<int64_t>& in, const std::vector<int64_t>& out,
                             const std::vector<int64_t>& kernel, bool in_float = true);
// Output size of fractional pooling from a ratio in (0, 1): int(in * ratio) per axis.
std::vector<int64_t> fractional_output_size(const std::vector<int64_t>& in, const std::vector<double>& ratio,
                                            const std::vector<int64_t>& kernel);
Geometry with_fractional_samples(Geometry g, const double* samples);

// ---- Max unpool: the output size ----
// Default per axis: (in - 1) * stride + kernel - 2 * padding. A requested size must lie strictly within one
// stride of the default.
std::vector<int64_t> unpool_output_size(const std::vector<int64_t>& in, std::vector<int64_t> kernel,
                                        std::vector<int64_t> stride, std::vector<int64_t> padding,
                                        const std::optional<std::vector<int64_t>>& requested);

}  // namespace poolkit
