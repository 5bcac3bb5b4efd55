#pragma once
// The CUDA stream poolkit's kernels run on: the default stream unless set (e.g. by the PyTorch layer to
// torch.cuda.current_stream()). A cudaStream_t passed as void* so callers need no CUDA headers.
namespace poolkit::cuda {

void set_stream(void* stream);
void* current_stream();

}  // namespace poolkit::cuda
