#include "window_index.hpp"

namespace pkmex {

WindowIndex::WindowIndex(const Plan& p)
    : rank_(p.g.rank), check_(p.padded()), total_(p.ynumel), ydims_(p.ydims) {
  size_t nd = p.ydims.size();
  axis_of_.assign(nd, -1);
  for (int a = 0; a < rank_; ++a) axis_of_[p.pooled[a]] = a, in_[a] = p.g.axes[a].in;
  coord_offset_.resize(nd);
  coord_origin_.resize(nd);
  for (size_t i = 0; i < nd; ++i) {
    for (int64_t c = 0; c < p.ydims[i]; ++c) {
      int a = axis_of_[i];
      int64_t pos = a >= 0 ? p.g.axes[a].origin(c) : c;
      coord_offset_[i].push_back(pos * p.xstride[i]);
      coord_origin_[i].push_back(pos);
    }
  }
  lead_offset_ = coord_offset_[0];
  while (lead_ < nd && int64_t(lead_offset_.size()) * p.ydims[lead_] <= kLeadCells) {
    std::vector<int64_t> merged;  // column-major: dimension lead_ varies slowest
    for (int64_t off : coord_offset_[lead_])
      for (int64_t o : lead_offset_) merged.push_back(o + off);
    lead_offset_ = std::move(merged);
    ++lead_;
  }
  int64_t cells = p.g.window_cells();
  tap_offset_.assign(cells, 0);
  tap_pos_.assign(cells * rank_, 0);
  for (int64_t t = 0; t < cells; ++t) {
    int64_t rest = t;
    for (int a = rank_ - 1; a >= 0; --a) {  // row-major over the core's axes: the last axis varies fastest
      const poolkit::Axis& ax = p.g.axes[a];
      int64_t j = rest % ax.kernel;
      rest /= ax.kernel;
      tap_pos_[t * rank_ + a] = j * ax.step();
      tap_offset_[t] += j * ax.step() * p.xstride[p.pooled[a]];
    }
  }
}

}  // namespace pkmex
