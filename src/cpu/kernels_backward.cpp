// The backward kernels but the channels-first rows: the tiled backward (kernel = stride), the gather of dx from
// the dy of the windows that cover it (channels-last), and their helpers (argmax codes, divides, plane fills).
#include "kernels.hpp"

#include <algorithm>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "src/cpu/kernels_backward.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/cache_control.h>
#include <hwy/highway.h>

#include "src/cpu/kernels-inl.h"
#include "src/cpu/prefetch.hpp"

HWY_BEFORE_NAMESPACE();
namespace poolkit::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <class D, class V>
HWY_INLINE void store_taps(D d, int64_t s, int64_t group, const V* t, hn::TFromD<D>* out) {
  (void)group;
#if HWY_TARGET != HWY_SCALAR
  if constexpr (sizeof(hn::TFromD<D>) == 4) {
    if (group == 2) {  // pairs of 4-byte channels move as one 8-byte element
      const hn::Repartition<uint64_t, D> d64;
      uint64_t* o = reinterpret_cast<uint64_t*>(out);
      auto w = [&](int i) { return hn::BitCast(d64, t[i]); };
      if (s == 1) hn::StoreU(w(0), d64, o);
      else if (s == 2) hn::StoreInterleaved2(w(0), w(1), d64, o);
      else if (s == 3) hn::StoreInterleaved3(w(0), w(1), w(2), d64, o);
      else hn::StoreInterleaved4(w(0), w(1), w(2), w(3), d64, o);
      return;
    }
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
    if (s == 2 && (group == 4 || group == 8) && group < int64_t(hn::MaxLanes(d))) {
      // blocks of 4 or 8 channels of the two taps alternating (tiled_blocks)
      const auto a = hn::BitCast(hn::RebindToFloat<D>(), t[0]).raw, b = hn::BitCast(hn::RebindToFloat<D>(), t[1]).raw;
      float* o = reinterpret_cast<float*>(out);
#if HWY_TARGET <= HWY_AVX3
      const __m512i ai = _mm512_castps_si512(a), bi = _mm512_castps_si512(b);
      const bool four = group == 4;
      const __m512i lo = four ? _mm512_set_epi64(11, 10, 3, 2, 9, 8, 1, 0)  // (64-bit lanes, high to low)
                              : _mm512_set_epi64(11, 10, 9, 8, 3, 2, 1, 0);
      const __m512i hi = four ? _mm512_set_epi64(15, 14, 7, 6, 13, 12, 5, 4)
                              : _mm512_set_epi64(15, 14, 13, 12, 7, 6, 5, 4);
      _mm512_storeu_ps(o, _mm512_castsi512_ps(_mm512_permutex2var_epi64(ai, lo, bi)));
      _mm512_storeu_ps(o + 16, _mm512_castsi512_ps(_mm512_permutex2var_epi64(ai, hi, bi)));
#else
      _mm256_storeu_ps(o, _mm256_permute2f128_ps(a, b, 0x20));  // (group 4: 8 is a whole vector here)
      _mm256_storeu_ps(o + 8, _mm256_permute2f128_ps(a, b, 0x31));
#endif
      return;
    }
#endif
  }
#endif
  if (s == 1) hn::StoreU(t[0], d, out);
  else if (s == 2) hn::StoreInterleaved2(t[0], t[1], d, out);
  else if (s == 3) hn::StoreInterleaved3(t[0], t[1], t[2], d, out);
  else hn::StoreInterleaved4(t[0], t[1], t[2], t[3], d, out);
}

// store_taps past the cache, for one or two taps of 4-byte lanes in groups of 1 or 2: out aligned to 64 bytes
// (each vector of taps fills whole lines), or through `lines` where `realign`. False where this target cannot
// (the caller then stores normally).
template <class D, class V>
HWY_INLINE bool stream_taps(D d, int64_t s, int64_t group, const V* t, hn::TFromD<D>* out, LineStreamer& lines,
                            bool realign) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  if constexpr (sizeof(hn::TFromD<D>) == 4 && hn::MaxLanes(D()) == 16) {
    auto put = [&](void* at, __m512i v) {
      if (realign) lines.put(at, v);
      else _mm512_stream_si512(static_cast<__m512i*>(at), v);
    };
    const __m512i a = _mm512_castps_si512(hn::BitCast(hn::RebindToFloat<D>(), t[0]).raw);
    if (s == 1) return put(out, a), true;
    if (s != 2 || group > 2) return false;
    const __m512i b = _mm512_castps_si512(hn::BitCast(hn::RebindToFloat<D>(), t[1]).raw);
    __m512i lo, hi;  // a's and b's lanes (or pairs of lanes) alternating
    if (group == 1) {
      lo = _mm512_permutex2var_epi32(a, _mm512_set_epi32(23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0), b);
      hi = _mm512_permutex2var_epi32(a, _mm512_set_epi32(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8), b);
    } else {
      lo = _mm512_permutex2var_epi64(a, _mm512_set_epi64(11, 3, 10, 2, 9, 1, 8, 0), b);
      hi = _mm512_permutex2var_epi64(a, _mm512_set_epi64(15, 7, 14, 6, 13, 5, 12, 4), b);
    }
    put(out, lo);
    put(out + 16, hi);
    return true;
  }
