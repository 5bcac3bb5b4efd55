// `poolkit bench`: times the standard cases of BENCH_CASES.md and reports each as effective bandwidth (every
// input read once, every output written once, indices at the width stored), as a fraction of a plain copy's
// bandwidth, and against its limit time (bytes read / read bandwidth + bytes written / write bandwidth); the
// bandwidths are measured just before each row (this machine's bandwidth drifts within a run).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "bandwidth.hpp"
#include "commands.hpp"
#include "poolkit/memory.hpp"
#include "poolkit/poolkit.hpp"
#include "poolkit/threads.hpp"

namespace poolkit::cli {
namespace {

struct Options {
  std::vector<std::string> cases;  // empty: all
  std::vector<std::string> ops;    // empty: all
  std::string layout = "both";
  int threads = 0, reps = 7;
  int64_t batch = 0;  // --batch: every case's first dimension (0: its own)
  std::string dtype;  // empty: each case's own
  bool fresh = false;  // --fresh-outputs
  bool nonnegative = false;  // --inputs nonnegative
};

// The dtype named `name` (dtype_name's spelling).
DType dtype_named(const std::string& name) {
  for (DType t : {DType::f32, DType::f64, DType::bf16, DType::f16, DType::u8, DType::i8, DType::i16, DType::i32,
                  DType::i64})
    if (name == dtype_name(t)) return t;
  fail("--dtype", "unknown dtype '" + name + "' (float32, float64, bfloat16, float16, uint8, int8, int16, int32, int64)");
}

void usage(FILE* out) {
  std::fprintf(out,
               "usage: poolkit bench [--case NAME]... [--op OP]... [--layout nchw|nhwc|both] [--dtype T] [--threads N]\n"
               "                     [--reps N] [--batch N] [--fresh-outputs] [--inputs signed|nonnegative]\n"
               "\n"
               "Times the standard cases (seed, resnet-stem, vgg, overlap-avg, gap, adaptive, pool3d, half) and\n"
               "prints, for each operator: the median time, the effective bandwidth (inputs read once, outputs\n"
               "written once, indices at their stored width), the bandwidth of a plain memcpy measured just before\n"
               "it (bytes read + written) and the fraction of that copy the operator reached; then the limit time\n"
               "(bytes read / read bandwidth + bytes written / write bandwidth, each the mean of its measures just\n"
               "before and just after the row on the kernels' threads: a vectorised sum of several streams a thread\n"
               "and streaming stores, over 256 MiB or twice the last-level cache, of data that, as a kernel's, are\n"
               "not lines of zeros, which some machines write far faster;\n"
               "a row whose measures before and after differ by more than 15%% is run again, up to three\n"
               "times) and the fraction of it reached (limit time / median time). Progress goes to stderr.\n"
               "\n"
               "  --case NAME   only this case (repeatable)\n"
               "  --op OP       only operators whose name starts with OP (repeatable): max-fwd, max-fwd-u8,\n"
               "                max-fwd-i64, max-bwd, max-bwd-u8, max-bwd-i64, avg-fwd, avg-bwd\n"
               "  --layout L    nchw, nhwc or both (default both)\n"
               "  --dtype T     every case in dtype T (default: each case's own); integer types (uint8, int8,\n"
               "                int16, int32, int64) run the max forwards only (and int64 the average forward)\n"
               "  --threads N   threads of the CPU kernels (default: OpenMP's, e.g. OMP_NUM_THREADS)\n"
               "  --reps N      timed repetitions after one warm-up (default 7; fewer when a run is slow)\n"
               "  --batch N     every case with N images (its first dimension) instead of its own: small\n"
               "                batches, where what a call costs besides its bytes weighs more\n"
               "  --fresh-outputs  each repetition's outputs allocated anew (uninitialised) through the core's\n"
               "                allocator with its huge-page advice, its cache of freed blocks off, and freed after the\n"
               "                call: the work of a host that returns new arrays (Octave, MATLAB), page faults and\n"
               "                the kernel's zeroing of fresh pages included. Default: warm buffers reused\n"
               "  --inputs K    the floating inputs and gradients: signed (default: uniform in [-1, 1)) or\n"
               "                nonnegative (their magnitudes, as after a ReLU, where the 16-bit max forwards\n"
               "                compare bits; integer types: random bytes either way)\n");
}

// Uniform in [-1, 1), or (nonnegative) the magnitudes of those values.
void fill_random(const Tensor& t, uint64_t seed, bool nonnegative) {
  int64_t n = t.numel();
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  auto next = [&] {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    const float v = float(int64_t(s >> 40) - (1 << 23)) / (1 << 23);
    return nonnegative ? std::fabs(v) : v;
  };
  switch (t.dtype()) {
    case DType::f32: { float* p = t.data<float>(); for (int64_t i = 0; i < n; ++i) p[i] = next(); break; }
    case DType::f64: { double* p = t.data<double>(); for (int64_t i = 0; i < n; ++i) p[i] = next(); break; }
    case DType::bf16: { auto* p = t.data<bfloat16>(); for (int64_t i = 0; i < n; ++i) p[i] = bfloat16(next()); break; }
    case DType::f16: { auto* p = t.data<float16>(); for (int64_t i = 0; i < n; ++i) p[i] = float16(next()); break; }
    default: {  // integers: random bytes (8-bit types: every value; wider ones: all their range)
      char* p = t.data<char>();
      for (int64_t i = 0; i < n * dtype_size(t.dtype()); ++i) s ^= s << 13, s ^= s >> 7, s ^= s << 17, p[i] = char(s >> 32);
    }
  }
}

int64_t bytes(const Tensor& t) { return t.numel() * dtype_size(t.dtype()); }

// An output like `like` (none where it is undefined) allocated anew through the core's allocator, uninitialised,
// and released on scope exit.
struct FreshOutput {
  TensorView view;
  explicit FreshOutput(const Tensor& like) {
    if (like.view().defined())
      view = TensorView(allocate(size_t(bytes(like))), like.dtype(), like.shape(), like.view().strides);
  }
  ~FreshOutput() { release(view.data); }
  FreshOutput(const FreshOutput&) = delete;
  FreshOutput& operator=(const FreshOutput&) = delete;
};

// Median time of f(a, b) over outputs a and b (b may be undefined): the warm tensors themselves, or (fresh)
// outputs like them allocated anew for each call.
double time_into(int reps, bool fresh, const Tensor& a, const Tensor& b,
                 const std::function<void(const TensorView&, const TensorView&)>& f) {
  if (!fresh) return median_seconds(reps, [&] { f(a.view(), b.view()); });
  return median_seconds(reps, [&] {
    FreshOutput fa(a), fb(b);
    f(fa.view, fb.view);
  });
}

struct Case {
  const char* name;
  std::vector<int64_t> shape;  // N, C, spatial
  enum Kind { Regular, Global, Adaptive } kind;
  std::vector<int64_t> kernel, stride, pad, out;
  bool count_include_pad;
  std::vector<std::string> ops;  // max-fwd[-none|-u8|-i64], max-bwd[-u8|-i64|-none], avg-fwd, avg-bwd
  std::vector<DType> dtypes;
};

std::vector<Case> cases() {
  const std::vector<DType> f32{DType::f32};
  return {
      {"seed", {16384, 2, 32, 32}, Case::Regular, {2, 2}, {2, 2}, {0, 0}, {}, true,
       {"max-fwd", "max-fwd-u8", "max-fwd-i64", "max-bwd-u8", "max-bwd-i64", "max-bwd", "avg-fwd", "avg-bwd"}, f32},
      {"resnet-stem", {32, 64, 112, 112}, Case::Regular, {3, 3}, {2, 2}, {1, 1}, {}, true,
       {"max-fwd", "max-fwd-u8", "max-fwd-i64", "max-bwd-u8", "max-bwd-i64"}, f32},
      {"vgg", {32, 128, 112, 112}, Case::Regular, {2, 2}, {2, 2}, {0, 0}, {}, true,
       {"max-fwd-u8", "max-fwd-i64", "max-bwd-u8", "max-bwd-i64"}, f32},
      {"overlap-avg", {32, 64, 56, 56}, Case::Regular, {3, 3}, {1, 1}, {1, 1}, {}, false, {"avg-fwd", "avg-bwd"}, f32},
      {"gap", {256, 2048, 7, 7}, Case::Global, {}, {}, {}, {}, true, {"avg-fwd", "avg-bwd"}, f32},
      {"adaptive", {64, 256, 13, 13}, Case::Adaptive, {}, {}, {}, {7, 7}, true, {"avg-fwd", "avg-bwd"}, f32},
      {"pool3d", {8, 64, 32, 32, 32}, Case::Regular, {2, 2, 2}, {2, 2, 2}, {0, 0, 0}, {}, true,
       {"max-fwd", "max-fwd-u8", "max-fwd-i64", "max-bwd-u8", "max-bwd-i64"}, f32},
      {"half", {32, 64, 112, 112}, Case::Regular, {3, 3}, {2, 2}, {1, 1}, {}, true, {"max-fwd-u8", "max-bwd-u8"},
       {DType::bf16, DType::f16}},
  };
}

Geometry geometry_of(const Case& c) {
  std::vector<int64_t> in(c.shape.begin() + 2, c.shape.end());
  if (c.kind == Case::Global) return global_geometry(in);
  if (c.kind == Case::Adaptive) return adaptive_geometry(in, c.out);
  std::vector<int64_t> dil(in.size(), 1);
  return torch_geometry(in, c.kernel, c.stride, c.pad, dil, false);
}

struct Row {
  std::string label;
  double seconds;
  int64_t read, written;  // bytes
};

// Times one operator of a case; returns the bytes it moves and its median time.
Row run_op(const Case& c, const Geometry& g, const std::string& op, DType dt, Layout layout, int reps, bool fresh,
           bool nonnegative) {
  Shape xs(c.shape), ys(c.shape);
  std::vector<int64_t> out = g.output_size();
  for (size_t i = 0; i < out.size(); ++i) ys[int(i) + 2] = out[i];
  Tensor x(dt, xs, layout), y(dt, ys, layout);
  fill_random(x, 1, nonnegative);
  std::string idx = op.size() > 7 ? op.substr(8) : "";
  DType form = idx == "i64" ? DType::i64 : local_argmax_dtype(g);
  Row r{op + " " + dtype_name(dt), 0, 0, 0};
  if (op.rfind("max-fwd", 0) == 0) {
    Tensor am = idx.empty() ? Tensor() : Tensor(form, ys, layout);
    r.seconds = time_into(reps, fresh, y, am, [&](auto& yv, auto& av) { max_pool_forward(g, x, yv, av); });
    r.read = bytes(x);
    r.written = bytes(y) + (idx.empty() ? 0 : bytes(am));
    if (!idx.empty()) r.label = "max-fwd +" + std::string(dtype_name(form)) + " argmax " + dtype_name(dt);
    else r.label = "max-fwd " + std::string(dtype_name(dt));
  } else if (op.rfind("max-bwd", 0) == 0) {
    Tensor dy(dt, ys, layout), dx(dt, xs, layout);
    fill_random(dy, 2, nonnegative);
    Tensor am = idx.empty() ? Tensor() : Tensor(form, ys, layout);
    max_pool_forward(g, x, y, am.view());
    r.seconds = time_into(reps, fresh, dx, {}, [&](auto& dxv, auto&) { max_pool_backward(g, dy, am.view(), x, dxv); });
    r.read = bytes(dy) + (idx.empty() ? bytes(x) : bytes(am));
    r.written = bytes(dx);
    r.label = "max-bwd " + (idx.empty() ? std::string("recomputing argmax") : "from " + std::string(dtype_name(form))) +
              " " + dtype_name(dt);
  } else if (op == "avg-fwd") {
    AvgOptions opt;
    opt.count_include_pad = c.count_include_pad;
    r.seconds = time_into(reps, fresh, y, {}, [&](auto& yv, auto&) { avg_pool_forward(g, opt, x, yv); });
    r.read = bytes(x);
    r.written = bytes(y);
    r.label = "avg-fwd " + std::string(dtype_name(dt));
  } else {
    AvgOptions opt;
    opt.count_include_pad = c.count_include_pad;
    Tensor dy(dt, ys, layout), dx(dt, xs, layout);
    fill_random(dy, 2, nonnegative);
    r.seconds = time_into(reps, fresh, dx, {}, [&](auto& dxv, auto&) { avg_pool_backward(g, opt, dy, dxv); });
    r.read = bytes(dy);
    r.written = bytes(dx);
    r.label = "avg-bwd " + std::string(dtype_name(dt));
  }
  return r;
}

}  // namespace

int bench(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) fail(a, "needs a value");
      return argv[++i];
    };
    if (a == "--help" || a == "-h") {
      usage(stdout);
      return 0;
    } else if (a == "--case") {
      o.cases.push_back(value());
    } else if (a == "--op") {
      o.ops.push_back(value());
    } else if (a == "--layout") {
      o.layout = value();
      if (o.layout != "nchw" && o.layout != "nhwc" && o.layout != "both") fail("--layout", "must be nchw, nhwc or both");
    } else if (a == "--threads") {
      o.threads = std::stoi(value());
      if (o.threads < 1) fail("--threads", "must be >= 1");
    } else if (a == "--dtype") {
      o.dtype = value();
      dtype_named(o.dtype);
    } else if (a == "--fresh-outputs") {
      o.fresh = true;
    } else if (a == "--inputs") {
      const std::string k = value();
      if (k != "signed" && k != "nonnegative") fail("--inputs", "must be signed or nonnegative, not '" + k + "'");
      o.nonnegative = k == "nonnegative";
    } else if (a == "--batch") {
      o.batch = std::stoll(value());
      if (o.batch < 1) fail("--batch", "must be >= 1");
    } else if (a == "--reps") {
      o.reps = std::stoi(value());
      if (o.reps < 1) fail("--reps", "must be >= 1");
    } else {
      std::fprintf(stderr, "poolkit bench: unknown option '%s'\n\n", a.c_str());
      usage(stderr);
      return 2;
    }
  }
  std::vector<Case> all = cases(), chosen;
  auto wanted = [&](const std::string& op) {
    return o.ops.empty() ||
           std::any_of(o.ops.begin(), o.ops.end(), [&](const std::string& p) { return op.rfind(p, 0) == 0; });
  };
  for (Case c : all) {
    if (!o.cases.empty() && std::find(o.cases.begin(), o.cases.end(), c.name) == o.cases.end()) continue;
    if (!o.dtype.empty()) c.dtypes = {dtype_named(o.dtype)};
    if (o.batch) c.shape[0] = o.batch;
    const bool integer = is_integer(c.dtypes[0]);
    auto runs = [&](const std::string& op) {  // (integers: no gradients; int64 alone averages)
      return wanted(op) && (!integer || op.rfind("max-fwd", 0) == 0 || (op == "avg-fwd" && c.dtypes[0] == DType::i64));
    };
    c.ops.erase(std::remove_if(c.ops.begin(), c.ops.end(), [&](const std::string& op) { return !runs(op); }),
                c.ops.end());
    if (!c.ops.empty()) chosen.push_back(c);
  }
  for (const std::string& n : o.cases)
    if (std::none_of(all.begin(), all.end(), [&](const Case& c) { return n == c.name; }))
      fail("--case", "unknown case '" + n + "' (seed, resnet-stem, vgg, overlap-avg, gap, adaptive, pool3d, half)");
  if (chosen.empty()) fail("--op", "no operator of the chosen cases starts with the names given");
  if (o.threads) set_num_threads(o.threads);
  if (o.fresh) set_cache_limit(0);  // every output block goes back to the system and comes back fresh
  std::vector<Layout> layouts;
  if (o.layout != "nhwc") layouts.push_back(Layout::ChannelsFirst);
  if (o.layout != "nchw") layouts.push_back(Layout::ChannelsLast);

  int total = 0, done = 0;
  for (const Case& c : chosen) total += int(c.ops.size() * c.dtypes.size() * layouts.size());
  Bandwidth bw;
  if (o.batch) std::printf("poolkit bench: every case with a batch of %lld\n", static_cast<long long>(o.batch));
  if (o.nonnegative) std::printf("poolkit bench: non-negative inputs and gradients (--inputs nonnegative)\n");
  std::printf("poolkit bench: %d thread(s); outputs %s; before each row a plain memcpy (1 thread, bytes read + written), a\n"
              "sum (read) and streaming stores (write) on the kernels' threads, before and after it (their mean; a\n"
              "row run again where they differ by over 15%%); limit = read / read GB/s + written / write GB/s\n\n",
              num_threads(), o.fresh ? "allocated anew for each call (--fresh-outputs)" : "warm, reused");
  std::printf("%-12s %-6s %-42s %10s %9s %9s %8s %8s %8s %9s %8s\n", "case", "layout", "operator", "median ms", "GB/s",
              "copy GB/s", "of copy", "read GB/s", "write GB/s", "limit ms", "of limit");
  for (const Case& c : chosen) {
    Geometry g = geometry_of(c);
    for (Layout layout : layouts)
      for (DType dt : c.dtypes)
        for (const std::string& op : c.ops) {
          ++done;
          std::fprintf(stderr, "\r[%3d/%3d] %s %s %s ...%20s", done, total, c.name,
                       layout == Layout::ChannelsLast ? "nhwc" : "nchw", op.c_str(), "");
          std::fflush(stderr);
          // (the memory's pace on a shared machine moves between seconds: a row is kept when the probes before
          // and after it agree, else run again, the third time kept whatever they say)
          double copy_bw = 0, read_bw = 0, write_bw = 0;
          Row r;
          for (int attempt = 1;; ++attempt) {
            copy_bw = bw.copy(o.reps);
            const double read0 = bw.read(o.reps, num_threads()), write0 = bw.write(o.reps, num_threads());
            r = run_op(c, g, op, dt, layout, o.reps, o.fresh, o.nonnegative);
            const double read1 = bw.read(o.reps, num_threads()), write1 = bw.write(o.reps, num_threads());
            read_bw = (read0 + read1) / 2, write_bw = (write0 + write1) / 2;
            auto agree = [](double a, double b) { return std::abs(a - b) <= 0.15 * std::max(a, b); };
            if ((agree(read0, read1) && agree(write0, write1)) || attempt == 3) break;
          }
          const double rate = double(r.read + r.written) / r.seconds;
          const double limit = double(r.read) / read_bw + double(r.written) / write_bw;
          std::fprintf(stderr, "\r%70s\r", "");
          std::printf("%-12s %-6s %-42s %10.3f %9.1f %9.1f %8.2f %9.1f %10.1f %9.3f %8.2f\n", c.name,
                      layout == Layout::ChannelsLast ? "nhwc" : "nchw", r.label.c_str(), r.seconds * 1e3, rate / 1e9,
                      copy_bw / 1e9, rate / copy_bw, read_bw / 1e9, write_bw / 1e9, limit * 1e3, limit / r.seconds);
          std::fflush(stdout);
        }
  }
  return 0;
}

}  // namespace poolkit::cli
