#pragma once
// Reading MATLAB/Octave arguments with the MEX API that both share. Every rejected argument throws MexError,
// which mexFunction turns into a MATLAB error after every C++ object is released.
#include <cstdint>
#include <string>
#include <vector>

#if defined(PKMEX_OCTAVE)
#include "mx_octave.hpp"  // Octave's native entry: the same calls over Octave's own arrays
#else
#include "mex.h"
#endif

namespace pkmex {

struct MexError {
  std::string id;  // e.g. poolkit:badInput
  std::string message;
};
[[noreturn]] void bad(const std::string& arg, const std::string& rule, const char* id = "poolkit:badInput");

std::string class_name(const mxArray* a);
std::string text(const mxArray* a, const char* arg);  // a char row vector
bool is_text(const mxArray* a);
// Dimensions as MATLAB reports them (at least two).
std::vector<int64_t> dims_of(const mxArray* a);
// X, dY, dZ: real, dense, non-empty single or double.
void check_float_array(const mxArray* a, const char* arg);
// Integer-valued real numbers, each >= min (poolsize, stride, padding, sizes).
std::vector<int64_t> int_values(const mxArray* a, const char* arg, int64_t min);
// A true/false scalar: logical, or a number that is 0 or 1.
bool flag(const mxArray* a, const char* arg);

// The name-value options of every function, read once; which ones a function accepts is its `allowed` list.
struct Options {
  const mxArray* stride = nullptr;
  const mxArray* padding = nullptr;
  std::string data_format;          // required: one letter per dimension of X
  std::string pool_format = "S";    // the labels pooled over
  std::string indices = "linear";   // maxpool: 'linear' (MATLAB's) or 'compact' (window-local tap)
  bool padding_mean = false;        // avgpool: 'PaddingValue', 'mean'
};
Options parse_options(int n, const mxArray* const* args, const std::vector<std::string>& allowed);

}  // namespace pkmex