#endif
  (void)d, (void)s, (void)group, (void)t, (void)out, (void)lines, (void)realign;
  return false;
}

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
// The 16-bit max backward of windows of stride 2 that do not overlap, from the one-byte argmax, without widening:
// a dx cell is +0 or its window's dy as the float sum 0 + dy rounds it (tiled_backward below): dy's own bits, but
// -0 comes out +0 and a NaN quiet. Channels-first jobs (lanes along W) and channels-last ones of 2 channels (lanes
// over (W, C)) as one sequence of (row, tap row, lane), 16 lanes a half vector, each half's 32 dx cells stored
// together: a half within one tap row (rows of a multiple of 16 lanes: seed, pool3d), or across two where the tap
// rows' dx follow one another (vgg's rows of 56), the job's last half by masked loads and stores; channels-last
// groups of a multiple of 32 channels. Streaming stores where the job streams and a store fills one aligned line.
// False for any other job, nothing written. Against widening to float32 (bench/half_pace.cpp's cases in one
// process, Zen 4, 2 threads): seed's backward 1.54-1.67x faster channels-first, 1.33-1.49x channels-last; vgg's
// 1.15-1.33x and 1.08-1.11x; pool3d's 1.47-1.56x and 1.02-1.06x.
template <class S>
HWY_INLINE bool half_tiled_max(const TiledBackwardJob& j, int64_t s, int64_t G) {
  if (s != 2 || j.form != IndexForm::U8 || j.rel != nullptr || j.argmax == nullptr) return false;
  const bool wide = G % 32 == 0;
  auto tap_row = [&](int64_t tr) { return j.tap_row_offset ? j.tap_row_offset[tr] : 0; };
  bool contiguous = j.rows == 1 || j.dx_row_step == j.tap_rows * 2 * j.count;
  for (int tr = 0; tr < j.tap_rows; ++tr) contiguous &= tap_row(tr) == tr * 2 * j.count;
  if (!wide && ((G != 1 && G != 2) || j.count < 16 || (j.count % 16 != 0 && !contiguous))) return false;
  const __m512i quiet = _mm512_set1_epi16(kBF16<S> ? 0x0040 : 0x0200), inf = _mm512_set1_epi16(short(kHalfInf<S>));
  const __m512i magnitude = _mm512_set1_epi16(0x7FFF), negative_zero = _mm512_set1_epi16(short(0x8000));
  const uint16_t* g0 = static_cast<const uint16_t*>(j.g);
  const uint8_t* am0 = static_cast<const uint8_t*>(j.argmax);
  uint16_t* dx0 = static_cast<uint16_t*>(j.dx);
  bool streamed = false;
  auto put = [&](uint16_t* at, __m512i v, __mmask32 cells) {
    if (cells == ~__mmask32(0) && j.stream && (reinterpret_cast<uintptr_t>(at) & 63) == 0) {
      _mm512_stream_si512(reinterpret_cast<__m512i*>(at), v);
      streamed = true;
    } else {
      _mm512_mask_storeu_epi16(at, cells, v);
    }
  };
  // dy's bits as dx holds them, and the taps: dy where the code is code0 (t0), code0 + 1 (t1), else +0
  auto taps = [&](__m512i v, __m256i codes, __m256i code0, __m512i& t0, __m512i& t1) {
    v = _mm512_mask_mov_epi16(v, _mm512_cmpgt_epu16_mask(_mm512_and_si512(v, magnitude), inf),
                              _mm512_or_si512(v, quiet));
    const __mmask32 keep = _mm512_cmpneq_epi16_mask(v, negative_zero);
    t0 = _mm512_maskz_mov_epi16(keep & _mm256_cmpeq_epi8_mask(codes, code0), v);
    t1 = _mm512_maskz_mov_epi16(keep & _mm256_cmpeq_epi8_mask(codes, _mm256_add_epi8(code0, _mm256_set1_epi8(1))), v);
  };
  if (wide) {
    for (int64_t row = 0; row < j.rows; ++row)
      for (int tr = 0; tr < j.tap_rows; ++tr) {
        const uint16_t* g = g0 + row * j.g_row_step;
        const uint8_t* am = am0 + row * j.g_row_step;
        uint16_t* dx = dx0 + row * j.dx_row_step + tap_row(tr);
        const __m256i code0 = _mm256_set1_epi8(char(j.code_base + tr * s));
        for (int64_t k = 0; k < j.count; k += 32) {
          __m512i t0, t1;
          taps(_mm512_loadu_si512(g + k), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(am + k)), code0, t0, t1);
          uint16_t* out = dx + (s * (k / G)) * G + k % G;
          put(out, t0, ~__mmask32(0)), put(out + G, t1, ~__mmask32(0));
        }
      }
    if (streamed) hwy::FlushStream();
    return true;
  }
  // the next n <= 16 lanes of the sequence (from tap row tr of row `row`, output o; none of them past the
  // job): dy, codes and code0 a lane; returns where their dx cells start
  int64_t row = 0, tr = 0, o = 0;
  const uint16_t* g = g0;
  const uint8_t* am = am0;
  auto half = [&](int64_t n, __m256i& dy, __m128i& codes, __m128i& code0) {
    uint16_t* at = dx0 + row * j.dx_row_step + tap_row(tr) + 2 * o;
    const int64_t m = std::min(n, j.count - o);  // lanes in this tap row
    const __mmask16 first = __mmask16((1u << m) - 1);
    dy = _mm256_maskz_loadu_epi16(first, g + o);
    codes = _mm_maskz_loadu_epi8(first, am + o);
    code0 = _mm_maskz_set1_epi8(first, char(j.code_base + tr * s));
    if ((o += n) >= j.count) {  // on to the next tap row (and row)
      o -= j.count;
      if (++tr == j.tap_rows) tr = 0, ++row, g += j.g_row_step, am += j.g_row_step;
      if (m < n) {  // its first outputs in lanes m on
        const __mmask16 rest = __mmask16(((1u << n) - 1) & ~((1u << m) - 1));
        dy = _mm256_mask_loadu_epi16(dy, rest, g - m);
        codes = _mm_mask_loadu_epi8(codes, rest, am - m);
        code0 = _mm_mask_set1_epi8(code0, rest, char(j.code_base + tr * s));
      }
    }
    return at;
  };
  // dx cells of lanes 0-15 and of 16-31: taps 0 and 1 alternating, by cells (G = 1) or pairs of cells (G = 2)
  const __m512i low = G == 1 ? _mm512_set_epi16(47, 15, 46, 14, 45, 13, 44, 12, 43, 11, 42, 10, 41, 9, 40, 8, 39, 7,
                                                38, 6, 37, 5, 36, 4, 35, 3, 34, 2, 33, 1, 32, 0)
                             : _mm512_set_epi16(47, 46, 15, 14, 45, 44, 13, 12, 43, 42, 11, 10, 41, 40, 9, 8, 39, 38,
                                                7, 6, 37, 36, 5, 4, 35, 34, 3, 2, 33, 32, 1, 0);
  const __m512i high = _mm512_add_epi16(low, _mm512_set1_epi16(16));
  auto cells = [](int64_t n) { return n >= 16 ? ~__mmask32(0) : __mmask32((1u << (2 * n)) - 1); };
  const int64_t total = j.rows * j.tap_rows * j.count;
  for (int64_t L = 0; L < total; L += 32) {
    const int64_t n0 = std::min<int64_t>(16, total - L), n1 = std::clamp<int64_t>(total - L - 16, 0, 16);
    __m256i dy0, dy1 = _mm256_setzero_si256();
    __m128i c0, c1 = _mm_setzero_si128(), k0, k1 = _mm_setzero_si128();
    uint16_t* at0 = half(n0, dy0, c0, k0);
    uint16_t* at1 = n1 > 0 ? half(n1, dy1, c1, k1) : nullptr;
    __m512i t0, t1;
    taps(_mm512_inserti64x4(_mm512_castsi256_si512(dy0), dy1, 1), _mm256_set_m128i(c1, c0), _mm256_set_m128i(k1, k0),
         t0, t1);
    put(at0, _mm512_permutex2var_epi16(t0, low, t1), cells(n0));
    if (at1) put(at1, _mm512_permutex2var_epi16(t0, high, t1), cells(n1));
  }
  if (streamed) hwy::FlushStream();
  return true;
}
#endif

