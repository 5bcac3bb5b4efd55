// The public operators: check the arguments once, then the device's backend; on the CPU the reference takes
// whatever the fast path does not handle.
#include "../backends.hpp"
#include "poolkit/cuda.hpp"
#include "poolkit/error.hpp"
#include "validate.hpp"

#include <string>

namespace poolkit {

#ifdef POOLKIT_WITH_CUDA
#define POOLKIT_ON_CUDA(name, args) \
  if (!cuda::name args) fail(#name, "this request is not supported on CUDA tensors");
#else
#define POOLKIT_ON_CUDA(name, args) fail(#name, "poolkit was built without CUDA", ErrorKind::Type);
void set_cuda_stream(int, void*) { fail("device", "poolkit was built without CUDA", ErrorKind::Type); }
bool built_with_cuda() { return false; }
#endif

// The CUDA kernels pool floating types alone: integer tensors are refused there before any backend runs.
#define POOLKIT_OP(name, params, args, device_tensor)                                                     \
  void name params {                                                                                      \
    validate::name args;                                                                                  \
    if (device_tensor.device == Device::CUDA) {                                                           \
      if (is_integer(device_tensor.dtype))                                                                \
        fail(#device_tensor, std::string("integer tensors are pooled on the CPU only; CUDA takes floating " \
                                         "types (got ") + dtype_name(device_tensor.dtype) + ")",           \
             ErrorKind::Type);                                                                            \
      POOLKIT_ON_CUDA(name, args)                                                                         \
      return;                                                                                             \
    }                                                                                                     \
    if (!cpu::name args) ref::name args;                                                                  \
  }
#include "poolkit/ops_list.inc"
#undef POOLKIT_OP

}  // namespace poolkit
