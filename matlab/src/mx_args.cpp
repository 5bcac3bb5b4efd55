#include "mx_args.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

namespace pkmex {

void bad(const std::string& arg, const std::string& rule, const char* id) { throw MexError{id, arg + ": " + rule}; }

std::string class_name(const mxArray* a) { return mxGetClassName(a); }

bool is_text(const mxArray* a) { return mxIsChar(a) && mxGetM(a) <= 1; }

std::string text(const mxArray* a, const char* arg) {
  if (!is_text(a)) bad(arg, "must be a character vector, got " + class_name(a));
  size_t n = mxGetNumberOfElements(a);
  std::string s(n + 1, '\0');
  mxGetString(a, s.data(), mwSize(n + 1));
  s.resize(n);
  return s;
}

static std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::vector<int64_t> dims_of(const mxArray* a) {
  const mwSize* d = mxGetDimensions(a);
  return std::vector<int64_t>(d, d + mxGetNumberOfDimensions(a));
}

void check_float_array(const mxArray* a, const char* arg) {
  mxClassID id = mxGetClassID(a);
  if (id != mxSINGLE_CLASS && id != mxDOUBLE_CLASS)
    bad(arg, "must be single or double, got " + class_name(a));
  if (mxIsSparse(a)) bad(arg, "must be a full (not sparse) array");
  if (mxIsComplex(a)) bad(arg, "must be real, got a complex array");
  if (mxIsEmpty(a)) bad(arg, "must not be empty");
}

std::vector<int64_t> int_values(const mxArray* a, const char* arg, int64_t min) {
  if (!mxIsNumeric(a) || mxIsComplex(a) || mxIsSparse(a))
    bad(arg, "must be real numbers, got " + std::string(mxIsComplex(a) ? "complex " : "") + class_name(a));
  size_t n = mxGetNumberOfElements(a);
  std::vector<int64_t> v(n);
  for (size_t i = 0; i < n; ++i) {
    double x;
    switch (mxGetClassID(a)) {
      case mxDOUBLE_CLASS: x = static_cast<const double*>(mxGetData(a))[i]; break;
      case mxSINGLE_CLASS: x = static_cast<const float*>(mxGetData(a))[i]; break;
      case mxINT8_CLASS: x = static_cast<const int8_t*>(mxGetData(a))[i]; break;
      case mxUINT8_CLASS: x = static_cast<const uint8_t*>(mxGetData(a))[i]; break;
      case mxINT16_CLASS: x = static_cast<const int16_t*>(mxGetData(a))[i]; break;
      case mxUINT16_CLASS: x = static_cast<const uint16_t*>(mxGetData(a))[i]; break;
      case mxINT32_CLASS: x = static_cast<const int32_t*>(mxGetData(a))[i]; break;
      case mxUINT32_CLASS: x = static_cast<const uint32_t*>(mxGetData(a))[i]; break;
      case mxINT64_CLASS: x = double(static_cast<const int64_t*>(mxGetData(a))[i]); break;
      case mxUINT64_CLASS: x = double(static_cast<const uint64_t*>(mxGetData(a))[i]); break;
      default: bad(arg, "must be numeric, got " + class_name(a));
    }
    if (!(x == std::floor(x)) || std::fabs(x) > 9.0e15) bad(arg, "must hold whole numbers");
    if (x < double(min)) bad(arg, "must be >= " + std::to_string(min) + ", got " + std::to_string(int64_t(x)));
    v[i] = int64_t(x);
  }
  return v;
}

bool flag(const mxArray* a, const char* arg) {
  if (mxGetNumberOfElements(a) != 1) bad(arg, "must be true or false (a scalar)");
  if (mxIsLogicalScalar(a)) return mxIsLogicalScalarTrue(a);
  std::vector<int64_t> v = int_values(a, arg, 0);
  if (v[0] > 1) bad(arg, "must be true or false (logical, 0 or 1)");
  return v[0] == 1;
}

Options parse_options(int n, const mxArray* const* args, const std::vector<std::string>& allowed) {
  Options o;
  if (n % 2) bad("name-value arguments", "must come in pairs (a name, then its value)");
  for (int i = 0; i < n; i += 2) {
    std::string name = lower(text(args[i], "option name"));
    const mxArray* v = args[i + 1];
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      bad("'" + name + "'", "is not an option of this function (options: " + list + ")");
    }
    if (name == "stride") {
      o.stride = v;
    } else if (name == "padding") {
      o.padding = v;
    } else if (name == "dataformat") {
      o.data_format = text(v, "DataFormat");
      for (char& c : o.data_format) {
        c = char(std::toupper(static_cast<unsigned char>(c)));
        if (c != 'S' && c != 'C' && c != 'B' && c != 'T' && c != 'U')
          bad("DataFormat", "letters must be S, C, B, T or U, got '" + std::string(1, c) + "'");
      }
    } else if (name == "poolformat") {
      o.pool_format = text(v, "PoolFormat");
      for (char& c : o.pool_format) {
        c = char(std::toupper(static_cast<unsigned char>(c)));
        if (c != 'S' && c != 'T') bad("PoolFormat", "letters must be S or T, got '" + std::string(1, c) + "'");
      }
    } else if (name == "indices") {
      o.indices = lower(text(v, "Indices"));
      if (o.indices != "linear" && o.indices != "compact")
        bad("Indices", "must be 'linear' or 'compact', got '" + o.indices + "'");
    } else if (name == "paddingvalue") {
      if (is_text(v) && lower(text(v, "PaddingValue")) == "mean") {
        o.padding_mean = true;
      } else if (mxIsNumeric(v) && !mxIsComplex(v) && mxGetNumberOfElements(v) == 1 && int_values(v, "PaddingValue", 0)[0] == 0) {
        o.padding_mean = false;
      } else {
        bad("PaddingValue", "must be 0 or 'mean'");
      }
    }
  }
  return o;
}

}  // namespace pkmex
