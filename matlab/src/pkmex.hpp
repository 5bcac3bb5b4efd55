#pragma once
// pkmex's one call, shared by the MEX entry (mexFunction, in pkmex.cpp) and Octave's native entry (pkmex_oct.cpp).
#include "mx_args.hpp"

namespace pkmex {

// Runs pkmex(op, ...): prhs[0] names the operation. On success plhs holds the outputs (the caller owns them);
// on failure err holds the error's identifier and message, and every C++ object of the call is released.
bool run(int nlhs, mxArray** plhs, int nrhs, const mxArray** prhs, MexError& err);

}  // namespace pkmex
