// Fuzzes every operator: bytes become an operator, a geometry (every convention), N and C (zero included), a
// dtype, a layout and the tensor contents; sometimes one argument is made invalid on purpose. Checks:
// - a valid request succeeds in poolkit::NAME and poolkit::ref::NAME, an invalid one raises poolkit::Error in
//   both (any other exception, a sanitizer report or a crash is a finding);
// - poolkit::NAME (the fast path where it applies) matches the reference: bit for bit for the max family,
//   argmax, unpooling and stochastic pooling in training, within a tolerance for sums;
// - two runs with outputs poisoned differently give the same bits (every cell written, nothing else touched);
// - the reference on the fuzzed layout equals the reference on channels-first copies, bit for bit.
#include <fuzzer/FuzzedDataProvider.h>

#include <cmath>
#include <optional>
#include <string>

#include "fuzz_check.hpp"
#include "poolkit/error.hpp"
#include "poolkit/ops.hpp"
#include "tensors.hpp"

using namespace poolkit;
using fuzz::Buffer;

namespace {

enum Op { MaxF, MaxB, AvgF, AvgB, LpF, LpB, MixF, MixB, StoF, StoB, FracF, FracB, UnpF, UnpB, NumOps };
const char* kOpNames[] = {"max_fwd", "max_bwd", "avg_fwd", "avg_bwd", "lp_fwd", "lp_bwd", "mixed_fwd",
                          "mixed_bwd", "stochastic_fwd", "stochastic_bwd", "fractional_fwd", "fractional_bwd",
                          "unpool_fwd", "unpool_bwd"};

std::vector<int64_t> small_list(FuzzedDataProvider& f, size_t rank, int64_t lo, int64_t hi) {
  std::vector<int64_t> v(f.ConsumeBool() ? 1 : rank);
  for (auto& x : v) x = f.ConsumeIntegralInRange<int64_t>(lo, hi);
  return v;
}

Geometry decode_geometry(FuzzedDataProvider& f, bool fractional) {
  size_t rank = f.ConsumeIntegralInRange<size_t>(1, 3);
  std::vector<int64_t> in(rank);
  for (auto& v : in) v = f.ConsumeIntegralInRange<int64_t>(1, 9);
  if (fractional) {
    std::vector<int64_t> out(rank);
    for (auto& v : out) v = f.ConsumeIntegralInRange<int64_t>(1, 6);
    return fractional_geometry(in, out, small_list(f, rank, 1, 3), f.ConsumeBool());
  }
  bool ceil_mode = f.ConsumeBool();
  switch (f.ConsumeIntegralInRange<int>(0, 6)) {
    case 0:
      return torch_geometry(in, small_list(f, rank, 1, 4), f.ConsumeBool() ? std::vector<int64_t>{} : small_list(f, rank, 1, 3),
                            small_list(f, rank, 0, 2), small_list(f, rank, 1, 3), ceil_mode);
    case 1:
      return keras_geometry(in, small_list(f, rank, 1, 4), small_list(f, rank, 1, 3), f.ConsumeBool() ? "same" : "valid");
    case 2: {
      OnnxParams p;
      p.kernel_shape = small_list(f, rank, 1, 4);
      p.kernel_shape.resize(rank, p.kernel_shape[0]);
      p.strides = small_list(f, rank, 1, 3);
      p.dilations = small_list(f, rank, 1, 3);
      const char* modes[] = {"NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"};
      p.auto_pad = modes[f.ConsumeIntegralInRange<int>(0, 3)];
      if (p.auto_pad == std::string("NOTSET")) p.pads = small_list(f, 2 * rank, 0, 2);
      if (p.pads.size() == 1) p.pads.resize(2 * rank, p.pads[0]);
      p.ceil_mode = ceil_mode;
      return onnx_geometry(in, p);
    }
    case 3: {
      RegularParams p{small_list(f, rank, 1, 4), small_list(f, rank, 1, 3), small_list(f, rank, 1, 3),
                      small_list(f, rank, 0, 3), small_list(f, rank, 0, 3), ceil_mode};
      return regular_geometry(in, p);
    }
    case 4: {
      std::vector<int64_t> out(rank);
      for (auto& v : out) v = f.ConsumeIntegralInRange<int64_t>(1, 10);
      return adaptive_geometry(in, out);
    }
    default: return global_geometry(in);
  }
}

Shape with_spatial(int64_t n, int64_t c, const std::vector<int64_t>& sp) {
  std::vector<int64_t> d{n, c};
  d.insert(d.end(), sp.begin(), sp.end());
  return Shape(d);
}

// One fuzzed request: its tensors (in the fuzzed layout) and options.
struct Request {
  Op op;
  Geometry g;
  DType dt = DType::f32;
  fuzz::LayoutKind layout = fuzz::LayoutKind::ChannelsFirst;
  Buffer x, y, argmax, dy, dx, samples, indices;  // an unused role has an undefined view
  AvgOptions avg;
  LpOptions lp;
  MixedOptions mixed;
  StochasticOptions sto;
  bool want_dlambda = false;
  bool must_fail = false;  // an argument was made invalid on purpose
  std::string broken;      // which, for the report
};

bool is_backward(Op op) { return op % 2 == 1; }

// The output roles of an operator.
std::vector<Buffer*> outputs(Request& r) {
  if (r.op == MaxF || r.op == FracF) return {&r.y, &r.argmax};
  if (r.op == UnpF) return {&r.y};
  if (is_backward(r.op)) return {&r.dx};
  return {&r.y};
}

// Runs r through poolkit::NAME (fast = true) or poolkit::ref::NAME.
void call(const Request& r, bool fast, double* dlambda) {
  const Geometry& g = r.g;
  const TensorView &x = r.x.view, &y = r.y.view, &am = r.argmax.view, &dy = r.dy.view, &dx = r.dx.view;
  const TensorView &s = r.samples.view, &idx = r.indices.view;
#define PK_CALL(name, ...) (fast ? poolkit::name(__VA_ARGS__) : poolkit::ref::name(__VA_ARGS__))
  switch (r.op) {
    case MaxF: PK_CALL(max_pool_forward, g, x, y, am); break;
    case MaxB: PK_CALL(max_pool_backward, g, dy, am, x, dx); break;
    case AvgF: PK_CALL(avg_pool_forward, g, r.avg, x, y); break;
    case AvgB: PK_CALL(avg_pool_backward, g, r.avg, dy, dx); break;
    case LpF: PK_CALL(lp_pool_forward, g, r.lp, x, y); break;
    case LpB: PK_CALL(lp_pool_backward, g, r.lp, dy, x, dx); break;
    case MixF: PK_CALL(mixed_pool_forward, g, r.mixed, x, y); break;
    case MixB: PK_CALL(mixed_pool_backward, g, r.mixed, dy, x, dx, dlambda); break;
    case StoF: PK_CALL(stochastic_pool_forward, g, r.sto, x, y); break;
    case StoB: PK_CALL(stochastic_pool_backward, g, r.sto, dy, x, dx); break;
    case FracF: PK_CALL(fractional_max_pool_forward, g, s, x, y, am); break;
    case FracB: PK_CALL(fractional_max_pool_backward, g, s, dy, am, x, dx); break;
    case UnpF: PK_CALL(max_unpool_forward, x, idx, y); break;
    case UnpB: PK_CALL(max_unpool_backward, dy, idx, dx); break;
    case NumOps: break;
  }
#undef PK_CALL
}

DType local_dtype_or_wider(const Geometry& g, FuzzedDataProvider& f) {
  DType need = local_argmax_dtype(g);
  if (need == DType::u8 && f.ConsumeBool()) return DType::i16;
  if (need != DType::i32 && f.ConsumeIntegralInRange<int>(0, 3) == 0) return DType::i32;
  return need;
}

// Builds the tensors of a valid request; returns false when the sizes are too large to be worth running.
bool build(Request& r, FuzzedDataProvider& f) {
  r.g = decode_geometry(f, r.op == FracF || r.op == FracB);
  if (r.g.plane_in() > 2048 || r.g.plane_out() > 2048) return false;
  int64_t N = f.ConsumeIntegralInRange<int64_t>(0, 3), C = f.ConsumeIntegralInRange<int64_t>(0, 3);
  if (N * C * (r.g.plane_in() + r.g.plane_out()) > 6000) return false;
  const DType floats[] = {DType::f32, DType::f64, DType::bf16, DType::f16};
  r.dt = floats[f.ConsumeIntegralInRange<int>(0, 3)];
  r.layout = fuzz::LayoutKind(f.ConsumeIntegralInRange<int>(0, 2));
  Shape in = with_spatial(N, C, r.g.input_size()), out = with_spatial(N, C, r.g.output_size());
  auto make = [&](DType t, const Shape& s) { return fuzz::make(t, s, r.layout, f); };

  // Options, within their valid ranges.
  r.avg.count_include_pad = f.ConsumeBool();
  if (f.ConsumeIntegralInRange<int>(0, 3) == 0) r.avg.divisor_override = f.ConsumeIntegralInRange<int64_t>(1, 7);
  const double ps[] = {1, 2, 3, 0.5, 1.5, 4};
  r.lp.p = ps[f.ConsumeIntegralInRange<int>(0, 5)];
  r.lp.convention = f.ConsumeBool() ? LpConvention::Onnx : LpConvention::Torch;
  const double lambdas[] = {0, 0.25, 0.5, 1, -0.5, 1.5};
  r.mixed.lambda = lambdas[f.ConsumeIntegralInRange<int>(0, 5)];
  r.mixed.avg = r.avg;
  r.sto.training = f.ConsumeBool();
  r.sto.seed = f.ConsumeIntegral<uint64_t>();
  r.want_dlambda = f.ConsumeBool();
  // Torch's Lp of negative values is NaN by definition; keep it to the range where the results are numbers.
  bool non_negative = (r.op == LpF || r.op == LpB) && r.lp.convention == LpConvention::Torch;

  if (r.op == UnpF || r.op == UnpB) {
    // The pooled tensor is (N, C, out...), the unpooled one (N, C, in...); indices name cells of the input plane.
    Buffer small = make(r.dt, out), big = make(r.dt, in);
    r.indices = make(DType::i64, out);
    int64_t plane = r.g.plane_in();
    fuzz::for_each_offset(r.indices.view, [&](int64_t off) {
      static_cast<int64_t*>(r.indices.view.data)[off] = f.ConsumeIntegralInRange<int64_t>(0, plane - 1);
    });
    if (r.op == UnpF) { r.x = std::move(small); r.y = std::move(big); fuzz::fill(r.x, f, false); }
    else { r.dy = std::move(big); r.dx = std::move(small); fuzz::fill(r.dy, f, false); }
    return true;
  }
  r.x = make(r.dt, in);
  fuzz::fill(r.x, f, non_negative);
  if (r.op == FracF || r.op == FracB) {
    r.samples = make(f.ConsumeBool() ? DType::f32 : DType::f64, Shape{N, C, r.g.rank});
    fuzz::for_each_offset(r.samples.view, [&](int64_t off) {
      store_from_double(r.samples.view, off, f.ConsumeIntegral<uint8_t>() / 256.0);
    });
  }
  if (!is_backward(r.op)) {
    r.y = make(r.dt, out);
    if (r.op == MaxF || r.op == FracF) {
      int form = f.ConsumeIntegralInRange<int>(0, 2);  // none, int64 flat, window-local
      if (form) r.argmax = make(form == 1 ? DType::i64 : local_dtype_or_wider(r.g, f), out);
    }
    return true;
  }
  r.dy = make(r.dt, out);
  fuzz::fill(r.dy, f, false, /*finite=*/r.op == LpB || r.op == MixB || r.op == StoB || r.op == AvgB);
  r.dx = make(r.dt, in);
  if (r.op == MaxB || r.op == FracB) {
    // A saved argmax from the reference forward, in one of the forms, or none (recomputed from x).
    int form = f.ConsumeIntegralInRange<int>(0, 2);
    if (form) {
      r.argmax = make(form == 1 ? DType::i64 : local_dtype_or_wider(r.g, f), out);
      Buffer y = make(r.dt, out);
      if (r.op == MaxB) poolkit::ref::max_pool_forward(r.g, r.x.view, y.view, r.argmax.view);
      else poolkit::ref::fractional_max_pool_forward(r.g, r.samples.view, r.x.view, y.view, r.argmax.view);
    }
  }
  return true;
}

// Makes one argument invalid. Every change here breaks a documented rule, so both calls must raise.
void break_one(Request& r, FuzzedDataProvider& f) {
  std::vector<Buffer*> outs = outputs(r);
  Buffer* out = outs[0];
  switch (f.ConsumeIntegralInRange<int>(0, 9)) {
    case 0: {  // an output of the wrong shape (unpooling's output size is free: any size holding the indices)
      if (r.op == UnpF) return;
      Shape s = out->view.shape;
      s[s.rank - 1] += 1;
      out->view.shape = s;
      r.broken = "output shape";
      break;
    }
    case 1:  // an output of another dtype
      out->view.dtype = out->view.dtype == DType::f32 ? DType::f64 : DType::f32;
      r.broken = "output dtype";
      break;
    case 2:  // a required tensor left out
      out->view = TensorView{};
      r.broken = "undefined output";
      break;
    case 3:  // cells but no memory
      if (out->view.numel() == 0) return;
      out->view.data = nullptr;
      r.broken = "null data";
      break;
    case 4:  // a negative size
      out->view.shape[0] = -1 - f.ConsumeIntegralInRange<int64_t>(0, 3);
      r.broken = "negative size";
      break;
    case 5: {  // sizes whose product overflows int64, in every tensor (so the shapes still agree)
      int64_t big = int64_t(1) << 62;
      for (Buffer* b : {&r.x, &r.y, &r.dy, &r.dx, &r.argmax, &r.indices, &r.samples})
        if (b->view.shape.rank) { b->view.shape[0] = big; b->view.shape[1] = 4; }
      r.broken = "numel overflow";
      break;
    }
    case 6:  // an integer input
      if (is_backward(r.op)) r.dy.view.dtype = DType::i32;
      else r.x.view.dtype = DType::i32;
      r.broken = "integer input";
      break;
    case 7:  // an output on another device
      out->view.device = Device::CUDA;
      r.broken = "device";
      break;
    case 8: {  // an option out of range, or an index outside its plane / window
      r.broken = "option";
      if (r.op == AvgF || r.op == AvgB) r.avg.divisor_override = -f.ConsumeIntegralInRange<int64_t>(0, 2);
      else if (r.op == LpF || r.op == LpB) r.lp.p = f.ConsumeBool() ? 0.0 : std::nan("");  // (p < 0: torch's)
      else if (r.op == MixF || r.op == MixB) r.mixed.lambda = std::numeric_limits<double>::infinity();
      else if ((r.op == UnpF || r.op == UnpB) && r.indices.view.rank() && r.indices.view.numel() > 0) {
        auto* p = static_cast<int64_t*>(r.indices.view.data);
        auto offs = fuzz::offsets(r.indices.view);
        p[offs[f.ConsumeIntegralInRange<size_t>(0, offs.size() - 1)]] = f.ConsumeBool() ? -1 : r.g.plane_in();
        r.broken = "unpool index";
      } else if ((r.op == MaxB || r.op == FracB) && r.argmax.view.rank() && r.argmax.view.numel() > 0) {
        auto offs = fuzz::offsets(r.argmax.view);
        int64_t bad = r.argmax.view.dtype == DType::i64 ? r.g.plane_in() : r.g.window_cells();
        store_from_double(r.argmax.view, offs[f.ConsumeIntegralInRange<size_t>(0, offs.size() - 1)], double(bad));
        r.broken = "argmax value";
      } else if ((r.op == FracF || r.op == FracB) && r.samples.view.rank() && r.samples.view.numel() > 0) {
        auto offs = fuzz::offsets(r.samples.view);
        store_from_double(r.samples.view, offs[f.ConsumeIntegralInRange<size_t>(0, offs.size() - 1)],
                          f.ConsumeBool() ? 1.0 : -0.5);
        r.broken = "sample";
      } else {
        return;
      }
      break;
    }
    case 9: {  // spatial rank that does not match the geometry
      Shape s = out->view.shape;
      if (s.rank >= kMaxRank || s.rank < 3) return;
      s.rank += 1;
      s[s.rank - 1] = 1;
      out->view.shape = s;
      out->view.strides.rank += 1;
      out->view.strides[s.rank - 1] = 1;
      r.broken = "rank";
      break;
    }
  }
  r.must_fail = true;
}

// Runs one implementation with outputs poisoned by pattern `which`; returns the error, if any.
std::optional<Error> run(Request& r, bool fast, int which, double* dlambda) {
  for (Buffer* b : outputs(r))
    if (b->view.shape.rank) fuzz::poison(*b, which);
  if (dlambda) *dlambda = std::nan("");
  try {
    call(r, fast, dlambda);
  } catch (const Error& e) {
    FUZZ_CHECK(!e.argument().empty(), "an error without an argument name: %s", e.what());
    return e;
  }
  return std::nullopt;
}

struct Snapshot {
  std::vector<Buffer> outs;
  double dlambda = 0;
};
Snapshot snapshot(Request& r, double dl) {
  Snapshot s;
  for (Buffer* b : outputs(r)) s.outs.push_back(*b);
  for (size_t i = 0; i < s.outs.size(); ++i) s.outs[i].view.data = s.outs[i].bytes.data();
  s.dlambda = dl;
  return s;
}

// Relative tolerance for results that are sums, by dtype.
double rtol(DType t) {
  switch (t) {
    case DType::f64: return 1e-10;
    case DType::f32: return 1e-4;
    case DType::f16: return 4e-3;
    default: return 3e-2;
  }
}

bool exact_op(Op op, const Request& r) {
  return op == MaxF || op == MaxB || op == FracF || op == FracB || op == UnpF || op == UnpB ||
         ((op == StoF || op == StoB) && r.sto.training);
}

void compare(const Request& r, const Snapshot& a, const Snapshot& b, bool exact, const char* what) {
  for (size_t i = 0; i < a.outs.size(); ++i) {
    const TensorView &va = a.outs[i].view, &vb = b.outs[i].view;
    if (!va.shape.rank) continue;
    auto oa = fuzz::offsets(va), ob = fuzz::offsets(vb);
    bool tol = !exact && is_floating(va.dtype);
    double scale = 0;  // the largest finite magnitude in b, times the most terms one result sums
    if (tol) {
      for (int64_t o : ob) {
        double v = std::fabs(load_as_double(vb, o));
        if (std::isfinite(v)) scale = std::max(scale, v);
      }
      scale *= double(r.g.window_cells() + 1) * (1 + std::fabs(r.mixed.lambda));
    }
    for (size_t k = 0; k < oa.size(); ++k) {
      if (!tol) {
        FUZZ_CHECK(fuzz::same_bits(va, oa[k], vb, ob[k]), "%s: %s output %zu cell %zu differs (%g vs %g)%s%s",
                   kOpNames[r.op], what, i, k, load_as_double(va, oa[k]), load_as_double(vb, ob[k]),
                   r.must_fail ? " after " : "", r.broken.c_str());
        continue;
      }
      double x = load_as_double(va, oa[k]), y = load_as_double(vb, ob[k]);
      bool ok = (std::isnan(x) && std::isnan(y)) || x == y ||
                std::fabs(x - y) <= rtol(va.dtype) * (std::fabs(x) + std::fabs(y) + scale);
      FUZZ_CHECK(ok, "%s: %s output %zu cell %zu: %.17g vs %.17g", kOpNames[r.op], what, i, k, x, y);
    }
  }
  if (r.op == MixB && r.want_dlambda) {
    bool ok = a.dlambda == b.dlambda || (std::isnan(a.dlambda) && std::isnan(b.dlambda)) || std::fabs(a.dlambda - b.dlambda) <= 1e-6 * (1 + std::fabs(b.dlambda));
    FUZZ_CHECK(ok, "mixed_bwd: %s dlambda %.17g vs %.17g", what, a.dlambda, b.dlambda);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider f(data, size);
  Request r;
  r.op = Op(f.ConsumeIntegralInRange<int>(0, NumOps - 1));
  try {
    if (!build(r, f)) return 0;
  } catch (const Error&) {
    return 0;  // an invalid geometry: fuzz_geometry covers those
  }
  if (f.ConsumeIntegralInRange<int>(0, 5) == 0) break_one(r, f);

  double dl[4] = {0, 0, 0, 0};
  auto dlp = [&](int i) { return r.want_dlambda ? &dl[i] : nullptr; };
  auto fast1 = run(r, true, 0, dlp(0));
  Snapshot f1 = snapshot(r, dl[0]);
  auto fast2 = run(r, true, 1, dlp(1));
  Snapshot f2 = snapshot(r, dl[1]);
  auto ref1 = run(r, false, 0, dlp(2));
  Snapshot r1 = snapshot(r, dl[2]);
  auto ref2 = run(r, false, 1, dlp(3));
  Snapshot r2 = snapshot(r, dl[3]);

  if (r.must_fail) {
    FUZZ_CHECK(fast1 && fast2 && ref1 && ref2, "%s: the invalid request (%s) was accepted", kOpNames[r.op],
               r.broken.c_str());
    // Unpooling checks every index before it writes anything.
    if (r.broken == "unpool index") compare(r, f1, r1, true, "after an index error, untouched");
    return 0;
  }
  FUZZ_CHECK(!fast1 && !fast2, "%s: poolkit:: rejected a valid request: %s", kOpNames[r.op], fast1 ? fast1->what() : fast2->what());
  FUZZ_CHECK(!ref1 && !ref2, "%s: poolkit::ref rejected a valid request: %s", kOpNames[r.op], ref1 ? ref1->what() : ref2->what());
  compare(r, f1, f2, true, "fast path, poisoned twice (unwritten cell?)");
  compare(r, r1, r2, true, "reference, poisoned twice (unwritten cell?)");
  compare(r, f1, r1, exact_op(r.op, r), "fast path vs reference");

  // The reference on channels-first copies of every tensor gives the same bits.
  if (r.layout != fuzz::LayoutKind::ChannelsFirst) {
    Request c = r;
    for (Buffer* b : {&c.x, &c.y, &c.argmax, &c.dy, &c.dx, &c.samples, &c.indices})
      if (b->view.shape.rank) *b = fuzz::contiguous_copy(*b);
    auto err = run(c, false, 0, c.want_dlambda ? &dl[0] : nullptr);
    FUZZ_CHECK(!err, "%s: the channels-first copy was rejected: %s", kOpNames[r.op], err->what());
    compare(r, snapshot(c, dl[0]), r1, true, "reference channels-first vs fuzzed layout");
  }
  return 0;
}
