// The channels-first row backward: each dx row summed from the dy rows of the windows that cover it, by phase
// of the stride, in registers (see RowJob in kernels.hpp); and the same sums of stride-1 rows for the average
// forward (aligned_rows).
#include "kernels.hpp"
#include "prefetch.hpp"

#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/cpu/kernels_rows.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/aligned_allocator.h>
#include <hwy/cache_control.h>
#include <hwy/highway.h>

#include "src/cpu/kernels-inl.h"

HWY_BEFORE_NAMESPACE();
namespace poolkit::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// A vector of term codes from p: the saved argmax's own narrow form widened, or copies of the lanes' width.
template <class DI, class C>
HWY_INLINE hn::Vec<DI> load_codes(DI di, const C* p) {
  if constexpr (sizeof(C) == sizeof(hn::TFromD<DI>)) return hn::LoadU(di, reinterpret_cast<const hn::TFromD<DI>*>(p));
  else return hn::PromoteTo(di, hn::LoadU(hn::Rebind<C, DI>(), p));
}

// The sums of one phase row of accumulate_row, from its taps [t0, t1) (all of that phase). Cells [v0, v1),
// which every tap reaches, go by vectors, all terms and taps summed in registers; the few at the ends one at a
// time (every cell by vectors when the rows are padded). Vectors go U at a time, their sums interleaved (each is
// a chain of dependent additions). Codes are C (void: average, none).
template <class T, class C>
struct PhaseSums {
  using TI = hwy::MakeSigned<T>;
  using D = hn::ScalableTag<T>;
  static constexpr bool kCode = !std::is_void_v<C>;
  static constexpr int U = 4;
  const RowTerm* terms = nullptr;  // the row's
  int nterms = 0;
  const RowTap *t0 = nullptr, *t1 = nullptr;
  int64_t v0 = 0, v1 = 0;

  PhaseSums() = default;
  PhaseSums(const RowTap* first, const RowTap* end, int64_t len, bool padded) : t0(first), t1(end), v1(len) {
    if (!padded)
      for (const RowTap* k = t0; k < t1; ++k) v0 = std::max(v0, k->lo + k->shift), v1 = std::min(v1, k->hi + k->shift);
    if (t0 == t1 || v1 - v0 < int64_t(hn::Lanes(D()))) v0 = v1 = len;
  }
  T cell(int64_t a) const {
    T v = 0;
    for (int t = 0; t < nterms; ++t) {
      const T* q = static_cast<const T*>(terms[t].q);
      for (const RowTap* k = t0; k < t1; ++k) {
        const int64_t i = a - k->shift;
        if (i < k->lo || i >= k->hi) continue;
        if constexpr (kCode)
          if (int64_t(static_cast<const C*>(terms[t].code)[i]) != terms[t].want_base + k->jw) continue;
        v += q[i];
      }
    }
    return v;
  }
  // sum[v]: cells a + at[v] on
  void vectors(int64_t a, const int64_t* at, hn::Vec<D>* sum) const {
    const D d;
    const hn::RebindToSigned<D> di;
    for (int v = 0; v < U; ++v) sum[v] = hn::Zero(d);
    for (int t = 0; t < nterms; ++t) {
      const T* q = static_cast<const T*>(terms[t].q) + a;
      [[maybe_unused]] const C* code = nullptr;  // (average: none)
      if constexpr (kCode) code = static_cast<const C*>(terms[t].code) + a;
      for (const RowTap* k = t0; k < t1; ++k) {
        [[maybe_unused]] const auto want = hn::Set(di, TI(terms[t].want_base + k->jw));
        for (int v = 0; v < U; ++v) {
          auto g = hn::LoadU(d, q - k->shift + at[v]);
          if constexpr (kCode) g = hn::IfThenElseZero(hn::RebindMask(d, load_codes(di, code - k->shift + at[v]) == want), g);
          sum[v] = hn::Add(sum[v], g);
        }
      }
    }
  }
};


