#include <cuda_runtime.h>

#include <string>

#include "poolkit/cuda.hpp"
#include "poolkit/error.hpp"
#include "stream.hpp"

namespace poolkit {
namespace cuda {
namespace {
thread_local void* g_stream = nullptr;
}  // namespace

void set_stream(void* stream) { g_stream = stream; }
void* current_stream() { return g_stream; }

}  // namespace cuda

void set_cuda_stream(int device, void* stream) {
  cudaError_t e = cudaSetDevice(device);
  if (e != cudaSuccess)
    fail("device", "CUDA device " + std::to_string(device) + " cannot be used: " + cudaGetErrorString(e));
  cuda::set_stream(stream);
}

bool built_with_cuda() { return true; }

}  // namespace poolkit
