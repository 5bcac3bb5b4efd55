#include "half.hpp"

#include <optional>
#include <vector>

#include "../backends.hpp"
#include "common.hpp"
#include "convert.hpp"

namespace poolkit::cpu {
namespace {

std::optional<Layout> shared_layout(const TensorView& a, const TensorView& b) {
  for (Layout l : {Layout::ChannelsFirst, Layout::ChannelsLast})
    if (a.is_contiguous(l) && b.is_contiguous(l)) return l;
  return std::nullopt;
}

// Images n0 .. n0 + nn - 1, channels c0 .. c0 + nc - 1 of t.
TensorView block(const TensorView& t, int64_t n0, int64_t nn, int64_t c0, int64_t nc) {
  TensorView r = t;
  if (!t.data) return r;
  r.data = static_cast<char*>(t.data) + (n0 * t.strides[0] + c0 * t.strides[1]) * dtype_size(t.dtype);
  r.shape[0] = nn;
  r.shape[1] = nc;
  return r;
}

// Runs pool(in32, out32, argmax block) on float32 copies of blocks of `in`, narrowing out32 into `out`.
// Blocks are ranges of channels of one image in channels-first (contiguous there), whole images otherwise,
// of about 256K input elements each so that the copies stay in the cache.
template <class Pool>
bool through_f32(const TensorView& in, const TensorView& out, const TensorView& argmax, Pool&& pool) {
  std::optional<Layout> layout = shared_layout(in, out);
  if (!layout || (argmax.data && !argmax.is_contiguous(*layout))) return false;
  const int64_t N = in.shape[0], C = in.shape[1], per_image = in.numel() / N;
  const int64_t target = int64_t(1) << 18;
  int64_t images = std::clamp<int64_t>(target / std::max<int64_t>(1, per_image), 1, N), channels = C;
  if (*layout == Layout::ChannelsFirst) {
    channels = std::clamp<int64_t>(target / std::max<int64_t>(1, per_image / C), 1, C);
    if (channels < C) images = 1;
  }
  // a single plane too large for a cached copy (the float32 copy would double a huge tensor): the scalar loop
  if (per_image / C * std::min(channels, C) * images > (int64_t(1) << 22)) return false;
  const int64_t cblocks = (C + channels - 1) / channels, nblocks = (N + images - 1) / images;
  return parallel_for(nblocks * cblocks, in.numel() + out.numel(), [&](int64_t i) {
    const int64_t n0 = (i / cblocks) * images, c0 = (i % cblocks) * channels;
    const int64_t nn = std::min(images, N - n0), nc = std::min(channels, C - c0);
    TensorView ib = block(in, n0, nn, c0, nc), ob = block(out, n0, nn, c0, nc), ab = block(argmax, n0, nn, c0, nc);
    thread_local std::vector<float> a, b;
    a.resize(size_t(ib.numel()));
    b.resize(size_t(ob.numel()));
    widen_to_f32(in.dtype, ib.data, a.data(), ib.numel());
    // the blocks' own strides (compact, but for the batch stride of a single image) keep the argmax's equal
    TensorView i32(a.data(), DType::f32, ib.shape, ib.strides), o32(b.data(), DType::f32, ob.shape, ob.strides);
    if (!pool(i32, o32, ab)) return false;
    narrow_from_f32(out.dtype, b.data(), ob.data, ob.numel());
    return true;
  });
}

}  // namespace

bool half_forward(bool is_max, const Geometry& g, const AvgOptions& opt, const TensorView& x, const TensorView& y,
                  const TensorView& argmax) {
  return through_f32(x, y, argmax, [&](const TensorView& x32, const TensorView& y32, const TensorView& am) {
    return is_max ? cpu::max_pool_forward(g, x32, y32, am) : cpu::avg_pool_forward(g, opt, x32, y32);
  });
}

bool half_backward(bool is_max, const Geometry& g, const AvgOptions& opt, const TensorView& dy,
                   const TensorView& argmax, const TensorView& dx) {
  return through_f32(dy, dx, argmax, [&](const TensorView& dy32, const TensorView& dx32, const TensorView& am) {
    return is_max ? cpu::max_pool_backward(g, dy32, am, TensorView{}, dx32)
                  : cpu::avg_pool_backward(g, opt, dy32, dx32);
  });
}

}  // namespace poolkit::cpu