// The bytes of the job's `ahead` asked for with each row (whole lines; the last rows may ask for none).
HWY_INLINE int64_t ahead_share(const RowJob& j) {
  return j.ahead && j.rows > 0 ? (j.ahead_bytes + 64 * j.rows - 1) / (64 * j.rows) * 64 : 0;
}

// Row r's share of the job's `ahead` bytes asked for.
HWY_INLINE void ask_ahead(const RowJob& j, int r, int64_t share) {
  for (int64_t b = r * share; b < std::min((r + 1) * share, j.ahead_bytes); b += 64) prefetch(j.ahead + b);
}

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
// The rows of an `aligned` job (RowJob) straight into dx, float sums, for taps whose cells a + s (s: the Ss,
// in the taps' order) are known at compile time: each term's row is loaded once per 16 cells by aligned loads
// and each tap's shifted copy taken from two of them by one lane shift. Unaligned loads, one per tap and vector,
// two in three across a cache line for 3-tap windows, took twice the time in the cache. Nothing may go through
// the stack in the loop: when dx comes from memory its stores fill the store queue, and a spill waits behind
// them (a version with the shifts read at run time spilled its sums and lost to the unaligned loads). Same
// terms, same order as PhaseSums::vectors; cells four vectors at a time, A[i] holding cells c0 - 16 + 16 i of
// a term's row.
template <int S>
HWY_INLINE __m512 tap_cells(const __m512* A, int v) {
  static_assert(S > -16 && S < 16, "a tap within one vector of its cell");
  if constexpr (S < 0)
    return _mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_castps_si512(A[v + 1]), _mm512_castps_si512(A[v]), 16 + S));
  else if constexpr (S > 0)
    return _mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_castps_si512(A[v + 2]), _mm512_castps_si512(A[v + 1]), S));
  else
    return A[v + 1];
}

// The lanes of cells col .. col + 15 inside a row's cells [0, n).
HWY_INLINE __mmask16 row_mask(int64_t col, int64_t n) { return __mmask16(lanes_inside(col, n, 16)); }

template <class O, bool kInPlace, int... Ss>
void aligned_rows(const RowJob& j) {
  constexpr int V = 4;
  const hn::ScalableTag<float> d;
  const int64_t len = j.phase_len, whole = len / 16, tail = len % 16, share = ahead_share(j);
  // (in place) the lanes inside the row of the vectors loaded, vector k (cells 16 (k - 1) on) in mask[k], made
  // once for rows up to kMasked cells
  constexpr int64_t kMasked = 1024;
  __mmask16 mask[kMasked / 16 + V + 2];
  const bool masked_once = len <= kMasked;
  if (kInPlace && masked_once)
    for (int64_t k = 0; k < (len + V * 16 - 1) / (V * 16) * V + 2; ++k) mask[k] = row_mask(16 * (k - 1), j.src_len);
  for (int r = 0; r < j.rows; ++r) {
    const RowTerm* terms = j.terms + (j.row_terms ? j.row_terms[r] : 0);
    const int nterms = j.row_terms ? j.row_terms[r + 1] - j.row_terms[r] : j.nterms;
    O* out = static_cast<O*>(j.dx) + r * j.dx_row_step;
    ask_ahead(j, r, share);
    for (int64_t c0 = 0; c0 < len; c0 += V * 16) {
      __m512 sum[V];
      for (int v = 0; v < V; ++v) sum[v] = _mm512_setzero_ps();
      __mmask16 m_here[V + 2];
      const __mmask16* m = masked_once ? mask + c0 / 16 : m_here;
      if (kInPlace && !masked_once)
        for (int i = 0; i < V + 2; ++i) m_here[i] = row_mask(c0 - 16 + 16 * i, j.src_len);
      for (int t = 0; t < nterms; ++t) {
        const float* q = reinterpret_cast<const float*>(static_cast<const char*>(terms[t].q) + j.src_shift) + c0 - 16;
        __m512 A[V + 2];
        for (int i = 0; i < V + 2; ++i)
          A[i] = kInPlace ? _mm512_maskz_loadu_ps(m[i], q + 16 * i) : _mm512_load_ps(q + 16 * i);
        for (int v = 0; v < V; ++v) ((sum[v] = _mm512_add_ps(sum[v], tap_cells<Ss>(A, v))), ...);
      }
      for (int v = 0; v < V; ++v) {
        const int64_t k = c0 / 16 + v;  // the vector's index in the row
        if (j.divisor && k <= whole) sum[v] = _mm512_div_ps(sum[v], _mm512_loadu_ps(j.divisor + r * len + 16 * k));
        if (k < whole) store_values(d, hn::Vec<decltype(d)>{sum[v]}, out + 16 * k);
        else if (k == whole && tail) store_first(d, hn::Vec<decltype(d)>{sum[v]}, out + 16 * k, tail);
      }
    }
  }
}

