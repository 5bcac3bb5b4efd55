// poolkit on CUDA tensors over the cases of BENCH_CASES.md, and a device-to-device copy for the bandwidth limit.
// Prints CSV rows: impl,case,layout,dtype,op,variant,median_us,bytes (median of many CUDA-event-timed runs after a
// warm-up, on random data).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_cases.hpp"
#include "poolkit/poolkit.hpp"

using namespace poolkit;
using poolkit_bench::BenchCase;
using poolkit_bench::Kind;

namespace {

void ok(cudaError_t e) {
  if (e != cudaSuccess) throw std::runtime_error(cudaGetErrorString(e));
}

struct Buf {
  void* p = nullptr;
  explicit Buf(size_t bytes) { ok(cudaMalloc(&p, bytes ? bytes : 1)); }
  ~Buf() { cudaFree(p); }
  Buf(const Buf&) = delete;
  Buf& operator=(const Buf&) = delete;
};

// Random floating data of dtype dt, made on the host (never zeros).
void fill_random(void* dev, DType dt, int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<char> h(size_t(n) * size_t(dtype_size(dt)));
  for (int64_t i = 0; i < n; ++i) {
    float v = u(rng);
    switch (dt) {
      case DType::f32: reinterpret_cast<float*>(h.data())[i] = v; break;
      case DType::f64: reinterpret_cast<double*>(h.data())[i] = v; break;
      case DType::bf16: reinterpret_cast<bfloat16*>(h.data())[i] = bfloat16(v); break;
      default: reinterpret_cast<float16*>(h.data())[i] = float16(v); break;
    }
  }
  ok(cudaMemcpy(dev, h.data(), h.size(), cudaMemcpyHostToDevice));
}

double median_us(const std::function<void()>& f, int warmup = 5, int runs = 50) {
  for (int i = 0; i < warmup; ++i) f();
  cudaEvent_t a, b;
  ok(cudaEventCreate(&a));
  ok(cudaEventCreate(&b));
  std::vector<float> ms;
  for (int i = 0; i < runs; ++i) {
    ok(cudaEventRecord(a));
    f();
    ok(cudaEventRecord(b));
    ok(cudaEventSynchronize(b));
    float t = 0;
    ok(cudaEventElapsedTime(&t, a, b));
    ms.push_back(t);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(ms.begin(), ms.end());
  return 1000.0 * ms[ms.size() / 2];
}

DType dtype_named(const std::string& s) {
  return s == "bfloat16" ? DType::bf16 : s == "float16" ? DType::f16 : s == "float64" ? DType::f64 : DType::f32;
}

Geometry geometry_of(const BenchCase& c) {
  std::vector<int64_t> in(c.shape.begin() + 2, c.shape.end());
  if (c.kind == Kind::AdaptiveAvg) return adaptive_geometry(in, c.out);
  return torch_geometry(in, {c.kernel}, {c.stride}, {c.pad}, {1}, false);
}

void row(const BenchCase& c, const char* layout, const std::string& op, const std::string& variant, double us,
         double bytes) {
  std::printf("poolkit,%s,%s,%s,%s,%s,%.3f,%.0f\n", c.name.c_str(), layout, c.dtype.c_str(), op.c_str(),
              variant.c_str(), us, bytes);
  std::fflush(stdout);
}

void bench(const BenchCase& c, Layout layout) {
  const char* lname = layout == Layout::ChannelsLast ? "channels_last" : "contiguous";
  DType dt = dtype_named(c.dtype);
  Geometry g = geometry_of(c);
  Shape xs(c.shape), ys = xs;
  for (int i = 0; i < g.rank; ++i) ys[i + 2] = g.axes[i].out;
  int es = dtype_size(dt);
  Buf xb(size_t(xs.numel()) * es), yb(size_t(ys.numel()) * es), dxb(size_t(xs.numel()) * es),
      dyb(size_t(ys.numel()) * es), ab(size_t(ys.numel()) * 8);
  fill_random(xb.p, dt, xs.numel(), 1);
  fill_random(dyb.p, dt, ys.numel(), 2);
  TensorView x(xb.p, dt, xs, contiguous_strides(xs, layout), Device::CUDA);
  TensorView y(yb.p, dt, ys, contiguous_strides(ys, layout), Device::CUDA);
  TensorView dx(dxb.p, dt, xs, contiguous_strides(xs, layout), Device::CUDA);
  TensorView dy(dyb.p, dt, ys, contiguous_strides(ys, layout), Device::CUDA);
  double xbytes = double(xs.numel()) * es, ybytes = double(ys.numel()) * es;
  auto argmax = [&](DType a) { return TensorView(ab.p, a, ys, contiguous_strides(ys, layout), Device::CUDA); };
  std::vector<DType> forms = {DType::i64, local_argmax_dtype(g)};
  for (const std::string& op : c.ops) {
    if (c.kind == Kind::Max) {
      if (op == "fwd") row(c, lname, op, "", median_us([&] { max_pool_forward(g, x, y, {}); }), xbytes + ybytes);
      if (op == "fwd_idx")
        for (DType a : forms)
          row(c, lname, op, dtype_name(a), median_us([&] { max_pool_forward(g, x, y, argmax(a)); }),
              xbytes + ybytes + double(ys.numel()) * dtype_size(a));
      if (op == "bwd")
        for (DType a : forms) {
          max_pool_forward(g, x, y, argmax(a));
          row(c, lname, op, dtype_name(a), median_us([&] { max_pool_backward(g, dy, argmax(a), {}, dx); }),
              ybytes + xbytes + double(ys.numel()) * dtype_size(a));
        }
    } else {
      AvgOptions o{c.count_include_pad, {}};
      if (op == "fwd") row(c, lname, op, "", median_us([&] { avg_pool_forward(g, o, x, y); }), xbytes + ybytes);
      if (op == "bwd") row(c, lname, op, "", median_us([&] { avg_pool_backward(g, o, dy, dx); }), xbytes + ybytes);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string only = argc > 1 ? argv[1] : "";
  std::printf("impl,case,layout,dtype,op,variant,median_us,bytes\n");
  {
    size_t bytes = size_t(1) << 28;
    Buf a(bytes), b(bytes);
    ok(cudaMemset(a.p, 1, bytes));
    double us = median_us([&] { ok(cudaMemcpyAsync(b.p, a.p, bytes, cudaMemcpyDeviceToDevice)); });
    std::printf("copy,copy,-,-,d2d,,%.3f,%.0f\n", us, 2.0 * double(bytes));
  }
  for (const BenchCase& c : poolkit_bench::bench_cases()) {
    if (!only.empty() && c.name != only) continue;
    for (Layout l : {Layout::ChannelsFirst, Layout::ChannelsLast}) bench(c, l);
  }
  return 0;
}