// kS > 0: the stride known at compile time (the taps of a vector then stay in registers). dy and dx in S,
// computed in float for 16-bit S (as the float32 backward computes it, rounded once).
template <class S, bool kMax, int kS>
void tiled_backward(const TiledBackwardJob& j) {
  using T = compute_t<S>;
  const hn::ScalableTag<T> d;
  using TI = hwy::MakeSigned<T>;
  const hn::RebindToSigned<decltype(d)> di;
  const int64_t N = int64_t(hn::Lanes(d));
  const int64_t s = kS > 0 ? kS : j.stride, G = j.group;
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  if constexpr (kMax && kHalf<S>)
    if (half_tiled_max<S>(j, s, G)) return;
#endif
  const T div = T(j.divisor);
  const bool direct = j.rel == nullptr;
  const int64_t asize = kMax && direct ? form_bytes(j.form) : 0;
  // wide: channels-last groups of whole vectors (G a multiple of N), each tap's vector stored as it is
  const bool wide = G % N == 0 && G > 2;
  const bool blocks = tiled_blocks(G, s, int64_t(sizeof(T))) && !wide && HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2;
  const bool vector = s >= 1 && s <= 4 &&
                      (G == 1 || (G == 2 && sizeof(T) == 4 && HWY_TARGET != HWY_SCALAR) || wide || blocks) &&
                      (!kMax || !direct || (sizeof(T) == 4 && j.form != IndexForm::I64));
  bool streamed = false;
  // rows that start inside a line stream through `lines` where whole vectors cover them (count a multiple of N:
  // no overlapping last vector), each vector of taps is stored by stream_taps, and each dx row starts where the
  // one stored before it ends: a run that breaks leaves lines written partly by streaming stores and partly by
  // ordinary ones (pool3d's tap rows, a depth apart: its NCHW max backward into a dx 16 bytes past a line 21x
  // slower than into an aligned one; now 1.0-1.4x, by ordinary stores)
  LineStreamer lines;
  bool runs_on = j.rows == 1 || j.dx_row_step == j.tap_rows * s * j.count;
  for (int tr = 0; tr < j.tap_rows; ++tr) runs_on &= (j.tap_row_offset ? j.tap_row_offset[tr] : 0) == tr * s * j.count;
  const bool realign_rows =
      LineStreamer::kOn && sizeof(S) == 4 && !wide && s <= 2 && G <= 2 && j.count % N == 0 && runs_on;
  for (int64_t row = 0; row < j.rows; ++row) {
    const S* g = static_cast<const S*>(j.g) + row * j.g_row_step;
    const void* am = kMax && direct ? static_cast<const char*>(j.argmax) + row * j.g_row_step * asize : nullptr;
    for (int tr = 0; tr < j.tap_rows; ++tr) {
      S* dx = static_cast<S*>(j.dx) + row * j.dx_row_step + (j.tap_row_offset ? j.tap_row_offset[tr] : 0);
      const int64_t code_base = j.code_base + tr * s;
      // past the cache where the row is whole aligned lines (a line written partly by streaming stores and
      // partly by ordinary ones would be read back from memory); an overlapping last vector then starts on a
      // line too, and writes its lines again whole
      const bool aligned = s * j.count * int64_t(sizeof(S)) % 64 == 0 && reinterpret_cast<uintptr_t>(dx) % 64 == 0;
      const bool realign = !aligned && realign_rows;
      const bool stream = vector && j.stream && j.count >= N && (aligned || realign);
      streamed |= stream;
      int64_t k = 0;
      if (vector && j.count >= N) {
        // the last vector may overlap the one before: its lanes write the same values again
        for (int64_t next = 0;; next += N) {
          k = std::min(next, j.count - N);
          auto gv = load_lanes<kUnit>(d, g, k);
          if constexpr (!kMax) gv = hn::Div(gv, hn::Set(d, div));
          gv = hn::Add(hn::Zero(d), gv);
          hn::Vec<decltype(d)> t[4];
          if constexpr (kMax) {
            auto rel = direct ? hn::Sub(load_argmax(di, j.form, am, k), hn::Set(di, TI(code_base)))
                              : load_argmax(di, IndexForm::I32, j.rel, k);
            for (int64_t jj = 0; jj < s; ++jj)
              t[jj] = hn::IfThenElseZero(hn::RebindMask(d, rel == hn::Set(di, TI(jj))), gv);
          } else {
            for (int64_t jj = 0; jj < s; ++jj) t[jj] = gv;
          }
          if (wide) {
            S* out = dx + (s * (k / G)) * G + k % G;
            for (int64_t jj = 0; jj < s; ++jj) put_values(d, t[jj], out + jj * G, stream);
          } else if constexpr (kHalf<S>) {  // interleaved in float, then narrowed
            HWY_ALIGN T taps[4 * hn::MaxLanes(d)];
            store_taps(d, s, G, t, taps);
            for (int64_t q = 0; q < s; ++q) put_values(d, hn::Load(d, taps + q * N), dx + s * k + q * N, stream);
          } else if (!stream || !stream_taps(d, s, G, t, dx + s * k, lines, realign)) {
            store_taps(d, s, G, t, dx + s * k);
          }
          if (k + N == j.count) break;
        }
        k = j.count;
      }
      for (; k < j.count; ++k) {  // (rows of fewer than N: no stream, nothing in `lines` overlaps them)
        T gv = kMax ? T(g[k]) : T(T(g[k]) / div);
        int64_t rel = !kMax ? 0 : direct ? load_index(j.form, am, k) - code_base : j.rel[k];
        int64_t o = k / G, c = k % G;
        for (int64_t jj = 0; jj < s; ++jj) {
          bool match = !kMax || rel == jj;
          dx[(s * o + jj) * G + c] = S(match ? T(T(0) + gv) : T(0));
        }
      }
    }
  }
  lines.flush();
  if (streamed) hwy::FlushStream();
}

// Average over windows of K outputs at stride 1 along W: the pixels [p0, p1) whose terms in each of the R rows are
// K outputs, from the first pixel's one step further per pixel. A pixel loads each row's newest term and keeps the
// other K - 1 in registers from the pixel before (loading every term, the gather had been bound by the cache's
// bandwidth: 9 loads a vector for 3x3 windows), and sums them in the gather's order (rows in turn, outputs in
// increasing order), vector by vector of channels (channels a multiple of the vector).
template <int K, int R, class SIn, class SOut, class D>
HWY_INLINE void slide_run(D d, const GatherJob& j, int64_t p0, int64_t p1, bool stream) {
  const int64_t N = int64_t(hn::Lanes(d)), o0 = j.cover_o[j.cover_begin[p0]];
  // A pass of one vector of channels over pixels of more channels than that leaves lines of dx partly written
  // where the vector is less than a line; streamed, each part went to memory on its own (AVX2, Zen 3, 3x3 stride 1
  // channels-last, 64 and 96 float32 channels: 1.8x faster through the cache)
  stream = stream && (N * int64_t(sizeof(SOut)) >= 64 || j.channels == N);
  for (int64_t c = 0; c < j.channels; c += N) {
    hn::Vec<D> t[R][K];
    const SIn* g[R];
    for (int r = 0; r < R; ++r) {
      g[r] = static_cast<const SIn*>(j.row_dy[r]) + o0 * j.out_step + c;
      for (int k = 0; k + 1 < K; ++k) t[r][k + 1] = load_lanes<kUnit>(d, g[r], k * j.out_step);
    }
    SOut* dx = static_cast<SOut*>(j.dx) + p0 * j.dx_step + c;
    for (int64_t at = (K - 1) * j.out_step, p = p0; p < p1; ++p, at += j.out_step, dx += j.dx_step) {
      auto sum = hn::Zero(d);
      for (int r = 0; r < R; ++r) {
        for (int k = 0; k + 1 < K; ++k) t[r][k] = t[r][k + 1];
        t[r][K - 1] = load_lanes<kUnit>(d, g[r], at);
        for (int k = 0; k < K; ++k) sum = hn::Add(sum, t[r][k]);
      }
      put_values(d, sum, dx, stream);
    }
  }
}

// The end of the run of pixels from p that slide_run<K> takes (p itself when it has not K terms).
inline int64_t slide_end(const GatherJob& j, int64_t p, int64_t K) {
  if (j.cover_begin[p + 1] - j.cover_begin[p] != K) return p;  // (a pixel without terms: its begin is past the table)
  const int64_t o = j.cover_o[j.cover_begin[p]];
  int64_t e = p;
  while (e < j.pixels && j.cover_begin[e + 1] - j.cover_begin[e] == K && j.cover_o[j.cover_begin[e]] == o + (e - p)) ++e;
  return e;
}

