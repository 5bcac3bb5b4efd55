#pragma once
// The subset of the MEX API that pkmex uses, implemented over Octave's own arrays, so that the SAME MEX source
// compiles into an Octave-native entry (pkmex_oct.cpp, built with -DPKMEX_OCTAVE). Why: Debian's Octave 7.3 is
// built without std::pmr, and its mex.cc then copies every MEX output element by element into a fresh array on
// return; here an output is an Octave array from the start and is returned as it is.
// Only what pkmex.cpp and mx_args.cpp call is here; everything lives in namespace pkmex, apart from Octave's
// own mxArray and mx* functions (which this file never includes).
#include <cstdint>
#include <string>
#include <vector>

#include <octave/oct.h>

namespace pkmex {

// Octave's mxtypes.h (through oct.h) gives mxClassID, mxComplexity, mwSize and mwIndex, as mex.h does.

// One argument or output: its class, dimensions, and (for real full numeric arrays) the address of its elements.
// An output is raw memory of the right type until value() makes it an Octave array, taking the memory over.
class mxArray {
 public:
  explicit mxArray(const octave_value& v);
  // A new real numeric array; its elements are zeros when `zero`, else left unwritten until the caller fills them.
  mxArray(mxClassID cls, const std::vector<mwSize>& dims, bool zero);
  ~mxArray();
  mxArray(const mxArray&) = delete;
  mxArray& operator=(const mxArray&) = delete;
  octave_value value();
  const std::string& class_name() const { return class_name_; }
  mxClassID class_id() const { return class_; }
  const std::vector<mwSize>& dims() const { return dims_; }
  size_t numel() const { return numel_; }
  void* data() const { return data_; }
  const octave_value& input() const { return value_; }

 private:
  octave_value value_;     // an argument's value; empty for an output until value()
  mxClassID class_ = mxUNKNOWN_CLASS;
  std::string class_name_;
  std::vector<mwSize> dims_;
  size_t numel_ = 0;
  void* data_ = nullptr;
  bool owned_ = false;     // data_ is an output's memory, not yet handed to an Octave array
};

inline mxClassID mxGetClassID(const mxArray* a) { return a->class_id(); }
inline const char* mxGetClassName(const mxArray* a) { return a->class_name().c_str(); }
inline void* mxGetData(const mxArray* a) { return a->data(); }
inline size_t mxGetNumberOfElements(const mxArray* a) { return a->numel(); }
inline mwSize mxGetNumberOfDimensions(const mxArray* a) { return mwSize(a->dims().size()); }
inline const mwSize* mxGetDimensions(const mxArray* a) { return a->dims().data(); }
inline size_t mxGetM(const mxArray* a) { return size_t(a->dims()[0]); }
inline size_t mxGetN(const mxArray* a) { return a->dims()[0] ? mxGetNumberOfElements(a) / size_t(a->dims()[0]) : 0; }
inline bool mxIsChar(const mxArray* a) { return a->input().is_string(); }
inline bool mxIsNumeric(const mxArray* a) { return a->input().isnumeric(); }
inline bool mxIsComplex(const mxArray* a) { return a->input().iscomplex(); }
inline bool mxIsSparse(const mxArray* a) { return a->input().issparse(); }
inline bool mxIsEmpty(const mxArray* a) { return a->input().isempty(); }
inline bool mxIsLogicalScalar(const mxArray* a) { return a->input().islogical() && a->numel() == 1; }
inline bool mxIsLogicalScalarTrue(const mxArray* a) { return mxIsLogicalScalar(a) && a->input().is_true(); }
int mxGetString(const mxArray* a, char* buf, mwSize n);

inline mxArray* mxCreateNumericArray(mwSize n, const mwSize* d, mxClassID cls, mxComplexity) {
  return new mxArray(cls, std::vector<mwSize>(d, d + n), true);
}
inline mxArray* mxCreateUninitNumericArray(mwSize n, const mwSize* d, mxClassID cls, mxComplexity) {
  return new mxArray(cls, std::vector<mwSize>(d, d + n), false);
}
inline void mxDestroyArray(mxArray* a) { delete a; }

}  // namespace pkmex