// Whether the job's taps are one of the patterns aligned_rows knows (3-tap windows with padding 1 or 0, 2-tap
// windows without padding; the backward meets each window's taps last to first, the forward first to last),
// then done.
template <class O>
bool aligned_job(const RowJob& j) {
  int64_t s[3] = {0, 0, 0};
  for (int k = 0; k < j.ntaps && k < 3; ++k) s[k] = -j.taps[k].shift;
  if (j.src_len) {  // (in place: the forward's patterns, float32 rows)
    if constexpr (!std::is_same_v<O, float>) return false;
    if (j.ntaps == 3 && s[0] == -1 && s[1] == 0 && s[2] == 1) return aligned_rows<O, true, -1, 0, 1>(j), true;
    if (j.ntaps == 3 && s[0] == 0 && s[1] == 1 && s[2] == 2) return aligned_rows<O, true, 0, 1, 2>(j), true;
    if (j.ntaps == 2 && s[0] == 0 && s[1] == 1) return aligned_rows<O, true, 0, 1>(j), true;
    return false;
  }
  if (j.ntaps == 3 && s[0] == -1 && s[1] == 0 && s[2] == 1) return aligned_rows<O, false, -1, 0, 1>(j), true;
  if (j.ntaps == 3 && s[0] == -2 && s[1] == -1 && s[2] == 0) return aligned_rows<O, false, -2, -1, 0>(j), true;
  if (j.ntaps == 2 && s[0] == -1 && s[1] == 0) return aligned_rows<O, false, -1, 0>(j), true;
  return false;
}
#endif

template <class O>
bool aligned_rows_of(const RowJob& j) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  return j.aligned && j.dx && !j.stream && aligned_job<O>(j);
#else
  (void)j;
  return false;
#endif
}

// Phase row into out: the accumulation row (T), or dx itself (O) when there is one phase.
template <class T, class C, class O>
void phase_row(const PhaseSums<T, C>& p, O* out, int64_t len) {
  const hn::ScalableTag<T> d;
  constexpr int U = PhaseSums<T, C>::U;
  int64_t a = 0;
  for (; a < p.v0; ++a) out[a] = O(p.cell(a));
  for (; a < p.v1; a += U * int64_t(hn::Lanes(d))) {
    int64_t at[U];
    hn::Vec<decltype(d)> sum[U];
    vector_starts(d, a, p.v1, at, U);
    p.vectors(a, at, sum);
    for (int v = 0; v < U; ++v) store_values(d, sum[v], out + a + at[v]);
  }
  for (a = p.v1; a < len; ++a) out[a] = O(p.cell(a));
}

