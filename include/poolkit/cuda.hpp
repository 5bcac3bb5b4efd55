#pragma once
// Where the CUDA backend runs: the device and stream of the calling thread's next operators.
namespace poolkit {

// Operators on CUDA tensors called from this thread run on `device` (a CUDA device ordinal, made current) and
// enqueue their kernels on `stream` (a cudaStream_t; nullptr: the default stream), e.g. a framework's current
// stream. A build without CUDA throws a TypeError-kind poolkit::Error.
void set_cuda_stream(int device, void* stream);

// Whether this build has the CUDA backend.
bool built_with_cuda();

}  // namespace poolkit
