#pragma once
// SIMD microkernels of the fast CPU path. They see only pointers, counts, strides and tap lists; the drivers
// (forward.cpp, backward.cpp, backward_rows.cpp, backward_scatter.cpp, backward_k3s2.cpp) turn a Geometry into
// these jobs. Each kernel is one source compiled for every x86 ISA Highway targets (SSE4, AVX2, AVX-512) and
// chosen at run time: kernels_forward-inl.h (instantiated by kernels_forward.cpp and kernels_forward_half.cpp),
// kernels_backward.cpp (tiled and gather backward, divides, fills, drains, argmax codes), kernels_rows.cpp (the
// channels-first row backward), kernels_k3s2.cpp (3x3 windows of stride 2) and kernels_narrow.cpp, over the
// helpers of kernels-inl.h. Max follows PyTorch's rule (replace when greater or NaN: the first maximum and the
// last NaN win); sums run in window order in the element type, as the reference does, so results are
// bit-identical to it (up to which payload a sum of two NaN keeps: IEEE 754 leaves that open, and compilers
// order operands freely). float32 and float64 everywhere; bfloat16 and float16 (computed in float32) where a
// kernel's comment says so.
#include <cstdint>

#include "poolkit/dtype.hpp"

namespace poolkit::cpu {

enum class IndexForm : uint8_t { None, U8, I16, I32, I64 };
constexpr int64_t form_bytes(IndexForm f) {
  return f == IndexForm::U8 ? 1 : f == IndexForm::I16 ? 2 : f == IndexForm::I32 ? 4 : f == IndexForm::I64 ? 8 : 0;
}

// How vector lanes map to input elements: lane k reads base[(k / group) * lane_stride + k % group].
// Vector loads exist for (group 1, stride 1), (group 1, stride 2), (group 2, stride 4, 4-byte elements) and
// groups of a multiple of the vector length (any stride: a vector then lies inside one output's group);
// other layouts, and lanes from vector_count on, run the scalar loop of the same kernel.
struct Lanes {
  int64_t count = 0;         // outputs to compute (lanes)
  int64_t vector_count = 0;  // lanes that vector loads may cover (their over-read stays inside the input)
  int64_t group = 1, lane_stride = 1;
};

// One reduction over the same taps for `count` outputs stored contiguously at y (and argmax).
struct ForwardJob {
  const void* x = nullptr;  // the input cell of tap offset 0 for lane 0
  void* y = nullptr;
  void* argmax = nullptr;
  IndexForm form = IndexForm::None;
  Lanes lanes;
  int ntaps = 0;
  const int64_t* tap_offset = nullptr;  // elements from x
  const int64_t* tap_code = nullptr;    // the argmax value stored for the tap (local id, or flat index of lane 0)
  int64_t flat_step = 0;                // I64: lane k stores tap_code + (k / group) * flat_step
  int64_t divisor = 1;                  // average
  int64_t rows = 1, x_row_step = 0, y_row_step = 0;  // the same taps repeated on further rows (planes, images)
  // I64: row r adds ((code_row_first + r) % code_period) * code_row_step to its flat indices (rows that run
  // down a plane, and on into the next one)
  int64_t code_row_step = 0, code_row_first = 0, code_period = 1;
  bool stream = false;  // y and argmax written by streaming stores where lines are whole (outputs past the cache)
  // Where the next job of this thread starts, in elements from x (its rows x_row_step apart, its taps assumed
  // this job's): the last rows ask for its first ones. 0: no next job known.
  int64_t next_rows = 0;
};

void max_forward_f32(const ForwardJob& job);
void max_forward_f64(const ForwardJob& job);
void avg_forward_f32(const ForwardJob& job);
void avg_forward_f64(const ForwardJob& job);
// bfloat16 / float16 storage, computed in float32 (exact widening; results rounded as dtype.hpp does)
void max_forward_bf16(const ForwardJob& job);
void avg_forward_bf16(const ForwardJob& job);
void max_forward_f16(const ForwardJob& job);
void avg_forward_f16(const ForwardJob& job);

// Whether tiled_backward runs channels-last groups of 4 or 8 channels of 4-byte lanes (float32, and 16-bit types
// computed in float32) by vectors: at stride 2 along W, where store_taps alternates the two taps' blocks, or the
// groups are whole vectors.
inline bool tiled_blocks(int64_t group, int64_t stride, int64_t lane_bytes) {
  return (group == 4 || group == 8) && stride == 2 && lane_bytes == 4;
}

// Backward of a row of windows that tile the input (kernel == stride, no padding, no dilation), for one input
// row. Lanes k are (output o, channel c) with `group` channels per output (1, 2, or 4-8 by tiled_blocks):
// dx[(s * o + j) * group + c] = (match ? 0 + g[k] : 0) for j < s. Max: g = dy, and lane k matches tap j where
// its argmax, less `code_base`, equals j: read from `argmax` in `form` (U8 / I16 / I32, float32 only), or from
// `rel` (argmax - code_base already taken, any other value for no match) when rel is given. Average: g = dy /
// divisor, always a match.
struct TiledBackwardJob {
  const void* g = nullptr;
  const void* argmax = nullptr;
  IndexForm form = IndexForm::None;
  const int32_t* rel = nullptr;
  int64_t code_base = 0;
  void* dx = nullptr;
  int64_t count = 0, stride = 1, group = 1;
  int64_t divisor = 1;  // average only
  // The same for `rows` output rows (g and argmax g_row_step elements apart, dx dx_row_step apart), each
  // writing `tap_rows` dx rows, row r at tap_row_offset[r] from its dx (none: one, at 0) with codes from
  // code_base + r * stride (window-local codes of tap rows in window order). `rel` serves one row only.
  int64_t rows = 1, g_row_step = 0, dx_row_step = 0;
  int tap_rows = 1;
  const int64_t* tap_row_offset = nullptr;
  bool stream = false;  // dx past the cache: rows of whole aligned lines by streaming stores
};
void tiled_max_backward_f32(const TiledBackwardJob& job);
void tiled_max_backward_f64(const TiledBackwardJob& job);
void tiled_avg_backward_f32(const TiledBackwardJob& job);
void tiled_avg_backward_f64(const TiledBackwardJob& job);
void tiled_max_backward_bf16(const TiledBackwardJob& job);
void tiled_max_backward_f16(const TiledBackwardJob& job);
void tiled_avg_backward_bf16(const TiledBackwardJob& job);
void tiled_avg_backward_f16(const TiledBackwardJob& job);

// Channels-last gather over C for a row of `pixels` input pixels, pixel p at dx + p * dx_step: dx[c] = 0 + sum
// over its terms of (match ? dy_t[c] : 0), in term order. The terms of pixel p: for each output row r (in
// order), each output x in [cover_begin[p], cover_begin[p + 1]) (in order), at dy row_dy[r] + cover_o[x] *
// out_step elements, with the argmax at row_am[r] + cover_o[x] * out_step elements of the argmax. Max: a term
// matches where argmax[c] == its code, row_code[r] + cover_j[x] (or, with flat_codes, row_code[0] + p for
// every term of pixel p); argmax in `form`, never None. Average: every term matches (dy already divided).
struct GatherJob {
  int64_t channels = 0, pixels = 0, dx_step = 0;
  int nrows = 0;
  const void* const* row_dy = nullptr;
  const void* const* row_am = nullptr;
  const int64_t* row_code = nullptr;
  const int64_t *cover_begin = nullptr, *cover_o = nullptr, *cover_j = nullptr;
  bool consecutive = false;  // (average) each pixel's covering outputs follow one another: terms out_step apart
  int64_t pairs_begin = 0, pairs_end = 0;  // (max) pixels in pairs: Covers::pairs_begin (kernels_backward.cpp, pair_run)
  int64_t out_step = 0;
  bool flat_codes = false;
  IndexForm form = IndexForm::None;
  void* dx = nullptr;
  bool prefetch = false;  // the terms are sparse (strided windows): ask for the newest terms of pixels ahead
  bool stream = false;    // dx written by streaming stores where every vector store is whole and aligned
};
void gather_max_backward_f32(const GatherJob& job);
void gather_max_backward_f64(const GatherJob& job);
void gather_avg_backward_f32(const GatherJob& job);
void gather_avg_backward_f64(const GatherJob& job);
// bfloat16 / float16 dx, summed in float32 and rounded once: max from dy of the same type, average from dy
// already divided, in float32
void gather_max_backward_bf16(const GatherJob& job);
void gather_max_backward_f16(const GatherJob& job);
void gather_avg_backward_bf16(const GatherJob& job);
void gather_avg_backward_f16(const GatherJob& job);

// One dx row of the channels-first row accumulation (backward_rows.cpp). The row is made of `phases` phase rows
// of `phase_len` cells; cell a of phase row p is the sum, from +0, over each term (an output row, in order) and
// each tap of phase p (in order) with i = a - shift in [lo, hi), of (code == nullptr || code[i] == want_base +
// jw ? q[i] : 0), in float32 (float64 for float64 dx). Adding +0 leaves a sum that started at +0 as it was, so
// the terms that count arrive in the order given. Taps come grouped by phase. q is in float32 (float64 for
// float64 dx); codes in code_form: U8, I16 or I32 (float64 dx: I64). With `padded`, q and code rows can be read
// at every i = a - shift of every cell a < phase_len, q being 0 outside [0, outputs), so that every cell goes
// by vectors without the [lo, hi) test (for a cell inside the plane, the i of a tap inside [0, outputs) are its
// [lo, hi); cells past the plane's end are not written). The phase
// rows go to acc (the accumulation type); when dx is given (contiguous) the row is written there instead: dx[w]
// = cell w / phases of phase row w % phases, for w < width (acc then only serves phases > 1). With row_terms,
// `rows` dx rows (dx_row_step apart) in one call, row r from terms [row_terms[r], row_terms[r + 1]). With
// `stream`, dx goes out by streaming stores where lines are whole (dx too large to stay in the cache). With
// `aligned` (one phase, no codes, every |shift| <= kRowAlign): each term's q row starts on a 64-byte
// boundary and can be read from kRowAlign cells before it to kRowAlign cells past phase_len rounded up to a
// multiple of 4 * kRowAlign (the float sums of the commonest tap patterns then go by aligned vectors, see
// aligned_rows_f32). For aligned_rows only: `divisor`, each cell's sum divided by it (row r's divisors from
// divisor + r * phase_len, readable through the row's last vector); `src_len`, when not 0, float32 q rows read
// where they lie, without alignment or margins, cells outside [0, src_len) counting as 0, each q moved by
// src_shift bytes (one plane's terms serve every plane). `ahead`: ahead_bytes asked for from the cache, spread over
// the rows (the next plane's input).
constexpr int64_t kRowAlign = 16;
struct RowTerm {
  const void* q = nullptr;
  const void* code = nullptr;
  int64_t want_base = 0;
};
struct RowTap {
  int64_t jw = 0, phase = 0, shift = 0, lo = 0, hi = 0;
};
struct RowJob {
  void* acc = nullptr;
  const RowTerm* terms = nullptr;
  int nterms = 0;
  const RowTap* taps = nullptr;
  int ntaps = 0;
  int64_t phases = 1, phase_len = 0;
  void* dx = nullptr;
  int64_t width = 0;
  int rows = 1;
  const int* row_terms = nullptr;
  int64_t dx_row_step = 0;
  IndexForm code_form = IndexForm::I32;
  bool padded = false;
  bool aligned = false;
  bool stream = false;
  const float* divisor = nullptr;
  int64_t src_len = 0, src_shift = 0;
  const char* ahead = nullptr;
  int64_t ahead_bytes = 0;
};
void accumulate_row_f32(const RowJob& job);
void accumulate_row_f64(const RowJob& job);
void accumulate_row_bf16(const RowJob& job);
void accumulate_row_f16(const RowJob& job);
// An `aligned` job of one phase, no codes, float sums straight into float32 dx, where the target has a kernel
// for its taps (AVX-512; cells a-1, a, a+1 / a-2, a-1, a / a-1, a of the backward's copies, or with src_len
// a-1, a, a+1 / a, a+1, a+2 / a, a+1 of rows where they lie): false, having written nothing, where it has not.
// The same sums, in the same order, as accumulate_row (which takes this kernel itself where it can, for 16-bit
// dx too).
bool aligned_rows_f32(const RowJob& job);

// Max backward of windows of 3 taps, stride 2 and dilation 1 along H and W (pad_h, pad_w: 0 or 1 before each
// axis) over one channels-first plane, from a window-local argmax in bytes (jh * 3 + jw), vectorised along the
// output columns. The out_h x out_w outputs (dy, am: rows dy_row / am_row elements apart, columns contiguous) are
// first copied to padded rows in `g` (dx's type) and `code` (layout: k3s2_layout): row R holds output row R - 1,
// output column m at [R * pitch + m + 1] (-1 <= m <= lanes), and where there is no output (rows -1 and from
// out_h on, columns -1 and from out_w on) code is kK3S2NoCode and g 0. Each code is checked on the way: below 9,
// and where the window is not whole (rows outside full_h, columns outside full_w: [begin, end) ranges of
// outputs) naming a cell inside the plane; the kernel returns false, having written nothing to dx, when one is
// not. The dx plane (height x width, rows dx_row elements apart) is made in `plane`, every cell the sum from +0
// of its terms in increasing output order, then copied to dx (streamed past the cache with `stream` where dx's
// rows are back to back and its vectors whole and aligned).
struct K3S2Job {
  const void* dy = nullptr;
  const uint8_t* am = nullptr;
  int64_t dy_row = 0, am_row = 0, out_h = 0, out_w = 0;
  int64_t full_h[2] = {0, 0}, full_w[2] = {0, 0};
  void* g = nullptr;
  uint8_t* code = nullptr;
  int64_t pitch = 0, lanes = 0, rows = 0;
  void* plane = nullptr;
  void* dx = nullptr;
  int64_t dx_row = 0, height = 0, width = 0;
  int64_t pad_h = 0, pad_w = 0;
  bool stream = false;
  const void* next_dy = nullptr;  // the plane after this one, usually this thread's next (rows asked for ahead)
  const uint8_t* next_am = nullptr;
  bool margins_filled = false;  // g and code already hold this layout's margins (their earlier plane's)
};
constexpr int64_t kK3S2Lanes = 16;  // the widest vector of float32
constexpr uint8_t kK3S2NoCode = 255;
// The buffers' layout for j.height x j.width (sets lanes, pitch, rows); what g / code and plane must hold, in
// elements. Rows of output columns up to ceil(width / 2) + 1 (the geometry's last window starts inside the
// padded input), and of ceil(height / 2) + 2 output rows; the plane has room for one row and two vectors of
// columns past its end (a row's last vector spills over).
inline void k3s2_layout(K3S2Job& j) {
  j.lanes = ((j.width + 1) / 2 + kK3S2Lanes - 1) / kK3S2Lanes * kK3S2Lanes;
  j.pitch = j.lanes + 2;
  j.rows = (j.height + 1) / 2 + 2;
}
inline int64_t k3s2_padded_size(const K3S2Job& j) { return j.rows * j.pitch + 64; }  // (vector stores past a row)
inline int64_t k3s2_plane_size(const K3S2Job& j) { return (j.height + 1) * j.width + 2 * j.lanes; }
bool k3s2_max_backward_f32(const K3S2Job& job);
bool k3s2_max_backward_f64(const K3S2Job& job);
bool k3s2_max_backward_bf16(const K3S2Job& job);
bool k3s2_max_backward_f16(const K3S2Job& job);

// Max forward of 3x3 windows of stride 2 over a channels-first plane (padding 0 or 1 per axis), with the
// one-byte window-local argmax or none (kernels_k3s2_forward.cpp): each row's three taps are compared once and
// the rows then in order (the reference's first maximum and last NaN), the last row's result kept in
// row_max / row_code for the next output row, which starts on the same input row. False on a target without
// vector pair loads (the caller takes the general path).
struct K3S2ForwardJob {
  const void* x = nullptr;
  const void* x_next = nullptr;  // the next plane the caller will give, for prefetching (or null)
  void* y = nullptr;
  uint8_t* am = nullptr;  // null: no argmax
  int64_t* flat = nullptr;  // int64 flat indices in place of am (integer kernels), or null
  bool stream = false;      // flat indices may go out by streaming stores (past the cache)
  int64_t x_row = 0, y_row = 0;  // elements between rows (the argmax has y's)
  int64_t height = 0, width = 0, out_h = 0, out_w = 0, pad_h = 0, pad_w = 0;
  void* row_max = nullptr;   // 2 (out_w + 64) values of the compute type (float, or double)
  void* row_code = nullptr;  // 2 (out_w + 64) codes in lanes of that width
};
bool k3s2_max_forward_f32(const K3S2ForwardJob& j);
bool k3s2_max_forward_f64(const K3S2ForwardJob& j);
bool k3s2_max_forward_bf16(const K3S2ForwardJob& j);
bool k3s2_max_forward_f16(const K3S2ForwardJob& j);

// A 3-D window's maximum as the maxima of its 2-D slices merged in order (kernels_slice_max.cpp): dst (the
// maximum of the slices so far, and its window-local codes) takes src's value and code + code_add where src's
// replaces it by the reference's rule (greater, or NaN), over rows x cols cells, rows dst_row / src_row elements
// apart (codes alike; null: none). Any dtype.
struct SliceMaxJob {
  void* dst = nullptr;
  uint8_t* dst_code = nullptr;
  int64_t dst_row = 0;
  const void* src = nullptr;
  const uint8_t* src_code = nullptr;
  int64_t src_row = 0;
  int64_t rows = 0, cols = 0;
  uint8_t code_add = 0;
};
void slice_max_merge(DType t, const SliceMaxJob& j);

// Average backward of channels-first planes whose rows fit one vector of float32 (W and OW at most
// narrow_lanes_f32()): each dx row is one vector, summed from the output rows covering it. Per plane (planes
// dy_plane / dx_plane elements apart): q row r = dy row r (OW values at dy_row[r]) / divisor row r (lanes of
// `divisor`, N a row, 1 past OW), for r < out_rows; then dx row r (W values at dx_row[r]), r < in_rows, = the
// sum from +0 over its terms k in [row_terms[r], row_terms[r + 1]) (q rows row_term[k], in order) and over the
// column slots b < nslots (in order) of lane w's q lane slot[b * N + w] (nothing where that is -1). With the
// terms in increasing output row and the slots in increasing output column, every cell gets the reference's
// sum. dx rows are written in order, rows [0, full_rows) as whole vectors (their lanes past W land on later
// rows of the plane, written after them), the others exactly W values.
struct NarrowJob {
  const float* dy = nullptr;
  float* dx = nullptr;
  int64_t planes = 0, dy_plane = 0, dx_plane = 0;
  int64_t out_rows = 0, in_rows = 0, width = 0, out_width = 0, full_rows = 0;
  const int64_t *dy_row = nullptr, *dx_row = nullptr;
  const float* divisor = nullptr;
  const int *row_terms = nullptr, *row_term = nullptr;
  const int32_t* slot = nullptr;
  int nslots = 0;
};
constexpr int kNarrowSlots = 8;  // most column slots a narrow job takes
int64_t narrow_lanes_f32();
void narrow_avg_backward_f32(const NarrowJob& job);

// q[i] = g[i] / d[i / group] for i < n, in float32 (g float32, bfloat16 or float16, widened exactly) or float64:
// one divisor for each group of channels (by vectors where groups are whole vectors; a divisor per element is
// pad_rows' job).
void divide_f32(const void* g, const float* d, float* q, int64_t n, int64_t group);
void divide_bf16(const void* g, const float* d, float* q, int64_t n, int64_t group);
void divide_f16(const void* g, const float* d, float* q, int64_t n, int64_t group);
void divide_f64(const void* g, const double* d, double* q, int64_t n, int64_t group);

// The rows of a plane as the row accumulation reads them: q row r (r < rows) at q + r * stride is `lo` zeros,
// then g[r * len + i] / d[r * len + i] for i < len (g itself where d is null), then zeros up to stride; in
// float32 (g float32, bfloat16 or float16) or float64.
void pad_rows_f32(const void* g, const float* d, float* q, int64_t rows, int64_t len, int64_t lo, int64_t stride);
void pad_rows_bf16(const void* g, const float* d, float* q, int64_t rows, int64_t len, int64_t lo, int64_t stride);
void pad_rows_f16(const void* g, const float* d, float* q, int64_t rows, int64_t len, int64_t lo, int64_t stride);
void pad_rows_f64(const void* g, const double* d, double* q, int64_t rows, int64_t len, int64_t lo, int64_t stride);

// out[p * cells + i] = value[p] for p < planes, i < cells (float32 or float64), with streaming stores when
// `stream` (the output too large for the cache and not read back soon: no read of its lines before writing).
// out[i] = sums[i] (16-bit: rounded as narrow_from_f32), then sums[i] = +0, for i < n; whole aligned vectors of
// out streamed past the cache where `stream`.
void drain_sums_f32(float* sums, float* out, int64_t n, bool stream);
void drain_sums_f64(double* sums, double* out, int64_t n, bool stream);
void drain_sums_bf16(float* sums, bfloat16* out, int64_t n, bool stream);
void drain_sums_f16(float* sums, float16* out, int64_t n, bool stream);
void fill_planes_f32(const float* value, int64_t planes, int64_t cells, float* out, bool stream);
void fill_planes_f64(const double* value, int64_t planes, int64_t cells, double* out, bool stream);

// A run of flat argmax values as window-local codes. Value k names the cell r = flat[k] - row - base[k] from its
// window's first tap; the window's taps lie pitch[a] apart along axis a (t, h, w), and r is tap (jt, jh, jw) when
// r = jt * pitch[0] + jh * pitch[1] + jw * pitch[2] with each j in [lo[a], hi[a]) (the taps inside the input for
// this run's outputs), whose code is (jt * kernel[1] + jh) * kernel[2] + jw. The caller makes the decomposition
// unique: each axis's pitch is above the reach of the axes after it, (kernel - 1) * pitch summed (an axis of one
// tap has pitch 1), and span, that reach of all three plus one, is at most 2^22; base[k] + row lies in
// [-2^30, 2^30]. out[k] in `form` (U8, I16 or I32); false when some value names no tap (out is then unspecified).
struct LocalCodeJob {
  const int64_t* flat = nullptr;
  const int32_t* base = nullptr;
  int64_t count = 0, row = 0, span = 0;
  int32_t kernel[3] = {1, 1, 1}, pitch[3] = {1, 1, 1}, lo[3] = {0, 0, 0}, hi[3] = {1, 1, 1};
  IndexForm form = IndexForm::I32;
  void* out = nullptr;
  // (one-byte codes of whole windows whose offsets stay below 255) the code of each offset r, or 255 where r is
  // no tap: a byte table look-up where the machine has one (VBMI), instead of a division per axis
  const uint8_t* table = nullptr;
};
// The code of offset r under j's window and bounds, or -1: one value as the kernel's vectors take them (a tap
// passed at a time: as many steps as the window's extent, where the window has that many cells to read).
inline int32_t local_code(const LocalCodeJob& j, int64_t r) {
  if (uint64_t(r) >= uint64_t(j.span)) return -1;
  int32_t code = 0;
  for (int a = 0; a < 3; ++a) {
    int32_t q = 0;
    for (; q + 1 < j.kernel[a] && r >= j.pitch[a]; ++q) r -= j.pitch[a];
    if (q < j.lo[a] || q >= j.hi[a]) return -1;
    code = code * j.kernel[a] + q;
  }
  return r == 0 ? code : -1;
}
bool flat_to_local_codes(const LocalCodeJob& job);

}  // namespace poolkit::cpu
