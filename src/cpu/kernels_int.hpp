#pragma once
// Max forward kernels of the integer dtypes (kernels_int.cpp), on the ForwardJob contract of kernels.hpp: lanes
// as there (unit, pair and whole-group vector loads, the rest scalar), every row of the job, the argmax in any
// form. Integers have no NaN: a tap replaces the maximum where it is greater, so the first maximum wins.
#include "kernels.hpp"

namespace poolkit::cpu {

void max_forward_u8(const ForwardJob& job);
void max_forward_i8(const ForwardJob& job);
void max_forward_i16(const ForwardJob& job);
void max_forward_i32(const ForwardJob& job);
void max_forward_i64(const ForwardJob& job);

// 3x3 stride-2 max of a channels-first plane without an argmax, or with the one-byte one or int64 flat indices
// (j.flat) for 8-bit types (K3S2ForwardJob; row_max gives room for width + 2 vectors + 3 values of the type, for
// the argmax of bytes three times that and 2 (out_w + 64) more for the kept row: its 2 (out_w + 64) 8-byte words
// do, as 2 out_w >= width - 3; flat indices take a row of codes, out_w + 64 bytes, in row_code). False where it
// does not apply (another argmax, or no vectors on this target; flat indices: fewer than 16 int32 lanes).
bool k3s2_max_forward_int(DType t, const K3S2ForwardJob& job);

// Int64 flat indices in a plane from the one-byte 3x3 stride-2 codes of its output rows (code c: tap row c / 3,
// column c % 3), for the float kernels, which write the codes: flat[oh * row + ow] = (2 oh - pad_h + c / 3) width
// + 2 ow - pad_w + c % 3 for oh < out_h, ow < out_w. codes has 16 bytes of room past its last row; the plane's
// cells fit int32. Streaming stores where `stream` (flat 64-byte aligned, out_w and row multiples of 8); a scalar
// loop on targets of fewer than 16 int32 lanes.
struct K3S2FlatJob {
  const uint8_t* codes = nullptr;
  int64_t* flat = nullptr;
  int64_t row = 0;  // elements between rows, of codes and of flat
  int64_t out_h = 0, out_w = 0, width = 0, pad_h = 0, pad_w = 0;
  bool stream = false;
};
void k3s2_flat_rows(const K3S2FlatJob& j);
// Code c's input cell less its window's first cell, in a plane `width` cells wide.
inline int64_t k3s2_code_offset(int64_t c, int64_t width) { return c / 3 * width + c % 3; }

// 2x2 stride-2 max over channels-first planes of 8-bit types 32 cells wide, with the one-byte argmax or none
// (am null), the planes' rows back to back (an even number a plane): output row r's two input rows are
// x[64 r, 64 r + 64), its 16 outputs y[16 r, 16 r + 16) and their codes am[16 r, 16 r + 16). Streaming stores
// where `stream` (and aligned). False on targets without 32-byte vectors.
struct Rows32Job {
  const void* x = nullptr;
  void* y = nullptr;
  uint8_t* am = nullptr;  // null: no argmax
  int64_t rows = 0;
  bool stream = false;
};
bool rows32_max_forward_int(DType t, const Rows32Job& j);  // t: u8 or i8

}  // namespace poolkit::cpu
