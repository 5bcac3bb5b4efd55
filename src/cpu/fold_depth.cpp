#include "fold_depth.hpp"

namespace poolkit::cpu {

DepthFold fold_depth(const Geometry& g, const TensorView& a, const TensorView& b, const TensorView& argmax) {
  DepthFold r;
  if (g.rank != 3) return r;
  const Axis& t = g.axes[0];
  // (an adaptive axis of as many outputs as inputs has bins of one cell; a regular one needs stride 1, no padding)
  const bool identity = t.out == t.in && (t.kind == AxisKind::Adaptive ||
                                          (t.kind == AxisKind::Regular && t.kernel == 1 && t.stride == 1 &&
                                           t.pad_lo == 0 && t.pad_hi == 0));
  if (!identity || g.axes[1].kind == AxisKind::Fractional || g.axes[2].kind == AxisKind::Fractional ||
      (argmax.data && argmax.dtype == DType::i64))
    return r;
  const int64_t D = t.in;
  const TensorView* views[3] = {&a, &b, &argmax};
  // (n, c, d) is cell n * D + d of the merged batch, or c * D + d of the merged channels, in every view alike
  bool batch = true, channels = true;
  for (const TensorView* v : views) {
    if (!v->data) continue;
    if (v->rank() != 5 || v->shape[2] != D) return r;
    batch &= v->shape[0] == 1 || D == 1 || v->strides[0] == D * v->strides[2];
    channels &= v->shape[1] == 1 || D == 1 || v->strides[1] == D * v->strides[2];
  }
  if (!batch && !channels) return r;
  const int m = batch ? 0 : 1;  // the dimension the depth merges into
  for (int i = 0; i < 3; ++i) {
    const TensorView& v = *views[i];
    if (!v.data) continue;
    Shape shape{v.shape[0], v.shape[1], v.shape[3], v.shape[4]};
    Strides strides{v.strides[0], v.strides[1], v.strides[3], v.strides[4]};
    shape[m] *= D;
    if (D > 1) strides[m] = v.strides[2];
    r.v[i] = TensorView(v.data, v.dtype, shape, strides, v.device);
  }
  r.g.rank = 2;
  r.g.axes[0] = g.axes[1], r.g.axes[1] = g.axes[2];
  r.ok = true;
  return r;
}

}  // namespace poolkit::cpu
