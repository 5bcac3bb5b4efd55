#include "arrays.hpp"

#include <string>

#include "poolkit/error.hpp"

namespace poolkit::py {
DType dtype_from(const nb::dlpack::dtype& t, const char* name) {
  using C = nb::dlpack::dtype_code;
  auto code = C(t.code);
  if (t.lanes == 1) {
    if (code == C::Float && t.bits == 32) return DType::f32;
    if (code == C::Float && t.bits == 64) return DType::f64;
    if (code == C::Float && t.bits == 16) return DType::f16;
    if (code == C::Bfloat && t.bits == 16) return DType::bf16;
    if (code == C::Int && t.bits == 64) return DType::i64;
    if (code == C::Int && t.bits == 32) return DType::i32;
    if (code == C::Int && t.bits == 16) return DType::i16;
    if (code == C::UInt && t.bits == 8) return DType::u8;
    if (code == C::Int && t.bits == 8) return DType::i8;
    if (code == C::Bool) fail(name, "must be a floating or integer tensor (got bool)", ErrorKind::Type);
    if (code == C::Complex) fail(name, "must be a floating or integer tensor (got complex)", ErrorKind::Type);
  }
  fail(name, "has an unsupported dtype (code " + std::to_string(int(t.code)) + ", " + std::to_string(t.bits) +
                 " bits); use float32, float64, float16, bfloat16, or uint8, int8, int16, int32, int64",
       ErrorKind::Type);
}

Device device_from(int dlpack_device_type, const char* name) {
  if (dlpack_device_type == nb::device::cpu::value) return Device::CPU;
  if (dlpack_device_type == nb::device::cuda::value) return Device::CUDA;
  fail(name, "must be in host memory or on a CUDA device (got DLPack device type " +
                 std::to_string(dlpack_device_type) + ")",
       ErrorKind::Type);
}

}  // namespace poolkit::py
