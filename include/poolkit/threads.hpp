#pragma once
// Threads of the fast CPU path.
namespace poolkit {

// Sets how many threads the CPU kernels use; 0 restores the default (OpenMP's, e.g. OMP_NUM_THREADS).
void set_num_threads(int n);
int num_threads();

}  // namespace poolkit
