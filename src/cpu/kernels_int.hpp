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

}  // namespace poolkit::cpu
