#pragma once
// MATLAB's pooling arguments translated into poolkit's geometry and strided views of the column-major arrays,
// with no copy: the pooled dimensions become the core's spatial axes in reverse order (so 'SSCB' is the core's
// contiguous channels-first layout), and the other dimensions, merged where memory allows, its N and C axes.
#include <string>
#include <vector>

#include "mx_args.hpp"
#include "poolkit/geometry.hpp"
#include "poolkit/tensor.hpp"

namespace pkmex {

struct Plan {
  std::string format;                  // one letter per MATLAB dimension
  std::vector<int64_t> xdims, ydims;   // MATLAB sizes of the pooling input and output, one per letter
  std::vector<int64_t> xstride;        // column-major element strides of the input
  std::vector<int> pooled;             // MATLAB dimension of core spatial axis a
  poolkit::Geometry g;
  poolkit::Shape xshape, yshape;       // core (N, C, spatial...) shapes
  poolkit::Strides xst, yst;           // and their strides in elements
  int64_t xnumel = 1, ynumel = 1;

  poolkit::TensorView x_view(const void* data, poolkit::DType t) const;
  poolkit::TensorView y_view(const void* data, poolkit::DType t) const;
  bool padded() const;  // some window reaches into the padding
};

// input_size: size(X) of the pooling input (trailing ones may be missing); poolsize: a numeric vector or
// 'global'. Reads 'Stride', 'Padding' (scalar, vector, 2-by-N [pre; post] or 'same'), 'DataFormat', 'PoolFormat'.
Plan make_plan(const std::vector<int64_t>& input_size, const mxArray* poolsize, const Options& o);

// MATLAB's size for dims: trailing ones kept (MATLAB drops them itself).
std::vector<mwSize> mw_dims(const std::vector<int64_t>& d);

}  // namespace pkmex
