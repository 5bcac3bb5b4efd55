#!/usr/bin/env python3
"""Is a kernel bound by memory or by the core? Times a poolkit call per output cell on one image, whose tensors stay
in the cache between calls, and on 32 images, read from memory. A kernel that takes as long per cell in the cache
as from memory is bound by the core; issue 4's notes in bench/RESULTS.md use it.

  --op max-fwd  max forward with the compact argmax, resnet-stem's 3x3 stride-2 pad-1 windows (64 channels,
                112x112), float32, bfloat16 and float16, per output
  --op avg-bwd  average backward of overlap-avg (3x3 stride 1 pad 1, count_include_pad false, 64 channels,
                56x56), float32, per dx cell

    .venv/bin/python bench/in_cache.py [--op max-fwd] [--threads 2] [--layout nchw|nhwc|both]

Needs torch (for 16-bit tensors) and poolkit importable. One image per call is short (0.1-0.2 ms): call
overhead weighs on it, most for channels-last, whose single image splits into few tasks.
"""
import argparse
import time

import torch

from poolkit import _core as core


def median_seconds(fn, reps):
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return sorted(times)[reps // 2]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--op", choices=("max-fwd", "avg-bwd"), default="max-fwd")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--layout", choices=("nchw", "nhwc", "both"), default="both")
    args = ap.parse_args()
    if args.threads < 1:
        ap.error("--threads must be at least 1")
    torch.set_num_threads(args.threads)  # (the OpenMP both libraries run on: poolkit's calls take it too)
    layouts = ("nchw", "nhwc") if args.layout == "both" else (args.layout,)
    print(f"{args.threads} thread(s); ns per {'output' if args.op == 'max-fwd' else 'dx cell'}: one image in the "
          "cache / 32 images from memory")
    for layout in layouts:
        fmt = torch.channels_last if layout == "nhwc" else torch.contiguous_format
        for dt in (torch.float32, torch.bfloat16, torch.float16) if args.op == "max-fwd" else (torch.float32,):
            per_cell = []
            for n, reps in ((1, 400), (32, 15)):
                if args.op == "max-fwd":
                    g = core.torch_geometry([112, 112], [3, 3], [2, 2], [1, 1], [1, 1], False)
                    x = torch.randn(n, 64, 112, 112).to(dt).contiguous(memory_format=fmt)
                    y = torch.empty(n, 64, 56, 56, dtype=dt).contiguous(memory_format=fmt)
                    am = torch.empty(n, 64, 56, 56, dtype=torch.uint8).contiguous(memory_format=fmt)
                    sec = median_seconds(lambda: core.max_pool_forward(g, x, y, am), reps)
                    cells = y.numel()
                else:
                    g = core.torch_geometry([56, 56], [3, 3], [1, 1], [1, 1], [1, 1], False)
                    x = torch.randn(n, 64, 56, 56).contiguous(memory_format=fmt)  # dy
                    dx = torch.empty(n, 64, 56, 56).contiguous(memory_format=fmt)
                    sec = median_seconds(lambda: core.avg_pool_backward(g, False, None, x, dx), reps)
                    cells = dx.numel()
                per_cell.append(sec / cells * 1e9)
            mib = x.element_size() * x.numel() / n / 2**20
            print(f"{layout} {str(dt).replace('torch.', ''):9} {per_cell[0]:.3f} ({mib:.1f} MiB image) / "
                  f"{per_cell[1]:.3f}")


if __name__ == "__main__":
    main()
