// The one MEX entry point of poolkit for MATLAB and GNU Octave: pkmex(op, ...), called by the .m wrappers in
// +poolkit. Uses only the MEX API both share. No C++ exception leaves mexFunction: every error is caught, all
// C++ objects are released, and only then mexErrMsgIdAndTxt is called.
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>

#include "pkmex.hpp"
#include "block_scatter.hpp"
#include "linear_index.hpp"
#include "pool_plan.hpp"
#include "retain_memory.hpp"
#include "poolkit/error.hpp"
#include "poolkit/memory.hpp"
#include "poolkit/ops.hpp"
#include "window_index.hpp"

namespace pkmex {
namespace {

using poolkit::DType;

// The output arrays of one call, destroyed unless handed to MATLAB.
struct Outputs {
  std::vector<mxArray*> arrays;
  mxArray* add(mxArray* a) {
    if (!a) throw std::bad_alloc();
    arrays.push_back(a);
    return a;
  }
  ~Outputs() { for (mxArray* a : arrays) mxDestroyArray(a); }
  void release(mxArray** plhs) {
    for (size_t i = 0; i < arrays.size(); ++i) plhs[i] = arrays[i];
    arrays.clear();
  }
};

DType float_dtype(const mxArray* a) { return mxGetClassID(a) == mxSINGLE_CLASS ? DType::f32 : DType::f64; }

mxArray* uninit(const std::vector<int64_t>& dims, mxClassID cls) {
  auto d = mw_dims(dims);
  return mxCreateUninitNumericArray(mwSize(d.size()), d.data(), cls, mxREAL);
}
mxArray* zeros(const std::vector<int64_t>& dims, mxClassID cls) {
  auto d = mw_dims(dims);
  return mxCreateNumericArray(mwSize(d.size()), d.data(), cls, mxREAL);
}

mxClassID class_of(DType t) {
  switch (t) {
    case DType::u8: return mxUINT8_CLASS;
    case DType::i16: return mxINT16_CLASS;
    case DType::i32: return mxINT32_CLASS;
    default: return mxDOUBLE_CLASS;
  }
}
DType dtype_of_class(mxClassID c) {
  return c == mxUINT8_CLASS ? DType::u8 : c == mxINT16_CLASS ? DType::i16 : DType::i32;
}

bool is_compact(const mxArray* indx) {
  mxClassID c = mxGetClassID(indx);
  return c == mxUINT8_CLASS || c == mxINT16_CLASS || c == mxINT32_CLASS;
}

// indx in MATLAB's form: real double (each entry is checked where it is used: linear_index.hpp).
const double* linear_indices(const mxArray* indx) {
  if (mxGetClassID(indx) != mxDOUBLE_CLASS || mxIsComplex(indx) || mxIsSparse(indx))
    bad("indx", "must be real double linear indices (or the compact form of 'Indices','compact'), got " +
                    class_name(indx));
  return static_cast<const double*>(mxGetData(indx));
}
// The slabs a linear scatter tries first (linear_index.hpp): the output's last dimension of size > 1, the
// batches of 'SSCB'.
int64_t outer_slabs(const std::vector<int64_t>& size) {
  for (auto it = size.rbegin(); it != size.rend(); ++it)
    if (*it > 1) return *it;
  return 1;
}

void check_linear(int64_t first_bad, int64_t limit) {
  if (first_bad >= 0)
    bad("indx", "entry " + std::to_string(first_bad + 1) + " is not a linear index in 1.." + std::to_string(limit),
        "poolkit:badIndex");
}

// Calls f(T*) with the elements of a single or double array.
template <class F>
void with_float(const mxArray* a, F&& f) {
  if (mxGetClassID(a) == mxSINGLE_CLASS) f(static_cast<float*>(mxGetData(a)));
  else f(static_cast<double*>(mxGetData(a)));
}

// poolkit's max_pool_backward on compact indices: dx = 0, dx(window cell of each tap) += dy. The core calls the
// taps 'argmax'; to the user they are indx.
void route_taps(const Plan& p, const mxArray* dy, const mxArray* indx, const mxArray* dx) {
  DType t = float_dtype(dy);
  try {
    poolkit::max_pool_backward(p.g, p.y_view(mxGetData(dy), t),
                               p.y_view(mxGetData(indx), dtype_of_class(mxGetClassID(indx))), {},
                               p.x_view(mxGetData(dx), t));
  } catch (const poolkit::Error& e) {
    if (e.kind() != poolkit::ErrorKind::Index) throw;
    bad("indx", std::string("holds a tap outside its window or in the padding (") + e.what() + ")",
        "poolkit:badIndex");
  }
}

// Whether no two windows share an input cell (then scattering a window's maximum is its gradient's routing).
bool disjoint_windows(const poolkit::Geometry& g) {
  for (int a = 0; a < g.rank; ++a) {
    const poolkit::Axis& x = g.axes[a];
    if (x.out > 1 && (x.kernel - 1) * x.dilation + 1 > x.stride) return false;
  }
  return true;
}

// Compact indices for plan p: the class poolkit stores for its window size, one per output cell.
void check_compact(const mxArray* indx, const Plan& p) {
  DType want = poolkit::local_argmax_dtype(p.g);
  if (mxGetClassID(indx) != class_of(want))
    bad("indx", std::string("compact indices of this window must be ") +
                    (want == DType::u8 ? "uint8" : want == DType::i16 ? "int16" : "int32") + ", got " +
                    class_name(indx));
  if (int64_t(mxGetNumberOfElements(indx)) != p.ynumel)
    bad("indx", "must have one entry per pooled output (" + std::to_string(p.ynumel) + "), got " +
                    std::to_string(mxGetNumberOfElements(indx)));
}

[[noreturn]] void bad_tap() { bad("indx", "holds a tap outside its window or in the padding", "poolkit:badIndex"); }

template <class F>
void dispatch_taps(const mxArray* indx, F&& f) {
  switch (mxGetClassID(indx)) {
    case mxUINT8_CLASS: f(static_cast<const uint8_t*>(mxGetData(indx))); break;
    case mxINT16_CLASS: f(static_cast<const int16_t*>(mxGetData(indx))); break;
    default: f(static_cast<const int32_t*>(mxGetData(indx))); break;
  }
}

void check_numel(const mxArray* a, int64_t n, const char* arg, const char* what) {
  if (int64_t(mxGetNumberOfElements(a)) != n)
    bad(arg, std::string("must have ") + what + " (" + std::to_string(n) + " elements), got " +
                 std::to_string(mxGetNumberOfElements(a)));
}

// dst(indx) = src from compact indices, serially: where windows overlap, the last output in X's order wins, as
// Z(indx) = X does.
template <class T>
void scatter_by_index(const WindowIndex& wi, const mxArray* indx, const T* src, T* dst) {
  bool invalid = false;
  dispatch_taps(indx, [&](auto taps) {
    wi.for_each(taps, false, [&](int64_t y, int64_t x) {
      if (x < 0) invalid = true;
      else dst[x] = src[y];
    });
  });
  if (invalid) bad_tap();
}

// [Y, indx] = maxpool(X, poolsize, options...)
void maxpool(int nlhs, mxArray** plhs, int nrhs, const mxArray** prhs, Outputs& out) {
  if (nrhs < 2) bad("maxpool", "needs X and poolsize");
  const mxArray* X = prhs[0];
  check_float_array(X, "X");
  Options o = parse_options(nrhs - 2, prhs + 2, {"stride", "padding", "dataformat", "poolformat", "indices"});
  Plan p = make_plan(dims_of(X), prhs[1], o);
  DType t = float_dtype(X);
  mxArray* Y = out.add(uninit(p.ydims, mxGetClassID(X)));
  poolkit::TensorView xv = p.x_view(mxGetData(X), t), yv = p.y_view(mxGetData(Y), t);
  if (nlhs < 2) {
    poolkit::max_pool_forward(p.g, xv, yv, {});
  } else {
    DType at = poolkit::local_argmax_dtype(p.g);
    if (o.indices == "compact") {
      mxArray* A = out.add(uninit(p.ydims, class_of(at)));
      poolkit::max_pool_forward(p.g, xv, yv, p.y_view(mxGetData(A), at));
    } else {
      mxArray* I = out.add(uninit(p.ydims, mxDOUBLE_CLASS));
      double* ix = static_cast<double*>(mxGetData(I));
      // The compact form (the fast forward's), then MATLAB's indices from it in one pass (WindowIndex::linear).
      // The taps live in the core's cached memory: warm pages from the second call on.
      size_t width = at == DType::u8 ? 1 : at == DType::i16 ? 2 : 4;
      std::unique_ptr<void, void (*)(void*)> taps(poolkit::allocate(size_t(p.ynumel) * width), poolkit::release);
      poolkit::max_pool_forward(p.g, xv, yv, p.y_view(taps.get(), at));
      WindowIndex wi(p);
      if (at == DType::u8) wi.linear(static_cast<const uint8_t*>(taps.get()), ix);
      else if (at == DType::i16) wi.linear(static_cast<const int16_t*>(taps.get()), ix);
      else wi.linear(static_cast<const int32_t*>(taps.get()), ix);
    }
  }
  out.release(plhs);
}

// Y = avgpool(X, poolsize, options...)
void avgpool(int, mxArray** plhs, int nrhs, const mxArray** prhs, Outputs& out) {
  if (nrhs < 2) bad("avgpool", "needs X and poolsize");
  const mxArray* X = prhs[0];
  check_float_array(X, "X");
  Options o = parse_options(nrhs - 2, prhs + 2, {"stride", "padding", "dataformat", "poolformat", "paddingvalue"});
  Plan p = make_plan(dims_of(X), prhs[1], o);
  DType t = float_dtype(X);
  mxArray* Y = out.add(uninit(p.ydims, mxGetClassID(X)));
  poolkit::avg_pool_forward(p.g, poolkit::AvgOptions{!o.padding_mean, {}}, p.x_view(mxGetData(X), t),
                            p.y_view(mxGetData(Y), t));
  out.release(plhs);
}

// dX = avgpool_backward(dY, inputSize, poolsize, options...)
void avgpool_backward(int, mxArray** plhs, int nrhs, const mxArray** prhs, Outputs& out) {
  if (nrhs < 3) bad("avgpool_backward", "needs dY, inputSize and poolsize");
  const mxArray* dY = prhs[0];
  check_float_array(dY, "dY");
  Options o = parse_options(nrhs - 3, prhs + 3, {"stride", "padding", "dataformat", "poolformat", "paddingvalue"});
  Plan p = make_plan(int_values(prhs[1], "inputSize", 1), prhs[2], o);
  check_numel(dY, p.ynumel, "dY", "the size of the pooled output");
  DType t = float_dtype(dY);
  mxArray* dX = out.add(uninit(p.xdims, mxGetClassID(dY)));
  poolkit::avg_pool_backward(p.g, poolkit::AvgOptions{!o.padding_mean, {}}, p.y_view(mxGetData(dY), t),
                             p.x_view(mxGetData(dX), t));
  out.release(plhs);
}

// Z = maxunpool(X, indx, outputSize [, poolsize, options...]): Z = zeros(outputSize); Z(indx) = X.
void maxunpool(int, mxArray** plhs, int nrhs, const mxArray** prhs, Outputs& out) {
  if (nrhs < 3) bad("maxunpool", "needs X, indx and outputSize");
  const mxArray *X = prhs[0], *indx = prhs[1];
  check_float_array(X, "X");
  std::vector<int64_t> size = int_values(prhs[2], "outputSize", 0);
  mxClassID cls = mxGetClassID(X);
  if (!is_compact(indx)) {
    check_numel(indx, int64_t(mxGetNumberOfElements(X)), "indx", "one entry per element of X");
    int64_t n = 1;
    for (int64_t s : size) n *= s;
    const double* ix = linear_indices(indx);
    mxArray* Z = out.add(uninit(size, cls));
    with_float(X, [&](auto* x) {
      auto* z = static_cast<decltype(x)>(mxGetData(Z));
      if (!scatter_blocks<false>(ix, x, z, dims_of(X), size))
        check_linear(scatter_linear<false>(ix, int64_t(mxGetNumberOfElements(X)), x, z, n, outer_slabs(size)), n);
    });
  } else {
    if (nrhs < 4) bad("maxunpool", "compact indices need the pooling's poolsize and options");
    Options o = parse_options(nrhs - 4, prhs + 4, {"stride", "padding", "dataformat", "poolformat"});
    Plan p = make_plan(size, prhs[3], o);
    check_compact(indx, p);
    check_numel(X, p.ynumel, "X", "the size of the pooled output");
    if (disjoint_windows(p.g)) {  // each cell of Z is written by at most one window: the gradient's routing
      route_taps(p, X, indx, out.add(uninit(p.xdims, cls)));
      out.release(plhs);
      return;
    }
    mxArray* Z = out.add(zeros(p.xdims, cls));
    WindowIndex wi(p);
    with_float(X, [&](auto* x) { scatter_by_index(wi, indx, x, static_cast<decltype(x)>(mxGetData(Z))); });
  }
  out.release(plhs);
}

// dX = maxunpool_backward(dZ, indx [, poolsize, options...]): dX = dZ(indx), shaped like indx.
void maxunpool_backward(int, mxArray** plhs, int nrhs, const mxArray** prhs, Outputs& out) {
  if (nrhs < 2) bad("maxunpool_backward", "needs dZ and indx");
  const mxArray *dZ = prhs[0], *indx = prhs[1];
  check_float_array(dZ, "dZ");
  mxClassID cls = mxGetClassID(dZ);
  if (!is_compact(indx)) {
    const double* ix = linear_indices(indx);
    int64_t n = int64_t(mxGetNumberOfElements(dZ));
    mxArray* dX = out.add(uninit(dims_of(indx), cls));
    with_float(dZ, [&](auto* dz) {
      auto* dx = static_cast<decltype(dz)>(mxGetData(dX));
      if (!gather_blocks(ix, dz, dx, dims_of(indx), dims_of(dZ)))
        check_linear(gather_linear(ix, int64_t(mxGetNumberOfElements(indx)), dz, dx, n), n);
    });
  } else {
    if (nrhs < 3) bad("maxunpool_backward", "compact indices need the pooling's poolsize and options");
    Options o = parse_options(nrhs - 3, prhs + 3, {"stride", "padding", "dataformat", "poolformat"});
    Plan p = make_plan(dims_of(dZ), prhs[2], o);
    check_compact(indx, p);
    mxArray* dX = out.add(uninit(p.ydims, cls));
    WindowIndex wi(p);
    bool ok = true;
    with_float(dZ, [&](auto* dz) {
      dispatch_taps(indx, [&](auto taps) { ok = wi.gather(taps, dz, static_cast<decltype(dz)>(mxGetData(dX))); });
    });
    if (!ok) bad_tap();
  }
  out.release(plhs);
}

// dX = maxpool_backward(dY, indx, inputSize [, poolsize, options...]): dX = zeros(inputSize); dX(indx) += dY.
void maxpool_backward(int, mxArray** plhs, int nrhs, const mxArray** prhs, Outputs& out) {
  if (nrhs < 3) bad("maxpool_backward", "needs dY, indx and inputSize");
  const mxArray *dY = prhs[0], *indx = prhs[1];
  check_float_array(dY, "dY");
  std::vector<int64_t> size = int_values(prhs[2], "inputSize", 1);
  mxClassID cls = mxGetClassID(dY);
  if (!is_compact(indx)) {
    check_numel(indx, int64_t(mxGetNumberOfElements(dY)), "indx", "one entry per element of dY");
    int64_t n = 1;
    for (int64_t s : size) n *= s;
    const double* ix = linear_indices(indx);
    mxArray* dX = out.add(uninit(size, cls));
    with_float(dY, [&](auto* dy) {
      auto* dx = static_cast<decltype(dy)>(mxGetData(dX));
      if (!scatter_blocks<true>(ix, dy, dx, dims_of(dY), size))
        check_linear(scatter_linear<true>(ix, int64_t(mxGetNumberOfElements(dY)), dy, dx, n, outer_slabs(size)), n);
    });
  } else {
    if (nrhs < 4) bad("maxpool_backward", "compact indices need the pooling's poolsize and options");
    Options o = parse_options(nrhs - 4, prhs + 4, {"stride", "padding", "dataformat", "poolformat"});
    Plan p = make_plan(size, prhs[3], o);
    check_compact(indx, p);
    check_numel(dY, p.ynumel, "dY", "the size of the pooled output");
    route_taps(p, dY, indx, out.add(uninit(p.xdims, cls)));
  }
  out.release(plhs);
}

// retain_memory(tf): see retain_memory.hpp.
void retain_memory(int, mxArray**, int nrhs, const mxArray** prhs, Outputs&) {
  if (nrhs != 1) bad("retain_memory", "takes one argument, true or false");
  bool on = flag(prhs[0], "tf");
  if (!retain_freed_memory(on))
    bad("retain_memory", "this C library cannot be told to keep freed memory (glibc's mallopt only)",
        "poolkit:notSupported");
}

// n = block_scatters(), block_gathers() (block_scatter.hpp) or pair_gathers() (WindowIndex::gather): how many calls in this
// process took that route (the tests' view of it).
template <int64_t (*Count)()>
void route_count(int, mxArray** plhs, int nrhs, const mxArray**, Outputs& out) {
  if (nrhs != 0) bad("pkmex", "a route's count takes no arguments");
  mxArray* n = out.add(uninit({1, 1}, mxDOUBLE_CLASS));
  *static_cast<double*>(mxGetData(n)) = double(Count());
  out.release(plhs);
}

const char* error_id(poolkit::ErrorKind k) {
  switch (k) {
    case poolkit::ErrorKind::Index: return "poolkit:badIndex";
    case poolkit::ErrorKind::Overflow: return "poolkit:tooLarge";
    default: return "poolkit:badInput";
  }
}

}  // namespace

bool run(int nlhs, mxArray** plhs, int nrhs, const mxArray** prhs, MexError& err) {
  try {
    Outputs out;
    if (nrhs < 1 || !is_text(prhs[0])) bad("pkmex", "the first argument must name the operation");
    std::string op = text(prhs[0], "operation");
    using Fn = void (*)(int, mxArray**, int, const mxArray**, Outputs&);
    Fn fn = op == "maxpool"              ? maxpool
            : op == "avgpool"            ? avgpool
            : op == "maxunpool"          ? maxunpool
            : op == "maxpool_backward"   ? maxpool_backward
            : op == "avgpool_backward"   ? avgpool_backward
            : op == "maxunpool_backward" ? maxunpool_backward
            : op == "retain_memory"      ? retain_memory
            : op == "block_scatters"     ? route_count<block_scatters>
            : op == "block_gathers"      ? route_count<block_gathers>
            : op == "pair_gathers"       ? route_count<pair_gathers>
                                         : nullptr;
    if (!fn) bad("pkmex", "unknown operation '" + op + "'");
    fn(nlhs, plhs, nrhs - 1, prhs + 1, out);
    return true;
  } catch (const MexError& e) {
    err = e;
  } catch (const poolkit::Error& e) {
    err = {error_id(e.kind()), e.what()};
  } catch (const std::bad_alloc&) {
    err = {"poolkit:outOfMemory", "out of memory"};
  } catch (const std::exception& e) {
    err = {"poolkit:internal", e.what()};
  }
  return false;
}

}  // namespace pkmex

#if !defined(PKMEX_OCTAVE)  // (Octave's native entry is pkmex_oct.cpp)
void mexFunction(int nlhs, mxArray* plhs[], int nrhs, const mxArray* prhs[]) {
  char id[64] = "", message[1024] = "";
  try {
    pkmex::MexError err;
    if (pkmex::run(nlhs, plhs, nrhs, prhs, err)) return;
    std::snprintf(id, sizeof id, "%s", err.id.c_str());
    std::snprintf(message, sizeof message, "%s", err.message.c_str());
  } catch (...) {  // e.g. no memory left to copy the message
    std::snprintf(id, sizeof id, "poolkit:internal");
    std::snprintf(message, sizeof message, "poolkit: an error could not be reported");
  }  // err's strings are released here; only plain buffers remain for the error call, which does not return
  mexErrMsgIdAndTxt(id, "%s", message);
}
#endif