#if HWY_TARGET <= HWY_AVX2
// Max over 3-wide windows at stride 2 along W, one-byte codes, four float vectors of channels at a time: the
// pixels [p0, p1) come in pairs, the first read by one output (its tap 1), the second by that output (tap 2) and
// the next (tap 0), the next pair's first by that next output (tap 1) again. Each output's codes and dy are
// loaded, compared and widened once for the three pixels that read them (the general gather did it per term),
// and the terms are summed in the gather's order: rows in turn, outputs in increasing order. AVX3: a tap's
// lanes as the bits of one byte compare of the 4N codes; AVX2: as a vector mask a float vector, from the codes
// widened to int32 (the channels-last resnet-stem backward 1.2x faster in float32, 1.45x in bfloat16, 1.64x in
// float16: AVX2, Zen 3, 2 threads).
template <int R, class SIn, class SOut, class D>
HWY_INLINE void pair_run(D d, const GatherJob& j, int64_t p0, int64_t p1, bool stream, bool ask) {
  using V = hn::Vec<D>;
  using M = hn::Mask<D>;
#if HWY_TARGET <= HWY_AVX3
  using Taps = uint64_t;
  const hn::ScalableTag<uint8_t> d8;
#else
  struct Taps { M m[4]; };
  const hn::RebindToSigned<D> di;
  const hn::Rebind<uint8_t, D> d8;  // (N codes)
#endif
  const int64_t N = int64_t(hn::Lanes(d)), o0 = j.cover_o[j.cover_begin[p0]];
  const int64_t dy_bytes = 4 * N * int64_t(sizeof(SIn));  // (and 4N bytes of codes: one line)
  for (int64_t c = 0; c < j.channels; c += 4 * N) {
    const SIn* g[R];
    const uint8_t* a[R];
    V left[R][4];  // the output shared by the pixel pair before: its dy, and its masks of taps 1 and 2
    Taps left1[R], left2[R];
    for (int r = 0; r < R; ++r) {
      g[r] = static_cast<const SIn*>(j.row_dy[r]) + o0 * j.out_step + c;
      a[r] = static_cast<const uint8_t*>(j.row_am[r]) + o0 * j.out_step + c;
    }
#if HWY_TARGET <= HWY_AVX3
    hn::Vec<decltype(d8)> tap[R][3];  // the codes of row r's taps 0, 1, 2
    for (int r = 0; r < R; ++r)
      for (int t = 0; t < 3; ++t) tap[r][t] = hn::Set(d8, uint8_t(j.row_code[r] + t));
#else
    hn::Vec<decltype(di)> tap[R][3];
    for (int r = 0; r < R; ++r)
      for (int t = 0; t < 3; ++t) tap[r][t] = hn::Set(di, int32_t(j.row_code[r] + t));
#endif
    // the masks of taps 0, 1, 2 of output o (relative to o0) in row r, and its dy
    auto load = [&](int r, int64_t o, V* v, Taps* m0, Taps* m1, Taps* m2) {
      const uint8_t* at = a[r] + o * j.out_step;
#if HWY_TARGET <= HWY_AVX3
      const auto codes = hn::LoadU(d8, at);
      *m0 = hn::Eq(codes, tap[r][0]).raw, *m1 = hn::Eq(codes, tap[r][1]).raw, *m2 = hn::Eq(codes, tap[r][2]).raw;
#else
      for (int v4 = 0; v4 < 4; ++v4) {
        const auto codes = hn::PromoteTo(di, hn::LoadU(d8, at + v4 * N));
        m0->m[v4] = hn::RebindMask(d, hn::Eq(codes, tap[r][0]));
        m1->m[v4] = hn::RebindMask(d, hn::Eq(codes, tap[r][1]));
        m2->m[v4] = hn::RebindMask(d, hn::Eq(codes, tap[r][2]));
      }
#endif
      for (int v4 = 0; v4 < 4; ++v4) v[v4] = load_lanes<kUnit>(d, g[r] + o * j.out_step, v4 * N);
    };
    auto add = [&](V* sum, const V* v, const Taps& m) {
      for (int v4 = 0; v4 < 4; ++v4) {
#if HWY_TARGET <= HWY_AVX3
        const M k{static_cast<__mmask16>(m >> (16 * v4))};
#else
        const M k = m.m[v4];
#endif
        sum[v4] = hn::IfThenElse(k, hn::Add(sum[v4], v[v4]), sum[v4]);
      }
    };
    Taps unused;
    for (int r = 0; r < R; ++r) load(r, 0, left[r], &unused, &left1[r], &left2[r]);
    SOut* dx = static_cast<SOut*>(j.dx) + p0 * j.dx_step + c;
    for (int64_t p = p0, o = 1; p < p1; p += 2, ++o, dx += 2 * j.dx_step) {
      if (ask && p + 4 < p1)  // the lines of the output two pairs ahead (the run's last pair reads output o)
        for (int r = 0; r < R; ++r) {
          for (int64_t b = 0; b < dy_bytes; b += 64) prefetch(reinterpret_cast<const char*>(g[r] + (o + 2) * j.out_step) + b);
          prefetch(a[r] + (o + 2) * j.out_step);
        }
      V first[4], second[4];
      for (int v4 = 0; v4 < 4; ++v4) first[v4] = second[v4] = hn::Zero(d);
      for (int r = 0; r < R; ++r) {
        V right[4];
        Taps m0, m1, m2;
        load(r, o, right, &m0, &m1, &m2);
        add(first, left[r], left1[r]);
        add(second, left[r], left2[r]);
        add(second, right, m0);
        for (int v4 = 0; v4 < 4; ++v4) left[r][v4] = right[v4];
        left1[r] = m1, left2[r] = m2;
      }
      for (int v4 = 0; v4 < 4; v4 += 2) {
        put_values2(d, first[v4], first[v4 + 1], dx + v4 * N, stream);
        put_values2(d, second[v4], second[v4 + 1], dx + j.dx_step + v4 * N, stream);
      }
    }
  }
}
#endif

