#!/usr/bin/env python3
"""Shapes beyond the standard cases of BENCH_CASES.md, beside PyTorch eager and torch.compile (inductor, fullgraph):
3-D max windows of 3-D CNNs (3x3x3 stride 2 padding 1, 1x3x3 stride (1, 2, 2) padding (0, 1, 1), and pool3d's
2x2x2 stride 2) on 8 x 16 x 32^3, and channels-last tensors of few channels (3, 4, 8: images and small networks).
Each row: the forward without indices, the max forward with int64 indices (return_indices=True), and a training
step (forward, then backward of a fixed gradient), float32, the three libraries timed in alternation (one call
each, round after round), median per call; results checked against PyTorch's before timing.

    OMP_NUM_THREADS=2 .venv-pypi/bin/python bench/more_shapes.py [--only 3d|few] [--reps 11] [--threads 2] \\
        [--out bench/RESULTS-more-shapes.md]
"""
import argparse
import os
import platform
import sys

import torch
import torch.nn.functional as F

import poolkit.torch as P
from model_step import alternate  # (bench/: one step of each per round, median each)

# (group, N x C x spatial, channels-last, op, kernel, stride, padding)
CASES = [
    ("3d", (8, 16, 32, 32, 32), False, "max", 3, 2, 1),
    ("3d", (8, 16, 32, 32, 32), False, "max", (1, 3, 3), (1, 2, 2), (0, 1, 1)),
    ("3d", (8, 16, 32, 32, 32), False, "max", 2, 2, 0),
    ("3d", (8, 16, 32, 32, 32), True, "max", 3, 2, 1),
    ("3d", (8, 16, 32, 32, 32), True, "max", (1, 3, 3), (1, 2, 2), (0, 1, 1)),
    ("3d", (8, 16, 32, 32, 32), True, "max", 2, 2, 0),
    ("few", (32, 3, 224, 224), True, "max", 3, 2, 1),
    ("few", (32, 4, 224, 224), True, "max", 2, 2, 0),
    ("few", (32, 8, 112, 112), True, "max", 3, 2, 1),
    ("few", (32, 8, 56, 56), True, "avg", 3, 1, 1),
]


def functions(rank, op, K, S, Pd, indices):
    """PyTorch's and poolkit's call of the case (average: count_include_pad=False)."""
    if op == "max":
        return (lambda x: getattr(F, f"max_pool{rank}d")(x, K, S, Pd, return_indices=indices),
                lambda x: getattr(P, f"max_pool{rank}d")(x, K, S, Pd, return_indices=indices))
    return (lambda x: getattr(F, f"avg_pool{rank}d")(x, K, S, Pd, count_include_pad=False),
            lambda x: getattr(P, f"avg_pool{rank}d")(x, K, S, Pd, count_include_pad=False))


def row(shape, cl, op, K, S, Pd, call, reps):
    x = torch.randn(*shape)
    if cl:
        x = x.contiguous(memory_format=torch.channels_last if len(shape) == 4 else torch.channels_last_3d)
    rank = len(shape) - 2
    eager, pk = functions(rank, op, K, S, Pd, call == "int64 indices")
    torch._dynamo.reset()
    libs = {"PyTorch": eager, "torch.compile": torch.compile(eager, fullgraph=True), "poolkit": pk}
    if call == "train step":
        xg = x.detach().clone().requires_grad_()
        dy = torch.randn_like(eager(x))

        def step(fn):
            def run():
                xg.grad = None
                fn(xg).backward(dy)
                return xg.grad
            return run
        calls = {name: step(fn) for name, fn in libs.items()}
    else:
        calls = {name: (lambda fn=fn: fn(x)) for name, fn in libs.items()}
    want = calls["PyTorch"]()
    for name, fn in calls.items():
        for _ in range(2):
            got = fn()
        for w, g in zip(want if isinstance(want, tuple) else (want,), got if isinstance(got, tuple) else (got,)):
            if not torch.equal(w, g):
                raise SystemExit(f"{name} differs from PyTorch: {shape} {op} {K} {S} {Pd} {call}")
    return alternate(calls, reps)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", choices=("3d", "few"), help="one group of cases (default: both)")
    ap.add_argument("--reps", type=int, default=11, help="timed rounds after two warm-up calls (default 11)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", help="also write the table, with the machine and the command, to this Markdown file")
    a = ap.parse_args()
    if a.reps < 1:
        ap.error("--reps: must be at least 1")
    torch.set_num_threads(a.threads)
    lines = ["| input | layout | op | window | stride | padding | call | PyTorch ms | torch.compile ms | poolkit ms | "
             "vs PyTorch | vs torch.compile |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    print("\n".join(lines), flush=True)
    fmt = lambda v: "x".join(map(str, v)) if isinstance(v, tuple) else str(v)
    for group, shape, cl, op, K, S, Pd in CASES:
        if a.only and group != a.only:
            continue
        for call in ("forward",) + (("int64 indices",) if op == "max" else ()) + ("train step",):
            ms = {k: v * 1e3 for k, v in row(shape, cl, op, K, S, Pd, call, a.reps).items()}
            lines.append(f"| {fmt(shape)} | {'NHWC' if cl else 'NCHW'} | {op} | {fmt(K)} | {fmt(S)} | {fmt(Pd)} | "
                         f"{call} | {ms['PyTorch']:.2f} | {ms['torch.compile']:.2f} | {ms['poolkit']:.2f} | "
                         f"{ms['PyTorch'] / ms['poolkit']:.2f}x | {ms['torch.compile'] / ms['poolkit']:.2f}x |")
            print(lines[-1], flush=True)
    if a.out:
        head = [f"Shapes beyond the standard cases, float32, torch {torch.__version__}, {a.threads} thread(s), medians of "
                f"{a.reps} rounds of alternating calls. Machine: {platform.processor() or platform.machine()}, "
                f"{os.cpu_count()} CPUs. Command: `{' '.join(['bench/more_shapes.py'] + sys.argv[1:])}`. The train "
                "step is the forward and the backward of a fixed gradient; int64 indices: return_indices=True.", ""]
        with open(a.out, "w") as f:
            f.write("\n".join(head + lines) + "\n")


if __name__ == "__main__":
    main()
