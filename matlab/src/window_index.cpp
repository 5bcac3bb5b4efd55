#include "window_index.hpp"

#include <algorithm>
#include <atomic>
#include <limits>

#include "linear_rows.hpp"

namespace pkmex {

namespace {
std::atomic<int64_t> pair_gathered{0};
}

int64_t pair_gathers() { return pair_gathered.load(std::memory_order_relaxed); }

WindowIndex::WindowIndex(const Plan& p)
    : rank_(p.g.rank), check_(p.padded()), total_(p.ynumel), ydims_(p.ydims) {
  Tables<int64_t>& t = int_tables_;
  size_t nd = p.ydims.size();
  axis_of_.assign(nd, -1);
  for (int a = 0; a < rank_; ++a) axis_of_[p.pooled[a]] = a, in_[a] = p.g.axes[a].in;
  t.coord.resize(nd);
  coord_origin_.resize(nd);
  for (size_t i = 0; i < nd; ++i) {
    for (int64_t c = 0; c < p.ydims[i]; ++c) {
      int a = axis_of_[i];
      int64_t pos = a >= 0 ? p.g.axes[a].origin(c) : c;
      t.coord[i].push_back(pos * p.xstride[i]);
      coord_origin_[i].push_back(pos);
    }
  }
  t.lead = t.coord[0];
  while (lead_ < nd && int64_t(t.lead.size()) * p.ydims[lead_] <= kLeadCells) {
    std::vector<int64_t> merged;  // column-major: dimension lead_ varies slowest
    for (int64_t off : t.coord[lead_])
      for (int64_t o : t.lead) merged.push_back(o + off);
    t.lead = std::move(merged);
    ++lead_;
  }
  int64_t cells = p.g.window_cells();
  t.tap.assign(cells, 0);
  tap_pos_.assign(cells * rank_, 0);
  for (int64_t k = 0; k < cells; ++k) {
    int64_t rest = k;
    for (int a = rank_ - 1; a >= 0; --a) {  // row-major over the core's axes: the last axis varies fastest
      const poolkit::Axis& ax = p.g.axes[a];
      int64_t j = rest % ax.kernel;
      rest /= ax.kernel;
      tap_pos_[k * rank_ + a] = j * ax.step();
      t.tap[k] += j * ax.step() * p.xstride[p.pooled[a]];
    }
  }
  auto as_double = [](const std::vector<int64_t>& v) { return std::vector<double>(v.begin(), v.end()); };
  for (const auto& c : t.coord) double_tables_.coord.push_back(as_double(c));
  double_tables_.tap = as_double(t.tap);
  double_tables_.lead = as_double(t.lead);
  // the largest offset a vector row sums in int32 (offsets are never negative: no window reaches the padding)
  const int64_t widest =
      *std::max_element(t.lead.begin(), t.lead.end()) + *std::max_element(t.tap.begin(), t.tap.end());
  vector_rows_ = !check_ && cells <= 8 && widest <= std::numeric_limits<int32_t>::max() && have_avx2();
  if (vector_rows_) {
    lead32_.assign(t.lead.begin(), t.lead.end());
    for (int64_t k = 0; k < cells; ++k) tap8_[k] = int32_t(t.tap[k]);
    pair_run_ = ydims_[0];
    pair_rows_ = cells % 2 == 0 && pair_run_ % 8 == 0;
    for (int64_t k = 0; pair_rows_ && 2 * k < cells; ++k) pair_rows_ = tap8_[2 * k + 1] == tap8_[2 * k] + 1;
    for (size_t k = 0; pair_rows_ && k < t.lead.size(); ++k)
      pair_rows_ = int64_t(k) % pair_run_ == 0 || t.lead[k] == t.lead[k - 1] + 2;
  }
}

template <class Tap>
void WindowIndex::linear(const Tap* taps, double* ix) const {
  if constexpr (std::is_same_v<Tap, uint8_t>) {
    if (vector_rows_) {
      walk_rows<double>(
          true,
          [&](int64_t y0, int64_t inner, double base, const double*, int64_t*) {
            linear_row_avx2(taps + y0, inner, base + 1, lead32_.data(), tap8_, ix + y0);
          },
          [] { stream_fence(); });
      return;
    }
  }
  for_each<double>(taps, true, [&](int64_t y, double x) { ix[y] = x + 1; });
}

template <class Tap, class T>
bool WindowIndex::gather(const Tap* taps, const T* src, T* dst) const {
  std::atomic<bool> ok{true};
  if constexpr (std::is_same_v<Tap, uint8_t>) {
    if (pair_rows_) {
      const int cells = int(window_cells());
      walk_rows<int64_t>(
          true,
          [&](int64_t y0, int64_t inner, int64_t base, const int64_t* lead, int64_t*) {
            for (int64_t k = 0; k < inner; k += pair_run_)
              if (pair_row_avx2(taps + y0 + k, pair_run_, cells, src + base + lead[k], tap8_, dst + y0 + k) < pair_run_)
                ok.store(false, std::memory_order_relaxed);
          },
          [] { stream_fence(); });
      pair_gathered.fetch_add(1, std::memory_order_relaxed);
      return ok;
    }
  }
  for_each(taps, true, [&](int64_t y, int64_t x) {
    if (x < 0) ok.store(false, std::memory_order_relaxed);
    else dst[y] = src[x];
  });
  return ok;
}

template void WindowIndex::linear(const uint8_t*, double*) const;
template void WindowIndex::linear(const int16_t*, double*) const;
template void WindowIndex::linear(const int32_t*, double*) const;

template bool WindowIndex::gather(const uint8_t*, const float*, float*) const;
template bool WindowIndex::gather(const int16_t*, const float*, float*) const;
template bool WindowIndex::gather(const int32_t*, const float*, float*) const;
template bool WindowIndex::gather(const uint8_t*, const double*, double*) const;
template bool WindowIndex::gather(const int16_t*, const double*, double*) const;
template bool WindowIndex::gather(const int32_t*, const double*, double*) const;

}  // namespace pkmex
