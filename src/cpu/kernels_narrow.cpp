// The average backward of narrow channels-first planes (see NarrowJob in kernels.hpp): a dx row in one vector,
// each term's lanes picked from its q row by a table lookup per column slot.
#include "kernels.hpp"

#include <algorithm>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/cpu/kernels_narrow.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/aligned_allocator.h>
#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace poolkit::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

int64_t NarrowLanesF32() { return int64_t(hn::Lanes(hn::ScalableTag<float>())); }

// kSlots column slots, fixed at compile time: the picks and their masks then stay in registers (with a count
// read at run time they lived on the stack and every term reloaded them: adaptive 13 -> 7 at 0.3 of the limit)
template <int kSlots>
void narrow_avg_backward(const NarrowJob& j) {
  const hn::ScalableTag<float> d;
  const hn::RebindToSigned<decltype(d)> di;
  using V = hn::Vec<decltype(d)>;
  const int64_t N = int64_t(hn::Lanes(d));
  const auto dy_lanes = hn::FirstN(d, size_t(j.out_width)), dx_lanes = hn::FirstN(d, size_t(j.width));
  decltype(hn::IndicesFromVec(d, hn::Zero(di))) pick[kSlots];
  hn::Mask<decltype(d)> has[kSlots];
  for (int b = 0; b < kSlots; ++b) {
    const auto s = hn::LoadU(di, j.slot + b * N);
    pick[b] = hn::IndicesFromVec(d, hn::Max(s, hn::Zero(di)));
    has[b] = hn::RebindMask(d, s > hn::Set(di, -1));
  }
  thread_local hwy::AlignedFreeUniquePtr<float[]> q_buffer;
  thread_local int64_t q_size = 0;
  if (q_size < j.out_rows * N) q_buffer = hwy::AllocateAligned<float>(size_t(j.out_rows * N)), q_size = j.out_rows * N;
  float* const q = q_buffer.get();
  for (int64_t p = 0; p < j.planes; ++p) {
    const float* dy = j.dy + p * j.dy_plane;
    float* dx = j.dx + p * j.dx_plane;
    for (int64_t r = 0; r < j.out_rows; ++r) {
      float* qr = q + r * N;
#if HWY_TARGET <= HWY_AVX2
      const V g = hn::MaskedLoad(dy_lanes, d, dy + j.dy_row[r]);
#else  // (MaskedLoad loads the whole vector here)
      std::copy(dy + j.dy_row[r], dy + j.dy_row[r] + j.out_width, qr);
      const V g = hn::IfThenElseZero(dy_lanes, hn::Load(d, qr));
#endif
      hn::Store(hn::Div(g, hn::LoadU(d, j.divisor + r * N)), d, qr);
    }
    for (int64_t r = 0; r < j.in_rows; ++r) {
      V sum = hn::Zero(d);
      for (int k = j.row_terms[r]; k < j.row_terms[r + 1]; ++k) {
        const V row = hn::Load(d, q + int64_t(j.row_term[k]) * N);
        for (int b = 0; b < kSlots; ++b)
          sum = hn::Add(sum, hn::IfThenElseZero(has[b], hn::TableLookupLanes(row, pick[b])));
      }
      if (r < j.full_rows) hn::StoreU(sum, d, dx + j.dx_row[r]);
      else hn::BlendedStore(sum, dx_lanes, d, dx + j.dx_row[r]);
    }
  }
}

void NarrowAvgBackwardF32(const NarrowJob& j) {
  static_assert(kNarrowSlots == 8);
  switch (j.nslots) {
    case 0:
    case 1: return narrow_avg_backward<1>(j);
    case 2: return narrow_avg_backward<2>(j);
    case 3: return narrow_avg_backward<3>(j);
    case 4: return narrow_avg_backward<4>(j);
    case 5: return narrow_avg_backward<5>(j);
    case 6: return narrow_avg_backward<6>(j);
    case 7: return narrow_avg_backward<7>(j);
    default: return narrow_avg_backward<8>(j);
  }
}

}  // namespace poolkit::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace poolkit::cpu {
HWY_EXPORT(NarrowLanesF32);
HWY_EXPORT(NarrowAvgBackwardF32);
int64_t narrow_lanes_f32() { return HWY_DYNAMIC_DISPATCH(NarrowLanesF32)(); }
void narrow_avg_backward_f32(const NarrowJob& j) { HWY_DYNAMIC_DISPATCH(NarrowAvgBackwardF32)(j); }
}  // namespace poolkit::cpu
#endif
