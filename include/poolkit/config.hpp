#pragma once
// Marks functions that are compiled for both the host and CUDA devices.
#if defined(__CUDACC__)
#define POOLKIT_HD __host__ __device__
#else
#define POOLKIT_HD
#endif