// dy in SIn, dx in SOut (the same, or float32 dy already divided for a 16-bit average), summed in SOut's
// compute type
template <class SIn, class SOut, bool kMax, IndexForm kForm>
void gather_backward(const GatherJob& j) {
  using T = compute_t<SOut>;
  const hn::ScalableTag<T> d;
  using TI = hwy::MakeSigned<T>;
  const int64_t N = int64_t(hn::Lanes(d));
  const bool vector = !kMax || (sizeof(T) == 4 ? kForm != IndexForm::I64
                                               : (kForm == IndexForm::I64 || kForm == IndexForm::I32));
  constexpr int64_t ab = form_bytes(kForm);
  auto dy = [&](int r, int64_t x) { return static_cast<const SIn*>(j.row_dy[r]) + j.cover_o[x] * j.out_step; };
  auto am = [&](int r, int64_t x) {
    return static_cast<const char*>(j.row_am[r]) + j.cover_o[x] * j.out_step * ab;
  };
  // the newest term of each row of a pixel a few ahead asked for (its last covering output: the others were
  // read for the pixels before it), its dy and argmax lines, once per output (pixels next to each other share
  // it: asked once, float16 resnet-stem channels-last 1.12-1.14x); not for bfloat16 dx, whose kernel has more
  // work per term (0.93x with the requests)
  constexpr int64_t kAhead = 4;
  const bool ask = j.prefetch && !kBF16<SOut>;
  const int64_t dy_bytes = j.channels * int64_t(sizeof(SIn)), am_bytes = kMax ? j.channels * ab : 0;
  const bool stream = j.stream && vector && whole_aligned_rows(j.dx, j.dx_step, j.channels, N, int64_t(sizeof(SOut)));
  int64_t asked = -1;  // the output whose lines were asked for last (pixels in a row often share it)
  // (average, 3-wide windows at stride 1: runs of pixels slide; rows of 1 to 3 output rows)
  const bool slides = !kMax && j.consecutive && j.channels % N == 0 && j.nrows >= 1 && j.nrows <= 3;
  // (max, one-byte codes, 3-wide windows at stride 2: the run of pixel pairs; rows of 1 or 2 output rows)
  [[maybe_unused]] const bool pairs = j.pairs_end - j.pairs_begin >= 4 && !j.flat_codes &&
                                      j.channels % (4 * N) == 0 && j.nrows >= 1 && j.nrows <= 2;
  for (int64_t p = 0; p < j.pixels; ++p) {
#if HWY_TARGET <= HWY_AVX2
    if constexpr (kMax && kForm == IndexForm::U8 && sizeof(T) == 4) {
      if (pairs && p == j.pairs_begin) {
        if (j.nrows == 1) pair_run<1, SIn, SOut>(d, j, p, j.pairs_end, stream, ask);
        else pair_run<2, SIn, SOut>(d, j, p, j.pairs_end, stream, ask);
        p = j.pairs_end - 1;
        continue;
      }
    }
#endif
    if constexpr (!kMax) {
      if (const int64_t e = slides ? slide_end(j, p, 3) : p; e - p >= 4) {
        if (j.nrows == 1) slide_run<3, 1, SIn, SOut>(d, j, p, e, stream);
        else if (j.nrows == 2) slide_run<3, 2, SIn, SOut>(d, j, p, e, stream);
        else slide_run<3, 3, SIn, SOut>(d, j, p, e, stream);
        p = e - 1;
        continue;
      }
    }
    SOut* dx = static_cast<SOut*>(j.dx) + p * j.dx_step;
    const int64_t x0 = j.cover_begin[p], x1 = j.cover_begin[p + 1];
    if (ask && p + kAhead < j.pixels) {
      const int64_t x = j.cover_begin[p + kAhead + 1] - 1;  // pixel p + kAhead's newest term, if it has terms
      if (x >= j.cover_begin[p + kAhead] && j.cover_o[x] != asked) {
        asked = j.cover_o[x];
        for (int r = 0; r < j.nrows; ++r) {
          for (int64_t b = 0; b < dy_bytes; b += 64) prefetch(reinterpret_cast<const char*>(dy(r, x)) + b);
          for (int64_t b = 0; b < am_bytes; b += 64) prefetch(am(r, x) + b);
        }
      }
    }
    auto code = [&](int r, int64_t x) { return j.flat_codes ? j.row_code[0] + p : j.row_code[r] + j.cover_j[x]; };
    // U vectors of channels from c on, each term's pointers found once for all of them
    // every term of U vectors of dv's lanes from channel c on, added to sum in the gather's order and stored (dv:
    // the kernel's vectors, or the 8- and 4-lane ones that end a pixel's channels past its whole vectors)
    auto terms = [&](auto dv, auto u, int64_t c, auto* sum, bool to_stream) {
      constexpr int U = decltype(u)::value;
      const hn::RebindToSigned<decltype(dv)> dvi;
      const int64_t n = int64_t(hn::Lanes(dv));
      for (int r = 0; r < j.nrows; ++r)
        for (int64_t x = x0; x < x1; ++x) {
          const SIn* g = dy(r, x) + c;
          [[maybe_unused]] const char* a = kMax ? am(r, x) + c * ab : nullptr;
          [[maybe_unused]] const auto want = hn::Set(dvi, TI(kMax ? code(r, x) : 0));
          for (int v = 0; v < U; ++v) {
            auto gv = load_lanes<kUnit>(dv, g, v * n);
            if constexpr (kMax)
              gv = hn::IfThenElseZero(hn::RebindMask(dv, load_argmax(dvi, kForm, a, v * n) == want), gv);
            sum[v] = hn::Add(sum[v], gv);
          }
        }
      for (int v = 0; v < U; ++v) put_values(dv, sum[v], dx + c + v * n, to_stream);
    };
    auto narrow = [&](auto dn, int64_t c) {
      hn::Vec<decltype(dn)> sum[1] = {hn::Zero(dn)};
      terms(dn, std::integral_constant<int, 1>(), c, sum, false);
    };
    auto vectors = [&](auto u, int64_t c) {
      constexpr int U = decltype(u)::value;
      hn::Vec<decltype(d)> sum[U];
      for (int v = 0; v < U; ++v) sum[v] = hn::Zero(d);
#if HWY_TARGET <= HWY_AVX3
      // one-byte codes of four float vectors: one compare of 64 bytes, whose mask bits serve the four in turn
      // (two conditions: the outer one is decided where the kernel is instantiated, the inner one per call)
      if constexpr (kMax && kForm == IndexForm::U8 && sizeof(T) == 4) {
        if constexpr (U == 4) {
          const hn::ScalableTag<uint8_t> d8;
          static_assert(hn::MaxLanes(d8) == 4 * hn::MaxLanes(hn::ScalableTag<T>()));
          for (int r = 0; r < j.nrows; ++r)
            for (int64_t x = x0; x < x1; ++x) {
              const SIn* g = dy(r, x) + c;
              const auto hit = hn::Eq(hn::LoadU(d8, reinterpret_cast<const uint8_t*>(am(r, x)) + c),
                                      hn::Set(d8, uint8_t(code(r, x))));
              for (int v = 0; v < U; ++v) {
                const hn::Mask<hn::ScalableTag<T>> m{static_cast<__mmask16>(hit.raw >> (16 * v))};
                sum[v] = hn::IfThenElse(m, hn::Add(sum[v], load_lanes<kUnit>(d, g, v * N)), sum[v]);
              }
            }
          for (int v = 0; v < U; v += 2) put_values2(d, sum[v], sum[v + 1], dx + c + v * N, stream);
          return;
        }
      }
#endif
      if constexpr (!kMax) {
        if (j.consecutive) {  // (a row's terms one output step apart: no table look-up per term)
          for (int r = 0; r < j.nrows && x1 > x0; ++r) {  // (x0 of a pixel without terms is past the table)
            const SIn* g = dy(r, x0) + c;
            for (int64_t x = x0; x < x1; ++x, g += j.out_step)
              for (int v = 0; v < U; ++v) sum[v] = hn::Add(sum[v], load_lanes<kUnit>(d, g, v * N));
          }
          for (int v = 0; v < U; ++v) put_values(d, sum[v], dx + c + v * N, stream);
          return;
        }
      }
      terms(d, u, c, sum, stream);
    };
    int64_t c = 0;
    if (vector) {  // (channels left by whole vectors: vectors of 8 and 4 lanes, channels-last rows of few channels)
      for (; c + 4 * N <= j.channels; c += 4 * N) vectors(std::integral_constant<int, 4>(), c);
      for (; c + N <= j.channels; c += N) vectors(std::integral_constant<int, 1>(), c);
      if (N > 8 && c + 8 <= j.channels) narrow(hn::CappedTag<T, 8>(), c), c += 8;
      if (N > 4 && c + 4 <= j.channels) narrow(hn::CappedTag<T, 4>(), c), c += 4;
    }
    for (; c < j.channels; ++c) {
      T sum = 0;
      for (int r = 0; r < j.nrows; ++r)
        for (int64_t x = x0; x < x1; ++x)
          if (!kMax || load_index(kForm, am(r, x), c) == code(r, x)) sum += T(dy(r, x)[c]);
      dx[c] = SOut(sum);
    }
  }
  if (stream) hwy::FlushStream();
}

template <class SIn, class SOut, bool kMax>
void gather_backward(const GatherJob& j) {
  switch (kMax ? j.form : IndexForm::None) {  // the argmax form fixed at compile time: no switch per term
    case IndexForm::U8: return gather_backward<SIn, SOut, kMax, IndexForm::U8>(j);
    case IndexForm::I16: return gather_backward<SIn, SOut, kMax, IndexForm::I16>(j);
    case IndexForm::I32: return gather_backward<SIn, SOut, kMax, IndexForm::I32>(j);
    case IndexForm::I64: return gather_backward<SIn, SOut, kMax, IndexForm::I64>(j);
    default: return gather_backward<SIn, SOut, kMax, IndexForm::None>(j);
  }
}

