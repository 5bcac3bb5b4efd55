#!/usr/bin/env python3
"""3-D max pooling beyond the standard pool3d case: the windows of 3-D CNNs' stems and stages (3x3x3 stride 2
padding 1, 1x3x3 stride (1, 2, 2) padding (0, 1, 1)) beside pool3d's 2x2x2 stride 2, on an 8 x 16 x 32^3 float32
input: PyTorch eager, torch.compile (inductor, fullgraph) and poolkit.torch, without and with indices
(return_indices=True: int64), timed in alternation (one call each, round after round), median per call.

    OMP_NUM_THREADS=2 .venv-pypi/bin/python bench/pool3d_windows.py [--layout nchw|nhwc|both] [--reps 15]
        [--threads 2]
"""
import argparse
import statistics
import time

import torch
import torch.nn.functional as F

import poolkit.torch as P

WINDOWS = [((3, 3, 3), (2, 2, 2), (1, 1, 1)), ((1, 3, 3), (1, 2, 2), (0, 1, 1)), ((2, 2, 2), (2, 2, 2), (0, 0, 0))]


def calls(K, S, Pd, indices):
    def torch_fn(x):
        return F.max_pool3d(x, K, S, Pd, return_indices=indices)

    def poolkit_fn(x):
        return P.max_pool3d(x, K, S, Pd, return_indices=indices)

    torch._dynamo.reset()
    return {"PyTorch": torch_fn, "torch.compile": torch.compile(torch_fn, fullgraph=True), "poolkit": poolkit_fn}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--layout", choices=("nchw", "nhwc", "both"), default="both")
    ap.add_argument("--reps", type=int, default=15, help="timed rounds after two warm-up calls (default 15)")
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    if a.reps < 1:
        ap.error("--reps: must be at least 1")
    torch.set_num_threads(a.threads)
    print("| layout | window | stride | padding | indices | PyTorch ms | torch.compile ms | poolkit ms | "
          "vs PyTorch | vs torch.compile |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for layout in (("nchw", "nhwc") if a.layout == "both" else (a.layout,)):
        x = torch.randn(8, 16, 32, 32, 32)
        if layout == "nhwc":
            x = x.contiguous(memory_format=torch.channels_last_3d)
        for K, S, Pd in WINDOWS:
            for indices in (False, True):
                fns = calls(K, S, Pd, indices)
                ref = fns["PyTorch"](x)
                for name, fn in fns.items():
                    for _ in range(2):
                        out = fn(x)
                    for r, o in zip(ref if indices else (ref,), out if indices else (out,)):
                        if not torch.equal(r, o):
                            raise SystemExit(f"{name} differs from PyTorch: {layout} {K} {S} {Pd} indices={indices}")
                times = {name: [] for name in fns}
                for _ in range(a.reps):
                    for name, fn in fns.items():
                        t = time.perf_counter()
                        fn(x)
                        times[name].append(time.perf_counter() - t)
                ms = {name: statistics.median(v) * 1e3 for name, v in times.items()}
                print(f"| {layout} | {'x'.join(map(str, K))} | {'x'.join(map(str, S))} | {'x'.join(map(str, Pd))} | "
                      f"{'int64' if indices else 'none'} | {ms['PyTorch']:.2f} | {ms['torch.compile']:.2f} | "
                      f"{ms['poolkit']:.2f} | {ms['PyTorch'] / ms['poolkit']:.2f}x | "
                      f"{ms['torch.compile'] / ms['poolkit']:.2f}x |", flush=True)


if __name__ == "__main__":
    main()
