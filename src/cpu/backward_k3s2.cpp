// Max backward of 3x3 windows of stride 2 (the ResNet stem's pooling) in channels-first planes, from a one-byte
// window-local argmax: per plane, the kernel of kernels_k3s2.cpp copies the output rows into padded rows
// (checking the codes on the way), makes two dx rows from each pair of output rows by compares and selects in a
// plane that stays in the cache, and copies that to dx (or, where dx is streamed past the cache on AVX-512, stores
// the rows straight to dx).
#include <algorithm>
#include <array>
#include <vector>

#include "backward.hpp"
#include "kernels.hpp"

namespace poolkit::cpu {
namespace {

template <class T>
bool planes(const Backward& b) {
  const AxisTable &Bt = b.tab.h, &Wt = b.tab.w;
  K3S2Job job;
  job.dy_row = b.dy.s[3], job.am_row = b.am.s[3];
  job.out_h = Bt.axis.out, job.out_w = Wt.axis.out;
  job.full_h[0] = Bt.full_begin, job.full_h[1] = Bt.full_end;
  job.full_w[0] = Wt.full_begin, job.full_w[1] = Wt.full_end;
  job.height = Bt.axis.in, job.width = Wt.axis.in;
  k3s2_layout(job);
  job.dx_row = b.dx.s[3];
  job.pad_h = Bt.axis.pad_lo, job.pad_w = Wt.axis.pad_lo;
  job.stream = b.stream_dx;
  const size_t padded = size_t(k3s2_padded_size(job)), plane = size_t(k3s2_plane_size(job));
  const int64_t planes = b.N * b.C, per_plane = b.work / std::max<int64_t>(1, planes);
  const int64_t chunk = std::max<int64_t>(1, 4096 / std::max<int64_t>(1, per_plane));  // small planes go together
  return parallel_for((planes + chunk - 1) / chunk, b.work, [&](int64_t task) {
    thread_local std::vector<T> g, staging;
    thread_local std::vector<uint8_t> code;
    thread_local std::array<int64_t, 4> filled{};  // the layout whose margins g and code hold (pitch 0: none)
    g.resize(padded), code.resize(padded), staging.resize(plane);
    K3S2Job j = job;
    j.g = g.data(), j.code = code.data(), j.plane = staging.data();
    const std::array<int64_t, 4> layout{job.pitch, job.rows, job.out_w, job.out_h};
    j.margins_filled = filled == layout;
    filled = layout;  // (the first plane below fills them)
    bool ok = true;
    for (int64_t i = task * chunk; i < std::min(planes, (task + 1) * chunk) && ok; ++i) {
      const int64_t n = i / b.C, c = i % b.C;
      j.dy = b.dy.at<T>(b.dy.offset(n, c, 0, 0, 0));
      j.am = b.am.at<uint8_t>(b.am.offset(n, c, 0, 0, 0));
      j.dx = b.dx.at<T>(b.dx.offset(n, c, 0, 0, 0));
      const bool more = i + 1 < planes;
      j.next_dy = more ? b.dy.at<T>(b.dy.offset((i + 1) / b.C, (i + 1) % b.C, 0, 0, 0)) : nullptr;
      j.next_am = more ? b.am.at<uint8_t>(b.am.offset((i + 1) / b.C, (i + 1) % b.C, 0, 0, 0)) : nullptr;
      if constexpr (std::is_same_v<T, float>) ok = k3s2_max_backward_f32(j);
      else if constexpr (std::is_same_v<T, double>) ok = k3s2_max_backward_f64(j);
      else if constexpr (std::is_same_v<T, bfloat16>) ok = k3s2_max_backward_bf16(j);
      else ok = k3s2_max_backward_f16(j);
    }
    if (staging.size() * sizeof(T) > (size_t(8) << 20)) g = {}, code = {}, staging = {}, filled = {};  // not kept
    return ok;
  });
}

}  // namespace

bool k3s2_fits(const Backward& b) {
  const Axis& A = b.tab.t.axis;
  const int64_t cells = b.tab.h.axis.in * b.tab.w.axis.in;  // (the staging plane, per thread)
  return b.is_max && b.form == IndexForm::U8 && A.in == 1 && A.out == 1 && A.kernel == 1 &&
         k3s2_axis(b.tab.h.axis) && k3s2_axis(b.tab.w.axis) && b.dx.s[4] == 1 && b.dy.s[4] == 1 &&
         b.am.s[4] == 1 && cells * b.esize <= (int64_t(64) << 20);
}

bool k3s2_backward(const Backward& b) {
  switch (b.dtype) {
    case DType::f32: return planes<float>(b);
    case DType::f64: return planes<double>(b);
    case DType::bf16: return planes<bfloat16>(b);
    default: return planes<float16>(b);
  }
}

}  // namespace poolkit::cpu