template <class S>
void divide(const void* gp, const compute_t<S>* dv, compute_t<S>* q, int64_t n, int64_t group) {
  const hn::ScalableTag<compute_t<S>> d;
  const int64_t N = int64_t(hn::Lanes(d));
  const S* g = static_cast<const S*>(gp);
  int64_t i = 0;
  if (group % N == 0) {  // whole vectors in each group, group by group (a division of indices per vector was a
                         // third of the call)
    for (; i + group <= n; i += group) {
      const auto div = hn::Set(d, dv[i / group]);
      for (int64_t c = i; c < i + group; c += N) hn::StoreU(hn::Div(load_lanes<kUnit>(d, g, c), div), d, q + c);
    }
  } else if (N % group == 0 && n < (int64_t(1) << 31)) {  // groups of 1, 2, 4, 8 lanes: divisors gathered
    const hn::Rebind<int32_t, decltype(d)> di;
    [[maybe_unused]] const hn::RebindToSigned<decltype(d)> dsi;  // (float64: int64 lanes)
    const int shift = hwy::FloorLog2(uint64_t(group));
    for (; i + N <= n; i += N) {
      const auto at = hn::ShiftRightSame(hn::Iota(di, int32_t(i)), shift);
      hn::Vec<decltype(d)> div;
      if (group == 1) div = hn::LoadU(d, dv + i);
      else if constexpr (sizeof(compute_t<S>) == 8) div = hn::GatherIndex(d, dv, hn::PromoteTo(dsi, at));
      else div = hn::GatherIndex(d, dv, at);
      hn::StoreU(hn::Div(load_lanes<kUnit>(d, g, i), div), d, q + i);
    }
  }
  for (; i < n; ++i) q[i] = compute_t<S>(g[i]) / dv[i / group];
}

template <class T>
HWY_INLINE void zeros(T* p, int64_t n) {
  const hn::ScalableTag<T> d;
  const int64_t N = int64_t(hn::Lanes(d));
  if (n < N) std::fill_n(p, n, T(0));
  else for (int64_t i = 0; i < n; i += N) hn::StoreU(hn::Zero(d), d, p + std::min(i, n - N));
}

template <class S>
void pad_rows(const void* gp, const compute_t<S>* dv, compute_t<S>* q, int64_t rows, int64_t len, int64_t lo,
              int64_t stride) {
  using T = compute_t<S>;
  const hn::ScalableTag<T> d;
  const int64_t N = int64_t(hn::Lanes(d));
  const S* g = static_cast<const S*>(gp);
  for (int64_t r = 0; r < rows; ++r, g += len, q += stride) {
    const T* dr = dv ? dv + r * len : nullptr;
    T* out = q + lo;
    zeros(q, lo);
    zeros(out + len, stride - lo - len);
    int64_t i = 0;
    if (len >= N)
      for (; i < len; i += N) {  // (the last vector ends at len, over lanes the one before gave the same values)
        const int64_t a = std::min(i, len - N);
        const auto v = load_lanes<kUnit>(d, g, a);
        hn::StoreU(dr ? hn::Div(v, hn::LoadU(d, dr + a)) : v, d, out + a);
      }
    for (; i < len; ++i) out[i] = dr ? T(g[i]) / dr[i] : T(g[i]);
  }
}

template <class T>
void fill_planes(const T* value, int64_t planes, int64_t cells, T* out, bool stream) {
  const hn::ScalableTag<T> d;
  const int64_t N = int64_t(hn::Lanes(d)), total = planes * cells;
  int64_t x = 0;
  if (cells >= N) {  // a vector meets at most one plane boundary
    const hn::RebindToSigned<decltype(d)> di;
    using TI = hn::TFromD<decltype(di)>;
    const auto lane = hn::Iota(di, 0);
    for (; x < total && reinterpret_cast<uintptr_t>(out + x) % (N * sizeof(T)) != 0; ++x) out[x] = value[x / cells];
    int64_t p = x / cells, next = (p + 1) * cells;  // plane of x, and where the next one starts
    for (; x + N <= total; x += N) {
      if (x >= next) ++p, next += cells;
      const auto here = hn::Set(d, value[p]);
      const auto v = x + N <= next ? here
                                   : hn::IfThenElse(hn::RebindMask(d, lane < hn::Set(di, TI(next - x))), here,
                                                    hn::Set(d, value[p + 1]));
      if (stream) hn::Stream(v, d, out + x);
      else hn::Store(v, d, out + x);
    }
    if (stream) hwy::FlushStream();  // the streamed lines reach memory before anyone reads them
  }
  for (; x < total; ++x) out[x] = value[x / cells];
}

template <class S>
void drain_sums(compute_t<S>* sums, S* out, int64_t n, bool stream) {
  using T = compute_t<S>;
  const hn::ScalableTag<T> d;
  const int64_t N = int64_t(hn::Lanes(d));
  stream = stream && whole_aligned_rows(out, n, n, N, int64_t(sizeof(S)));
  int64_t i = 0;
  for (; i + N <= n; i += N) {
    put_values(d, hn::LoadU(d, sums + i), out + i, stream);
    hn::StoreU(hn::Zero(d), d, sums + i);
  }
  if (stream) hwy::FlushStream();
  for (; i < n; ++i) out[i] = S(sums[i]), sums[i] = T(0);
}

