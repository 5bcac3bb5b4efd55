#pragma once
// MATLAB's linear indices from poolkit's compact argmax: for every output cell, in Y's column-major order, the
// 0-based linear offset into X of the window cell its tap names (taps numbered row-major over the core's axes,
// which is column-major over MATLAB's pooled dimensions).
#include <omp.h>

#include <cstdint>
#include <type_traits>
#include <vector>

#include "pool_plan.hpp"
#include "poolkit/threads.hpp"

namespace pkmex {

// How many gathers WindowIndex::gather did by pair rows in this process (pkmex('pair_gathers'): the tests' view).
int64_t pair_gathers();

class WindowIndex {
 public:
  explicit WindowIndex(const Plan& p);
  int64_t window_cells() const { return int64_t(int_tables_.tap.size()); }

  // f(y, x) for every output y, with x the offset in X of tap taps[y], or -1 when that tap is not a cell of
  // X (outside the window or in the padding). Threads split the outputs when `parallel`. Off: the type x is
  // summed in, int64_t or double (exact below 2^53; MATLAB's double indices then need no conversion each).
  template <class Off = int64_t, class Tap, class F>
  void for_each(const Tap* taps, bool parallel, F&& f) const {
    const Tables<Off>& tab = tables<Off>();
    const Off* tap_offset = tab.tap.data();
    const uint64_t cells = uint64_t(window_cells());
    walk_rows<Off>(parallel, [&](int64_t y0, int64_t inner, Off base, const Off* inner_offset, int64_t* origin) {
      const Tap* row = taps + y0;
      if (!check_) {  // (no window reaches the padding: a tap is valid when it names a cell of the window)
        for (int64_t k = 0; k < inner; ++k) {
          const int64_t t = int64_t(row[k]);
          f(y0 + k, uint64_t(t) < cells ? base + inner_offset[k] + tap_offset[t] : Off(-1));
        }
        return;
      }
      for (int64_t k = 0; k < inner; ++k) {
        const int64_t t = int64_t(row[k]);
        if (axis_of_[0] >= 0) origin[axis_of_[0]] = coord_origin_[0][k];
        bool ok = uint64_t(t) < cells;
        for (int a = 0; ok && a < rank_; ++a) {
          const int64_t pos = origin[a] + tap_pos_[t * rank_ + a];
          ok = pos >= 0 && pos < in_[a];
        }
        f(y0 + k, ok ? base + inner_offset[k] + tap_offset[t] : Off(-1));
      }
    }, [] {});
  }

  // ix[y] = 1 + the offset in X of tap taps[y] for every output y: MATLAB's linear indices from the forward's own
  // taps (each names a cell of X). Threads split the outputs.
  template <class Tap>
  void linear(const Tap* taps, double* ix) const;

  // dst[y] = src[x] for every output y, x the offset in X of tap taps[y] (maxunpool_backward's dZ(indx)). Threads
  // split the outputs. False where a tap names no cell of X (dst then partly written). Windows of pairs of cells
  // along X's first dimension go by whole vectors (pair_row_avx2), counted by pair_gathers().
  template <class Tap, class T>
  bool gather(const Tap* taps, const T* src, T* dst) const;

 private:
  // row(y0, inner, base, inner_offset, origin) for each row of outputs [y0, y0 + inner): output y0 + k lies at
  // offset base + inner_offset[k] of X; origin holds the window origin of the row's pooled dimensions but the
  // first. Threads (when `parallel`) take rows in order, and each calls done() after its last.
  template <class Off, class Row, class Done>
  void walk_rows(bool parallel, Row&& row, Done&& done) const {
    const Tables<Off>& tab = tables<Off>();
    // a row: the leading dimensions merged (lead_ of them) where taps need no check, else dimension 0 alone
    const size_t first = check_ ? 1 : lead_, nd = ydims_.size();
    const int64_t inner = check_ ? ydims_[0] : int64_t(tab.lead.size()), outer = total_ / inner;
    const Off* inner_offset = check_ ? tab.coord[0].data() : tab.lead.data();
    const int threads = poolkit::num_threads();  // poolkit's thread count, as the other MEX loops
    std::vector<int64_t> coords(size_t(threads) * nd);  // allocated here: nothing throws below
#pragma omp parallel num_threads(threads) if (parallel && outer > 1)
    {
      // this thread's rows [q0, q1) of outputs; the coordinates of the first found by division, then counted on
      const int64_t threads = omp_get_num_threads(), me = omp_get_thread_num();
      const int64_t q0 = outer * me / threads, q1 = outer * (me + 1) / threads;
      int64_t* coord = coords.data() + size_t(me) * nd;
      Off base = 0;
      int64_t origin[3] = {0, 0, 0};
      for (size_t i = first, rest = size_t(q0); i < nd; ++i) {
        coord[i] = int64_t(rest % size_t(ydims_[i]));
        rest /= size_t(ydims_[i]);
        base += tab.coord[i][coord[i]];
        if (axis_of_[i] >= 0) origin[axis_of_[i]] = coord_origin_[i][coord[i]];
      }
      for (int64_t q = q0; q < q1; ++q) {
        row(q * inner, inner, base, inner_offset, origin);
        for (size_t i = first; i < nd; ++i) {  // the next row: dimension i counts on, carrying into i + 1
          base -= tab.coord[i][coord[i]];
          coord[i] = coord[i] + 1 == ydims_[i] ? 0 : coord[i] + 1;
          base += tab.coord[i][coord[i]];
          if (axis_of_[i] >= 0) origin[axis_of_[i]] = coord_origin_[i][coord[i]];
          if (coord[i]) break;
        }
      }
      done();
    }
  }

  int rank_;
  bool check_;                                     // windows reach into the padding: check each tap
  int64_t total_;
  int64_t in_[3];
  std::vector<int64_t> ydims_;
  std::vector<int> axis_of_;                       // MATLAB dimension -> core axis, or -1
  std::vector<std::vector<int64_t>> coord_origin_;  // [dim][coord]: window origin (pooled dims)
  std::vector<int64_t> tap_pos_;                    // [tap * rank + axis]
  // Offsets in X, in the type for_each sums them in.
  template <class Off>
  struct Tables {
    std::vector<std::vector<Off>> coord;  // [dim][coord]: of that output coordinate
    std::vector<Off> tap;                 // [tap]: of that window cell from the window's origin
    // Unchecked walks take rows of the first lead_ dimensions together (up to kLeadCells outputs; seed 000's
    // 16x16 planes are rows of 256 rather than 16): lead[k] is the offset of row cell k.
    std::vector<Off> lead;
  };
  static constexpr int64_t kLeadCells = 4096;
  size_t lead_ = 1;
  // linear()'s AVX2 rows (linear_rows.hpp): unchecked walks over windows of at most 8 cells whose offsets in a
  // row fit int32, here in int32.
  bool vector_rows_ = false;
  std::vector<int32_t> lead32_;
  int32_t tap8_[8] = {};
  // gather()'s AVX2 rows (pair_row_avx2): vector rows whose windows are pairs of cells along X's first dimension
  // (taps 2r and 2r + 1 one cell apart), one window every two cells: runs of pair_run_ outputs (Y's first
  // dimension, a multiple of 8) whose windows start two cells apart.
  bool pair_rows_ = false;
  int64_t pair_run_ = 0;
  Tables<int64_t> int_tables_;
  Tables<double> double_tables_;
  template <class Off>
  const Tables<Off>& tables() const {
    if constexpr (std::is_same_v<Off, double>) return double_tables_;
    else return int_tables_;
  }
};

}  // namespace pkmex