// Stride 2 straight into dx: both phase rows' sums at once, interleaved in registers. False when the phases
// share too few cells that go by vectors.
template <class T, class C, class O>
bool two_phases(const PhaseSums<T, C>& p0, const PhaseSums<T, C>& p1, O* dx, int64_t width, int64_t len) {
#if HWY_TARGET != HWY_SCALAR
  const hn::ScalableTag<T> d;
  constexpr int U = PhaseSums<T, C>::U;
  const int64_t N = int64_t(hn::Lanes(d));
  const int64_t lo = std::max(p0.v0, p1.v0), hi = std::min({p0.v1, p1.v1, width / 2});
  if (hi - lo < N) return false;
  auto cells = [&](int64_t a) {
    if (2 * a < width) dx[2 * a] = O(p0.cell(a));
    if (2 * a + 1 < width) dx[2 * a + 1] = O(p1.cell(a));
  };
  int64_t a = 0;
  for (; a < lo; ++a) cells(a);
  for (; a < hi; a += U * N) {
    int64_t at[U];
    hn::Vec<decltype(d)> s0[U], s1[U];
    vector_starts(d, a, hi, at, U);
    p0.vectors(a, at, s0);
    p1.vectors(a, at, s1);
    for (int v = 0; v < U; ++v) store_interleaved(d, s0[v], s1[v], dx + 2 * (a + at[v]));
  }
  for (a = hi; a < len; ++a) cells(a);
  return true;
#else
  (void)p0, (void)p1, (void)dx, (void)width, (void)len;
  return false;
#endif
}

// A contiguous range of memory written through a small cached buffer: whole aligned 64-byte lines go out by
// streaming stores (no read of a line before it is written), the partial lines at the range's ends by ordinary
// stores. Stage bytes with `next`, then `commit` them.
class LineStream {
 public:
  explicit LineStream(void* dst) : dst_(static_cast<uint8_t*>(dst)) {}
  ~LineStream() {
    flush(true);
    if (streamed_) hwy::FlushStream();
  }
  uint8_t* next(int64_t bytes) {
    if (used_ + bytes > kCapacity) flush(false);
    return buffer(used_ + bytes) + used_;
  }
  void commit(int64_t bytes) { used_ += bytes; }

 private:
  static constexpr int64_t kLine = 64, kCapacity = 16 << 10;
  // the thread's staging buffer (one stream at a time per thread), grown keeping its bytes
  static uint8_t* buffer(int64_t bytes) {
    thread_local hwy::AlignedFreeUniquePtr<uint8_t[]> buf;
    thread_local int64_t cap = 0;
    if (bytes > cap) {
      const int64_t grown = std::max(bytes, kCapacity);
      auto bigger = hwy::AllocateAligned<uint8_t>(size_t(grown));
      if (cap) std::memcpy(bigger.get(), buf.get(), size_t(cap));
      buf = std::move(bigger), cap = grown;
    }
    return buf.get();
  }
  void flush(bool last) {
    uint8_t* buf = buffer(used_);
    const hn::ScalableTag<uint8_t> d;
    const int64_t N = int64_t(hn::Lanes(d));
    // ordinary stores up to the first line boundary, whole lines streamed, the rest kept (stored at the end)
    int64_t k = std::min(used_, int64_t((kLine - reinterpret_cast<uintptr_t>(dst_) % kLine) % kLine));
    std::memcpy(dst_, buf, size_t(k));
    const int64_t lines_end = k + (used_ - k) / kLine * kLine;
    if (kLine % N == 0)
      for (; k < lines_end; k += N) hn::Stream(hn::LoadU(d, buf + k), d, dst_ + k), streamed_ = true;
    if (last) std::memcpy(dst_ + k, buf + k, size_t(used_ - k)), k = used_;
    std::memmove(buf, buf + k, size_t(used_ - k));
    dst_ += k, used_ -= k;
  }
  uint8_t* dst_;
  int64_t used_ = 0;
  bool streamed_ = false;
};

