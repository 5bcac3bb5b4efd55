#!/usr/bin/env python3
"""PyTorch's preallocated max pooling with int64 indices (aten max_pool2d_with_indices.out) against poolkit's core
forward into the same output buffers, with int64 indices, with the compact argmax and with none, in one process:
the calls timed in turn, rep after rep (the VM's memory pace moves within seconds), medians in ms.

usage: PYTHONPATH=build/release/python python bench/max_forward_inprocess.py [--shape N,C,H,W] [--kernel K]
       [--stride S] [--pad P] [--layout nchw|nhwc] [--reps R] [--threads T]
Defaults: BENCH_CASES.md's vgg case (32,128,112,112, 2x2 stride 2), channels-last, 9 reps, 2 threads.
"""
import argparse
import statistics
import time

import torch

from poolkit import _core as core


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--shape", default="32,128,112,112")
    p.add_argument("--kernel", type=int, default=2)
    p.add_argument("--stride", type=int, default=2)
    p.add_argument("--pad", type=int, default=0)
    p.add_argument("--layout", choices=("nchw", "nhwc"), default="nhwc")
    p.add_argument("--reps", type=int, default=9)
    p.add_argument("--threads", type=int, default=2)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    fmt = torch.channels_last if a.layout == "nhwc" else torch.contiguous_format
    x = torch.randn(*[int(s) for s in a.shape.split(",")]).contiguous(memory_format=fmt)
    K, S, P = [a.kernel] * 2, [a.stride] * 2, [a.pad] * 2
    y, idx = torch.nn.functional.max_pool2d(x, K, S, P, return_indices=True)
    y, idx = torch.empty_like(y), torch.empty_like(idx)
    idx8 = torch.empty(idx.shape, dtype=torch.uint8).contiguous(memory_format=fmt)
    g = core.torch_geometry(list(x.shape[2:]), K, S, P, [1, 1], False)
    calls = {
        "PyTorch int64 (out=)": lambda: torch.ops.aten.max_pool2d_with_indices.out(x, K, S, P, [1, 1], False,
                                                                                    out=y, indices=idx),
        "poolkit int64": lambda: core.max_pool_forward(g, x, y, idx),
        "poolkit uint8": lambda: core.max_pool_forward(g, x, y, idx8),
        "poolkit none": lambda: core.max_pool_forward(g, x, y, None),
    }
    calls["PyTorch int64 (out=)"]()
    want = idx.clone()
    calls["poolkit int64"]()
    assert torch.equal(idx, want), "poolkit's int64 indices differ from PyTorch's"
    times = {k: [] for k in calls}
    for f in calls.values():
        f()
    for _ in range(a.reps):
        for k, f in calls.items():
            t0 = time.perf_counter()
            f()
            times[k].append(time.perf_counter() - t0)
    ms = {k: statistics.median(v) * 1e3 for k, v in times.items()}
    base = ms["PyTorch int64 (out=)"]
    for k, v in ms.items():
        print(f"{k:22s} {v:7.3f} ms   PyTorch int64 / this {base / v:.2f}x")


if __name__ == "__main__":
    main()
