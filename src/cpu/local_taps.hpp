#pragma once
// Window-local argmax codes (jt, jh, jw in window order) of the channels-first max backward: the taps of each code,
// and the check that a row of saved codes names cells of their windows.
#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "common.hpp"

namespace poolkit::cpu {

struct LocalTaps {
  int64_t codes;                     // taps of a window: valid codes are below
  std::vector<uint16_t> jt, jh, jw;  // per code: its taps, checked where the plane's edges cut a window

  explicit LocalTaps(const Tables& tab) : codes(tab.t.axis.kernel * tab.h.axis.kernel * tab.w.axis.kernel) {
    const int64_t kh = tab.h.axis.kernel, kw = tab.w.axis.kernel;
    for (int64_t v = 0; v < codes; ++v)
      jt.push_back(uint16_t(v / (kh * kw))), jh.push_back(uint16_t(v / kw % kh)), jw.push_back(uint16_t(v % kw));
  }

  // Is every code of output row (ot, oh) (am[ow * as] for ow < OW) a tap of its window? Where the row's windows
  // are whole along T and H, the outputs whose windows are whole along W need only the range check.
  template <class U>
  bool row_valid(const Tables& tab, const U* am, int64_t as, int64_t ot, int64_t oh) const {
    using V = std::make_unsigned_t<U>;
    const AxisTable &At = tab.t, &Bt = tab.h, &Wt = tab.w;
    const bool whole = At.first[ot] == 0 && At.last[ot] == At.axis.kernel && Bt.first[oh] == 0 &&
                       Bt.last[oh] == Bt.axis.kernel;
    const int64_t lo = whole ? Wt.full_begin : 0, hi = whole ? Wt.full_end : 0, OW = Wt.axis.out;
    V top = 0;
    for (int64_t ow = lo; ow < hi; ++ow) top = std::max(top, V(am[ow * as]));  // (read as unsigned: -1 is large)
    if (hi > lo && uint64_t(top) >= uint64_t(codes)) return false;
    for (int64_t ow = 0; ow < OW; ++ow) {
      if (ow == lo && hi > lo) ow = hi;
      if (ow >= OW) break;
      const V v = V(am[ow * as]);
      if (uint64_t(v) >= uint64_t(codes)) return false;
      if (jt[v] < At.first[ot] || jt[v] >= At.last[ot] || jh[v] < Bt.first[oh] || jh[v] >= Bt.last[oh] ||
          jw[v] < Wt.first[ow] || jw[v] >= Wt.last[ow])
        return false;
    }
    return true;
  }
};

}  // namespace poolkit::cpu
