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

// 3x3 stride-2 max of a channels-first plane without an argmax, or with the one-byte one for 8-bit types
// (K3S2ForwardJob; row_max gives room for width + 2 vectors + 3 values of the type, three times that for the
// argmax of bytes: its 2 (out_w + 64) 8-byte words do, as 2 out_w >= width - 3). False where it does not apply
// (another argmax, or no vectors on this target).
bool k3s2_max_forward_int(DType t, const K3S2ForwardJob& job);

}  // namespace poolkit::cpu
