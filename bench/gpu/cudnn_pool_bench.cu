// cuDNN's legacy pooling (cudnnPoolingForward / cudnnPoolingBackward) over the cases of BENCH_CASES.md, the peer
// poolkit's CUDA backend is compared with. Prints CSV rows like poolkit_gpu_bench. cuDNN has no index output: its
// max backward recomputes the argmax from x and y. Adaptive bins are not a cuDNN mode; "gap" is a 7x7 average.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_cases.hpp"

using poolkit_bench::BenchCase;
using poolkit_bench::Kind;

namespace {

void ok(cudaError_t e) {
  if (e != cudaSuccess) throw std::runtime_error(cudaGetErrorString(e));
}
void ok(cudnnStatus_t s) {
  if (s != CUDNN_STATUS_SUCCESS) throw std::runtime_error(cudnnGetErrorString(s));
}

template <class F>
double median_us(F&& f, int warmup = 5, int runs = 50) {
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

__global__ void fill(char* p, int64_t n, int kind, unsigned seed) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    unsigned h = unsigned(i) * 2654435761u ^ seed;
    h ^= h >> 13; h *= 0x5bd1e995u; h ^= h >> 15;
    float v = float(h & 0xffffff) / float(0x1000000) * 2.f - 1.f;
    if (v == 0.f) v = 0.5f;
    if (kind == 0) reinterpret_cast<float*>(p)[i] = v;
    else if (kind == 1) reinterpret_cast<__half*>(p)[i] = __float2half(v);
    else reinterpret_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16(v);
  }
}

std::vector<int> strides_of(const std::vector<int>& d, bool channels_last) {
  int r = int(d.size());
  std::vector<int> s(static_cast<size_t>(r));
  if (!channels_last) {
    s[size_t(r - 1)] = 1;
    for (int i = r - 2; i >= 0; --i) s[size_t(i)] = s[size_t(i + 1)] * d[size_t(i + 1)];
    return s;
  }
  s[1] = 1;
  int acc = d[1];
  for (int i = r - 1; i >= 2; --i) { s[size_t(i)] = acc; acc *= d[size_t(i)]; }
  s[0] = acc;
  return s;
}

void bench(cudnnHandle_t h, const BenchCase& c, bool channels_last) {
  if (c.kind == Kind::AdaptiveAvg && c.out != std::vector<int64_t>{1, 1}) return;
  cudnnDataType_t dt = c.dtype == "float16" ? CUDNN_DATA_HALF : c.dtype == "bfloat16" ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_FLOAT;
  int es = dt == CUDNN_DATA_FLOAT ? 4 : 2, kind = dt == CUDNN_DATA_FLOAT ? 0 : dt == CUDNN_DATA_HALF ? 1 : 2;
  int rank = int(c.shape.size()) - 2;
  std::vector<int> win(static_cast<size_t>(rank)), pad(win), str(win), xd, yd;
  for (int i = 0; i < rank; ++i) {
    bool global = c.kind == Kind::AdaptiveAvg;
    win[size_t(i)] = global ? int(c.shape[size_t(i + 2)]) : int(c.kernel);
    str[size_t(i)] = global ? 1 : int(c.stride);
    pad[size_t(i)] = global ? 0 : int(c.pad);
  }
  for (int64_t v : c.shape) xd.push_back(int(v));
  cudnnPoolingMode_t mode = c.kind == Kind::Max ? CUDNN_POOLING_MAX_DETERMINISTIC
                            : c.count_include_pad ? CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
                                                  : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
  cudnnPoolingDescriptor_t pd;
  ok(cudnnCreatePoolingDescriptor(&pd));
  ok(cudnnSetPoolingNdDescriptor(pd, mode, CUDNN_PROPAGATE_NAN, rank, win.data(), pad.data(), str.data()));
  cudnnTensorDescriptor_t xdesc, ydesc;
  ok(cudnnCreateTensorDescriptor(&xdesc));
  ok(cudnnCreateTensorDescriptor(&ydesc));
  std::vector<int> xs = strides_of(xd, channels_last);
  ok(cudnnSetTensorNdDescriptor(xdesc, dt, rank + 2, xd.data(), xs.data()));
  yd.resize(size_t(rank + 2));
  ok(cudnnGetPoolingNdForwardOutputDim(pd, xdesc, rank + 2, yd.data()));
  std::vector<int> ys = strides_of(yd, channels_last);
  ok(cudnnSetTensorNdDescriptor(ydesc, dt, rank + 2, yd.data(), ys.data()));
  int64_t xn = 1, yn = 1;
  for (int v : xd) xn *= v;
  for (int v : yd) yn *= v;
  char *x, *y, *dx, *dy;
  ok(cudaMalloc(&x, size_t(xn) * es));
  ok(cudaMalloc(&dx, size_t(xn) * es));
  ok(cudaMalloc(&y, size_t(yn) * es));
  ok(cudaMalloc(&dy, size_t(yn) * es));
  fill<<<1024, 256>>>(x, xn, kind, 1u);
  fill<<<1024, 256>>>(dy, yn, kind, 2u);
  float alpha = 1, beta = 0;
  const char* lname = channels_last ? "channels_last" : "contiguous";
  auto fwd = [&] { ok(cudnnPoolingForward(h, pd, &alpha, xdesc, x, &beta, ydesc, y)); };
  auto bwd = [&] { ok(cudnnPoolingBackward(h, pd, &alpha, ydesc, y, ydesc, dy, xdesc, x, &beta, xdesc, dx)); };
  double xb = double(xn) * es, yb = double(yn) * es;
  for (const std::string& op : c.ops) {
    if (op == "fwd" || op == "fwd_idx")
      std::printf("cudnn,%s,%s,%s,%s,,%.3f,%.0f\n", c.name.c_str(), lname, c.dtype.c_str(), op.c_str(), median_us(fwd),
                  xb + yb);
    if (op == "bwd") {
      fwd();  // max backward reads x, y and dy
      std::printf("cudnn,%s,%s,%s,bwd,,%.3f,%.0f\n", c.name.c_str(), lname, c.dtype.c_str(), median_us(bwd),
                  c.kind == Kind::Max ? 2 * xb + 2 * yb : xb + yb);
    }
    std::fflush(stdout);
  }
  cudaFree(x); cudaFree(dx); cudaFree(y); cudaFree(dy);
  cudnnDestroyTensorDescriptor(xdesc);
  cudnnDestroyTensorDescriptor(ydesc);
  cudnnDestroyPoolingDescriptor(pd);
}

}  // namespace

int main() {
  cudnnHandle_t h;
  ok(cudnnCreate(&h));
  std::printf("impl,case,layout,dtype,op,variant,median_us,bytes\n");
  for (const BenchCase& c : poolkit_bench::bench_cases())
    for (bool cl : {false, true}) {
      try {
        bench(h, c, cl);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "cudnn %s %s: %s\n", c.name.c_str(), cl ? "channels_last" : "contiguous", e.what());
      }
    }
  cudnnDestroy(h);
  return 0;
}