bool local_codes(const LocalCodeJob& job) {
  const LocalCodeJob j = job;  // (a copy the byte stores below cannot alias)
  bool ok = true;
  int64_t k = 0;
#if HWY_TARGET <= HWY_AVX2  // (32-bit lanes from pairs of int64 ones)
  const hn::ScalableTag<int32_t> d32;  // two int64 vectors' worth of lanes
  const hn::RebindToUnsigned<decltype(d32)> du;
  const hn::Rebind<int16_t, decltype(d32)> d16;
  const hn::Rebind<uint8_t, decltype(d32)> d8;
  const int64_t N = int64_t(hn::Lanes(d32)), H = N / 2;
  const auto row = hn::Set(d32, int32_t(j.row)), zero = hn::Zero(d32), negative = hn::Set(d32, -1);
  const auto span = hn::Set(du, uint32_t(j.span));
  // Per axis, tap t >= 1 where r reaches t pitches: r - t * pitch is left for the inner axes, and the code grows by
  // that axis's stride (the inner axes' taps) per tap passed; the taps passed are counted only where the run's
  // windows are cut, for their bounds. An inner axis of pitch 1 takes what is left as its tap at once.
  const int32_t stride[3] = {j.kernel[1] * j.kernel[2], j.kernel[2], 1};
  const bool unit = j.pitch[2] == 1;
  bool whole = true;
  for (int a = 0; a < 3; ++a) whole &= j.lo[a] == 0 && j.hi[a] == j.kernel[a];
  auto all = hn::MaskFromVec(negative);  // every lane named a tap so far
  // the codes of values at.. (n of them; masked loads where n < N)
  auto codes = [&](int64_t at, int64_t n, auto clipped) {
    constexpr bool kClipped = decltype(clipped)::value;
    const hn::Repartition<int64_t, decltype(d32)> d64;
    const auto v0 = hn::BitCast(d32, hn::MaskedLoad(hn::FirstN(d64, size_t(std::min(n, H))), d64, j.flat + at));
    const auto v1 = hn::BitCast(d32, hn::MaskedLoad(hn::FirstN(d64, size_t(std::max<int64_t>(n - H, 0))), d64,
                                                    j.flat + at + H));
    // r = value - base - row from the low halves, below span; the high halves must be zero (a low half of 2^31 or
    // more, negative here, names no tap inside the input: that cell's index is base + row + r >= 0)
    const auto low = hn::ConcatEven(d32, v1, v0), high = hn::ConcatOdd(d32, v1, v0);
    const auto active = hn::FirstN(d32, size_t(n));
    auto r = hn::Sub(low, hn::Add(hn::MaskedLoad(active, d32, j.base + at), row));
    auto valid = hn::And(hn::Eq(high, zero), hn::RebindMask(d32, hn::BitCast(du, r) < span));
    auto code = zero;
    for (int a = 0; a < 3; ++a) {
      if (a == 2 && unit) {
        if constexpr (kClipped)
          valid = hn::And(valid, hn::And(hn::Set(d32, j.lo[2] - 1) < r, r < hn::Set(d32, j.hi[2])));
        else
          valid = hn::And(valid, r < hn::Set(d32, j.kernel[2]));
        code = hn::Add(code, r), r = zero;
        break;
      }
      auto q = zero;
      const auto pitch = hn::Set(d32, j.pitch[a]), below = hn::Set(d32, j.pitch[a] - 1);
      const auto step = hn::Set(d32, stride[a]);
      for (int32_t t = 1; t < j.kernel[a]; ++t) {
        const auto past = below < r;  // r >= pitch
        r = hn::IfThenElse(past, hn::Sub(r, pitch), r);
        code = hn::IfThenElse(past, hn::Add(code, step), code);
        if constexpr (kClipped) q = hn::IfThenElse(past, hn::Sub(q, negative), q);
      }
      if constexpr (kClipped)
        valid = hn::And(valid, hn::And(hn::Set(d32, j.lo[a] - 1) < q, q < hn::Set(d32, j.hi[a])));
    }
    valid = hn::And(valid, hn::Eq(r, zero));
    all = hn::And(all, hn::Or(valid, hn::Not(active)));
    return hn::IfThenElse(valid, code, negative);
  };
#if HWY_TARGET == HWY_AVX3_DL
  // 64 values a step: their offsets as bytes (255 where outside [0, span) or where the value's high half is not
  // zero), then the table's 256 entries by two two-register byte permutes chosen by the index's top bit
  if (whole && j.table && j.form == IndexForm::U8) {
    const hn::Repartition<int64_t, decltype(d32)> d64;
    const __m512i t0 = _mm512_loadu_si512(j.table), t1 = _mm512_loadu_si512(j.table + 64),
                  t2 = _mm512_loadu_si512(j.table + 128), t3 = _mm512_loadu_si512(j.table + 192);
    const auto none = hn::Set(d32, 255);
    uint8_t* out = static_cast<uint8_t*>(j.out);
    __mmask64 bad = 0;
    for (; k + 4 * N <= j.count; k += 4 * N) {
      // the values 4 KiB ahead asked for (without, this loop read memory slower than the one below: seed NCHW
      // backward from int64 0.82x; with, 1.03-1.15x)
      for (int64_t b = 0; b < 4 * N; b += 8) prefetch(j.flat + k + 8 * 4 * N + b);
      __m128i part[4];
      for (int q = 0; q < 4; ++q) {
        const int64_t at = k + q * N;
        const auto v0 = hn::BitCast(d32, hn::LoadU(d64, j.flat + at)), v1 = hn::BitCast(d32, hn::LoadU(d64, j.flat + at + H));
        const auto r = hn::Sub(hn::ConcatEven(d32, v1, v0), hn::Add(hn::LoadU(d32, j.base + at), row));
        const auto inside = hn::And(hn::Eq(hn::ConcatOdd(d32, v1, v0), zero), hn::RebindMask(d32, hn::BitCast(du, r) < span));
        part[q] = _mm512_cvtepi32_epi8(hn::IfThenElse(inside, r, none).raw);  // (0 to 255: one truncation)
      }
      __m512i at = _mm512_inserti32x4(_mm512_castsi128_si512(part[0]), part[1], 1);
      at = _mm512_inserti32x4(_mm512_inserti32x4(at, part[2], 2), part[3], 3);
      const __m512i codes = _mm512_mask_blend_epi8(_mm512_movepi8_mask(at), _mm512_permutex2var_epi8(t0, at, t1),
                                                   _mm512_permutex2var_epi8(t2, at, t3));
      bad |= _mm512_cmpeq_epi8_mask(codes, _mm512_set1_epi8(char(255)));
      _mm512_storeu_si512(out + k, codes);
    }
    ok = bad == 0;
  }
#endif
  auto loop = [&](auto clipped) {
    for (; k + N <= j.count; k += N) {
      // the values 4 KiB ahead asked for, as above: the planes' runs are short (25 KiB in resnet-stem) and the
      // threads take them in turns, so the hardware's prefetchers restart often (AVX2, Zen 3: the backward from
      // int64 1.2-1.4x faster)
      for (int64_t b = 0; b < N; b += 8) prefetch(j.flat + k + 512 + b);
      const auto code = codes(k, N, clipped);
      if (j.form == IndexForm::I32) hn::StoreU(code, d32, static_cast<int32_t*>(j.out) + k);
      else if (j.form == IndexForm::I16) hn::StoreU(hn::DemoteTo(d16, code), d16, static_cast<int16_t*>(j.out) + k);
      else hn::StoreU(hn::DemoteTo(d8, code), d8, static_cast<uint8_t*>(j.out) + k);
    }
    if (k < j.count) {  // the last few through a buffer: no store past the run
      HWY_ALIGN int32_t last[64] = {};  // zeroed: newer g++ cannot see that codes() fills it
      hn::Store(codes(k, j.count - k, clipped), d32, last);
      for (int64_t i = 0; k < j.count; ++i, ++k) store_index(j.form, j.out, k, last[i]);
    }
  };
  whole ? loop(std::false_type{}) : loop(std::true_type{});
  ok = ok && hn::AllTrue(d32, all);
#endif
  for (; k < j.count; ++k) {
    const int32_t code = local_code(j, j.flat[k] - j.row - j.base[k]);
    ok &= code >= 0;
    store_index(j.form, j.out, k, code);
  }
  return ok;
}

