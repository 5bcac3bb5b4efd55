#pragma once
// Instructions the Highway targets do not imply, detected once at start-up.

namespace poolkit::cpu {

// AVX512_BF16 (VCVTNEPS2BF16): used by the AVX-512 kernels to round float to bfloat16 (kernels-inl.h).
// Tests turn it off to reach the integer rounding on the same machine.
extern bool cpu_bf16_insn;

// Whether the 16-bit rows of the channels-first 3x3 stride-2 max backward go straight to dx by streaming stores of
// half lines (kernels_k3s2.cpp) rather than through a plane in the cache and a copy by whole lines: on AMD's CPUs
// (Zen 4: 1.45-1.59x faster at 1 thread, 1.05-1.10x at 2), not on Intel's (Xeon model 207: through the plane
// 1.17-1.23x faster at 1 and 2 threads). Tests set it both ways.
extern bool cpu_half_rows_direct;

// Whether the channels-last groups of the float max forward ask for each tap's input ahead of the vector they
// load (kernels_forward-inl.h): on Zen 5, where they won 1.03-1.4x, and machines not measured; not on Zen 4
// (AMD's family 19h with AVX-512), where pool3d's 2x2x2 windows ran 1.08-1.29x faster without them and
// resnet-stem's 3x3 (0.87-1.10x) and vgg's 2x2 (0.94-1.06x) as fast either way within the machine's noise
// (bench/group_prefetch.cpp). Tests set it both ways.
extern bool cpu_group_prefetch;

// Whether the floating channels-first forwards ask for their rows ahead (RowPrefetch, kernels_forward-inl.h) into
// the outer caches only (prefetcht2) rather than into the first-level one (prefetcht0): on Zen 4, where the
// requests into the first-level cache held up the kernel (in `perf`, 38% of vgg's samples on the instruction after
// them) and the outer caches ran float32 forwards without an index 1.04-1.26x faster (vgg 1.10-1.22, pool3d
// 1.19-1.26), with the uint8 argmax 1.00-1.17x, averages 1.14-1.21x (seed, vgg, pool3d), int64 indices 0.95-1.11x,
// bfloat16 and 3x3 windows as fast (bench/row_prefetch.cpp); integer inputs 0.86-1.03x, so not theirs. Machines
// not measured keep prefetcht0. A prefetch changes no result: no test can tell the two apart.
extern bool cpu_row_prefetch_far;

}  // namespace poolkit::cpu
