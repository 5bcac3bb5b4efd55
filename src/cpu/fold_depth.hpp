#pragma once
// 3-D pooling whose depth axis pools nothing (windows 1 x kh x kw, as video networks' 1x3x3 pools, or adaptive pools
// that keep the depth) is 2-D pooling of each depth slice: the CPU drivers run it as such, with the depth merged into
// the batch or the channels.
#include "poolkit/geometry.hpp"
#include "poolkit/tensor.hpp"

namespace poolkit::cpu {

struct DepthFold {
  bool ok = false;
  Geometry g;        // the 2-D geometry of the other two axes
  TensorView v[3];   // the call's views, 2-D
};

// The fold of a call on views a, b and argmax (any of them undefined) of a 3-D geometry whose depth axis has
// windows of one cell (stride 1 and no padding, or adaptive bins as many as its cells), and whose other axes are not
// fractional (their samples are drawn per plane): the depth merges into the batch where every view's batch step is
// depth steps apart (channels-last), else into the channels where every channel step is (channels-first). Not ok
// otherwise, and not for an int64 argmax (flat over the depth too).
DepthFold fold_depth(const Geometry& g, const TensorView& a, const TensorView& b, const TensorView& argmax);

}  // namespace poolkit::cpu