template <class S, bool kMax>
void tiled_backward_for_stride(const TiledBackwardJob& j) {
  j.stride == 2 ? tiled_backward<S, kMax, 2>(j) : tiled_backward<S, kMax, 0>(j);
}
void TiledMaxBackwardF32(const TiledBackwardJob& j) { tiled_backward_for_stride<float, true>(j); }
void TiledMaxBackwardF64(const TiledBackwardJob& j) { tiled_backward_for_stride<double, true>(j); }
void TiledMaxBackwardBF16(const TiledBackwardJob& j) { tiled_backward_for_stride<bfloat16, true>(j); }
void TiledMaxBackwardF16(const TiledBackwardJob& j) { tiled_backward_for_stride<float16, true>(j); }
void TiledAvgBackwardF32(const TiledBackwardJob& j) { tiled_backward_for_stride<float, false>(j); }
void TiledAvgBackwardF64(const TiledBackwardJob& j) { tiled_backward_for_stride<double, false>(j); }
void TiledAvgBackwardBF16(const TiledBackwardJob& j) { tiled_backward_for_stride<bfloat16, false>(j); }
void TiledAvgBackwardF16(const TiledBackwardJob& j) { tiled_backward_for_stride<float16, false>(j); }
void GatherMaxBackwardF32(const GatherJob& j) { gather_backward<float, float, true>(j); }
void GatherMaxBackwardF64(const GatherJob& j) { gather_backward<double, double, true>(j); }
void GatherMaxBackwardBF16(const GatherJob& j) { gather_backward<bfloat16, bfloat16, true>(j); }
void GatherMaxBackwardF16(const GatherJob& j) { gather_backward<float16, float16, true>(j); }
void GatherAvgBackwardF32(const GatherJob& j) { gather_backward<float, float, false>(j); }
void GatherAvgBackwardF64(const GatherJob& j) { gather_backward<double, double, false>(j); }
void GatherAvgBackwardBF16(const GatherJob& j) { gather_backward<float, bfloat16, false>(j); }
void GatherAvgBackwardF16(const GatherJob& j) { gather_backward<float, float16, false>(j); }
bool LocalCodes(const LocalCodeJob& j) { return local_codes(j); }
void FillPlanesF32(const float* v, int64_t p, int64_t c, float* out, bool s) { fill_planes(v, p, c, out, s); }
void FillPlanesF64(const double* v, int64_t p, int64_t c, double* out, bool s) { fill_planes(v, p, c, out, s); }
void DrainSumsF32(float* s, float* out, int64_t n, bool stream) { drain_sums(s, out, n, stream); }
void DrainSumsF64(double* s, double* out, int64_t n, bool stream) { drain_sums(s, out, n, stream); }
void DrainSumsBF16(float* s, bfloat16* out, int64_t n, bool stream) { drain_sums(s, out, n, stream); }
void DrainSumsF16(float* s, float16* out, int64_t n, bool stream) { drain_sums(s, out, n, stream); }
void DivideF32(const void* g, const float* d, float* q, int64_t n, int64_t group) { divide<float>(g, d, q, n, group); }
void DivideBF16(const void* g, const float* d, float* q, int64_t n, int64_t group) { divide<bfloat16>(g, d, q, n, group); }
void DivideF16(const void* g, const float* d, float* q, int64_t n, int64_t group) { divide<float16>(g, d, q, n, group); }
void DivideF64(const void* g, const double* d, double* q, int64_t n, int64_t group) { divide<double>(g, d, q, n, group); }
#define POOLKIT_PAD_ROWS(Name, S, T)                                                               \
  void Name(const void* g, const T* d, T* q, int64_t rows, int64_t len, int64_t lo, int64_t stride) { \
    pad_rows<S>(g, d, q, rows, len, lo, stride);                                                     \
  }
POOLKIT_PAD_ROWS(PadRowsF32, float, float)
POOLKIT_PAD_ROWS(PadRowsBF16, bfloat16, float)
POOLKIT_PAD_ROWS(PadRowsF16, float16, float)
POOLKIT_PAD_ROWS(PadRowsF64, double, double)
#undef POOLKIT_PAD_ROWS

}  // namespace poolkit::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace poolkit::cpu {
POOLKIT_KERNEL_DISPATCH(TiledMaxBackwardF32, tiled_max_backward_f32, TiledBackwardJob)
POOLKIT_KERNEL_DISPATCH(TiledMaxBackwardF64, tiled_max_backward_f64, TiledBackwardJob)
POOLKIT_KERNEL_DISPATCH(TiledAvgBackwardF32, tiled_avg_backward_f32, TiledBackwardJob)
POOLKIT_KERNEL_DISPATCH(TiledAvgBackwardF64, tiled_avg_backward_f64, TiledBackwardJob)
POOLKIT_KERNEL_DISPATCH(TiledMaxBackwardBF16, tiled_max_backward_bf16, TiledBackwardJob)
POOLKIT_KERNEL_DISPATCH(TiledMaxBackwardF16, tiled_max_backward_f16, TiledBackwardJob)
POOLKIT_KERNEL_DISPATCH(TiledAvgBackwardBF16, tiled_avg_backward_bf16, TiledBackwardJob)
POOLKIT_KERNEL_DISPATCH(TiledAvgBackwardF16, tiled_avg_backward_f16, TiledBackwardJob)
POOLKIT_KERNEL_DISPATCH(GatherMaxBackwardF32, gather_max_backward_f32, GatherJob)
POOLKIT_KERNEL_DISPATCH(GatherMaxBackwardF64, gather_max_backward_f64, GatherJob)
POOLKIT_KERNEL_DISPATCH(GatherAvgBackwardF32, gather_avg_backward_f32, GatherJob)
POOLKIT_KERNEL_DISPATCH(GatherAvgBackwardF64, gather_avg_backward_f64, GatherJob)
POOLKIT_KERNEL_DISPATCH(GatherMaxBackwardBF16, gather_max_backward_bf16, GatherJob)
POOLKIT_KERNEL_DISPATCH(GatherMaxBackwardF16, gather_max_backward_f16, GatherJob)
POOLKIT_KERNEL_DISPATCH(GatherAvgBackwardBF16, gather_avg_backward_bf16, GatherJob)
POOLKIT_KERNEL_DISPATCH(GatherAvgBackwardF16, gather_avg_backward_f16, GatherJob)
HWY_EXPORT(FillPlanesF32);
HWY_EXPORT(FillPlanesF64);
void fill_planes_f32(const float* v, int64_t p, int64_t c, float* out, bool s) {
  HWY_DYNAMIC_DISPATCH(FillPlanesF32)(v, p, c, out, s);
}
void fill_planes_f64(const double* v, int64_t p, int64_t c, double* out, bool s) {
  HWY_DYNAMIC_DISPATCH(FillPlanesF64)(v, p, c, out, s);
}
#define POOLKIT_DRAIN_SUMS(Name, fn, T, S)                                             \
  HWY_EXPORT(Name);                                                                      \
  void fn(T* sums, S* out, int64_t n, bool stream) { HWY_DYNAMIC_DISPATCH(Name)(sums, out, n, stream); }
POOLKIT_DRAIN_SUMS(DrainSumsF32, drain_sums_f32, float, float)
POOLKIT_DRAIN_SUMS(DrainSumsF64, drain_sums_f64, double, double)
POOLKIT_DRAIN_SUMS(DrainSumsBF16, drain_sums_bf16, float, bfloat16)
POOLKIT_DRAIN_SUMS(DrainSumsF16, drain_sums_f16, float, float16)
#undef POOLKIT_DRAIN_SUMS
HWY_EXPORT(LocalCodes);
bool flat_to_local_codes(const LocalCodeJob& j) { return HWY_DYNAMIC_DISPATCH(LocalCodes)(j); }
HWY_EXPORT(DivideF32);
HWY_EXPORT(DivideBF16);
HWY_EXPORT(DivideF16);
HWY_EXPORT(DivideF64);
void divide_f32(const void* g, const float* d, float* q, int64_t n, int64_t group) {
  HWY_DYNAMIC_DISPATCH(DivideF32)(g, d, q, n, group);
}
void divide_bf16(const void* g, const float* d, float* q, int64_t n, int64_t group) {
  HWY_DYNAMIC_DISPATCH(DivideBF16)(g, d, q, n, group);
}
void divide_f16(const void* g, const float* d, float* q, int64_t n, int64_t group) {
  HWY_DYNAMIC_DISPATCH(DivideF16)(g, d, q, n, group);
}
void divide_f64(const void* g, const double* d, double* q, int64_t n, int64_t group) {
  HWY_DYNAMIC_DISPATCH(DivideF64)(g, d, q, n, group);
}
#define POOLKIT_PAD_ROWS(Name, fn, T)                                                                    \
  HWY_EXPORT(Name);                                                                                       \
  void fn(const void* g, const T* d, T* q, int64_t rows, int64_t len, int64_t lo, int64_t stride) { \
    HWY_DYNAMIC_DISPATCH(Name)(g, d, q, rows, len, lo, stride);                                           \
  }
POOLKIT_PAD_ROWS(PadRowsF32, pad_rows_f32, float)
POOLKIT_PAD_ROWS(PadRowsBF16, pad_rows_bf16, float)
POOLKIT_PAD_ROWS(PadRowsF16, pad_rows_f16, float)
POOLKIT_PAD_ROWS(PadRowsF64, pad_rows_f64, double)
#undef POOLKIT_PAD_ROWS
}  // namespace poolkit::cpu
#endif