template <class T, class C, class O>
void accumulate_row(const RowJob& j) {
  if constexpr (std::is_same_v<T, float> && std::is_void_v<C>)
    if (aligned_rows_of<O>(j)) return;
  T* acc = static_cast<T*>(j.acc);
  const int64_t L = j.phase_len, S = j.phases, share = ahead_share(j);
  // (no thread-local vector: its lookup costs more than a small plane's rows)
  PhaseSums<T, C> few[4];
  std::vector<PhaseSums<T, C>> many(size_t(S > 4 ? S : 0));
  PhaseSums<T, C>* phase = S > 4 ? many.data() : few;
  for (int64_t ph = 0, k = 0; ph < S; ++ph) {
    const int64_t k0 = k;
    while (k < j.ntaps && j.taps[k].phase == ph) ++k;
    phase[ph] = PhaseSums<T, C>(j.taps + k0, j.taps + k, L, j.padded);
  }
  // with `stream`, rows back to back form one range
  std::optional<LineStream> out;
  const bool one_range = j.stream && j.dx && (j.rows == 1 || j.dx_row_step == j.width);
  if (one_range) out.emplace(j.dx);
  const int64_t row_bytes = j.width * int64_t(sizeof(O));
  for (int r = 0; r < j.rows; ++r) {
    const int first = j.row_terms ? j.row_terms[r] : 0;
    for (int64_t ph = 0; ph < S; ++ph)
      phase[ph].terms = j.terms + first, phase[ph].nterms = j.row_terms ? j.row_terms[r + 1] - first : j.nterms;
    O* dx = j.dx ? static_cast<O*>(j.dx) + r * j.dx_row_step : nullptr;
    ask_ahead(j, r, share);
    if (dx && j.stream && !one_range) out.emplace(dx);
    if (out) dx = reinterpret_cast<O*>(out->next(row_bytes));
    const bool direct = dx && (S == 1 || (S == 2 && two_phases(phase[0], phase[1], dx, j.width, L)));
    if (direct && S == 1) phase_row(phase[0], dx, L);
    if (!direct) {
      for (int64_t ph = 0; ph < S; ++ph) phase_row(phase[ph], acc + ph * L, L);
      if (dx)
        for (int64_t ph = 0; ph < S; ++ph)
          for (int64_t i = 0, x = ph; x < j.width; ++i, x += S) dx[x] = O(acc[ph * L + i]);
    }
    if (out) out->commit(row_bytes);
    if (out && !one_range) out.reset();
  }
}

// Codes: none (average), the saved argmax's rows (U8, I16, I32) or copies of the lanes' width.
template <class T, class O>
void accumulate_row_by_code(const RowJob& j) {
  const int nterms = j.row_terms ? j.row_terms[j.rows] : j.nterms;
  if (nterms == 0 || !j.terms[0].code) return accumulate_row<T, void, O>(j);
  if constexpr (sizeof(T) == 8) {
    accumulate_row<T, int64_t, O>(j);
  } else {
    switch (j.code_form) {
      case IndexForm::U8: return accumulate_row<T, uint8_t, O>(j);
      case IndexForm::I16: return accumulate_row<T, int16_t, O>(j);
      default: return accumulate_row<T, int32_t, O>(j);
    }
  }
}
void AccumulateRowF32(const RowJob& j) { accumulate_row_by_code<float, float>(j); }
void AccumulateRowF64(const RowJob& j) { accumulate_row_by_code<double, double>(j); }
void AccumulateRowBF16(const RowJob& j) { accumulate_row_by_code<float, bfloat16>(j); }
void AccumulateRowF16(const RowJob& j) { accumulate_row_by_code<float, float16>(j); }
bool AlignedRowsF32(const RowJob& j) { return aligned_rows_of<float>(j); }

}  // namespace poolkit::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace poolkit::cpu {
POOLKIT_KERNEL_DISPATCH(AccumulateRowF32, accumulate_row_f32, RowJob)
POOLKIT_KERNEL_DISPATCH(AccumulateRowF64, accumulate_row_f64, RowJob)
POOLKIT_KERNEL_DISPATCH(AccumulateRowBF16, accumulate_row_bf16, RowJob)
POOLKIT_KERNEL_DISPATCH(AccumulateRowF16, accumulate_row_f16, RowJob)
HWY_EXPORT(AlignedRowsF32);
bool aligned_rows_f32(const RowJob& j) { return HWY_DYNAMIC_DISPATCH(AlignedRowsF32)(j); }
}  // namespace poolkit::cpu
#endif
