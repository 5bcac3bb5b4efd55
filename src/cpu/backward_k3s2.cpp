// Max backward of 3x3 windows of stride 2 (the ResNet stem's pooling) in channels-first planes, from a
// window-local argmax: per plane, the output rows are copied into padded rows (gradients in dx's type, codes as
// bytes), then the kernel of kernels_k3s2.cpp makes two dx rows from each pair of output rows by compares and
// selects in a plane that stays in the cache, and copies that to dx.
#include <algorithm>
#include <cstring>
#include <vector>

#include "backward.hpp"
#include "kernels.hpp"
#include "local_taps.hpp"

namespace poolkit::cpu {
namespace {

bool k3s2_axis(const Axis& a) {
  return a.kind == AxisKind::Regular && a.kernel == 3 && a.stride == 2 && a.dilation == 1 &&
         (a.pad_lo == 0 || a.pad_lo == 1) && a.out <= (a.in + a.pad_lo + 1) / 2;
}

constexpr uint8_t kNone = 255;  // the code of a padded row's cells where there is no output

struct K3S2Plan {
  const Backward& b;
  LocalTaps taps;
  int64_t lanes, pitch, rows, plane;  // rows: padded rows read; plane: the staging plane's elements
  bool stream;
  explicit K3S2Plan(const Backward& bw) : b(bw), taps(bw.tab), stream(bw.dx_big()) {
    const int64_t H = b.tab.h.axis.in, W = b.tab.w.axis.in;
    lanes = ((W + 1) / 2 + kK3S2Lanes - 1) / kK3S2Lanes * kK3S2Lanes;
    pitch = lanes + 2;
    rows = (H + 1) / 2 + 2;
    plane = (H + 1) * W + 2 * lanes;
  }
};

// U: the saved argmax's type.
template <class T, class U>
bool plane(const K3S2Plan& p, std::vector<T>& g, std::vector<uint8_t>& code, std::vector<T>& staging, int64_t n,
           int64_t c) {
  const Backward& b = p.b;
  const int64_t OH = b.tab.h.axis.out, OW = b.tab.w.axis.out;
  for (int64_t oh = 0; oh < OH; ++oh)
    if (!p.taps.row_valid(b.tab, b.am.at<U>(b.am.offset(n, c, 0, oh, 0)), 1, 0, oh)) return false;
  for (int64_t r = 0; r < p.rows; ++r) {  // row r: output row r - 1
    T* gr = g.data() + r * p.pitch;
    uint8_t* ar = code.data() + r * p.pitch;
    const int64_t oh = r - 1, filled = oh >= 0 && oh < OH ? OW : 0;
    if (filled) {
      std::memcpy(gr + 1, b.dy.at<T>(b.dy.offset(n, c, 0, oh, 0)), size_t(OW) * sizeof(T));
      const U* am = b.am.at<U>(b.am.offset(n, c, 0, oh, 0));
      if constexpr (sizeof(U) == 1) std::memcpy(ar + 1, am, size_t(OW));
      else for (int64_t ow = 0; ow < OW; ++ow) ar[ow + 1] = uint8_t(am[ow]);  // (checked: below 9)
    }
    gr[0] = T(0), ar[0] = kNone;
    std::fill(gr + 1 + filled, gr + p.pitch, T(0));
    std::fill(ar + 1 + filled, ar + p.pitch, kNone);
  }
  K3S2Job j;
  j.g = g.data(), j.code = code.data();
  j.pitch = p.pitch, j.lanes = p.lanes;
  j.plane = staging.data();
  j.dx = b.dx.at<T>(b.dx.offset(n, c, 0, 0, 0));
  j.dx_row = b.dx.s[3];
  j.height = b.tab.h.axis.in, j.width = b.tab.w.axis.in;
  j.pad_h = b.tab.h.axis.pad_lo, j.pad_w = b.tab.w.axis.pad_lo;
  j.stream = p.stream;
  if constexpr (std::is_same_v<T, float>) k3s2_max_backward_f32(j);
  else if constexpr (std::is_same_v<T, double>) k3s2_max_backward_f64(j);
  else if constexpr (std::is_same_v<T, bfloat16>) k3s2_max_backward_bf16(j);
  else k3s2_max_backward_f16(j);
  return true;
}

template <class T>
bool planes(const K3S2Plan& p) {
  const Backward& b = p.b;
  const int64_t planes = b.N * b.C, per_plane = b.work / std::max<int64_t>(1, planes);
  const int64_t chunk = std::max<int64_t>(1, 4096 / std::max<int64_t>(1, per_plane));  // small planes go together
  return parallel_for((planes + chunk - 1) / chunk, b.work, [&](int64_t task) {
    thread_local std::vector<T> g, staging;
    thread_local std::vector<uint8_t> code;
    g.resize(size_t(p.rows * p.pitch)), code.resize(g.size()), staging.resize(size_t(p.plane));
    bool ok = true;
    for (int64_t i = task * chunk; i < std::min(planes, (task + 1) * chunk) && ok; ++i) {
      const int64_t n = i / b.C, c = i % b.C;
      switch (b.form) {
        case IndexForm::U8: ok = plane<T, uint8_t>(p, g, code, staging, n, c); break;
        case IndexForm::I16: ok = plane<T, int16_t>(p, g, code, staging, n, c); break;
        default: ok = plane<T, int32_t>(p, g, code, staging, n, c); break;
      }
    }
    return ok;
  });
}

}  // namespace

bool k3s2_fits(const Backward& b) {
  const Axis& A = b.tab.t.axis;
  return b.is_max && (b.form == IndexForm::U8 || b.form == IndexForm::I16 || b.form == IndexForm::I32) &&
         A.in == 1 && A.out == 1 && A.kernel == 1 && k3s2_axis(b.tab.h.axis) && k3s2_axis(b.tab.w.axis) &&
         b.dx.s[4] == 1 && b.dy.s[4] == 1 && b.am.s[4] == 1;
}

bool k3s2_backward(const Backward& b) {
  const K3S2Plan p(b);
  switch (b.dtype) {
    case DType::f32: return planes<float>(p);
    case DType::f64: return planes<double>(p);
    case DType::bf16: return planes<bfloat16>(p);
    default: return planes<float16>(p);
  }
}

}  // namespace poolkit::cpu
