#!/usr/bin/env python3
"""What a small pooling call costs under torch.compile: PyTorch's and poolkit.torch's calls on a 1 x 8 x 8 x 8
input (the loop's own time is small beside the call's), eager and compiled (inductor, fullgraph), timed in turn in
one process, best of 5 runs of --calls calls, in microseconds a call. poolkit's compiled calls are timed through
the nograd overloads (python/poolkit/torch/_ops.py: C++ kernels where poolkit/torch/_cpu_kernels.so is loaded,
else the Python kernels; POOLKIT_TORCH_CPU_KERNELS=0 keeps them unloaded) and through the default overloads (their
autograd layer and Python kernels, as before session 37).

    OMP_NUM_THREADS=2 .venv-pypi/bin/python bench/compiled_call_cost.py [--calls 20000]
"""
import argparse
import time

import torch
import torch.nn.functional as F

import poolkit.torch as pt
from poolkit.torch import _ops

CALLS = {"max_pool2d 3x3 s2 p1": (lambda m: m.max_pool2d, (3, 2, 1)),
         "avg_pool2d 3x3 s2 p1": (lambda m: m.avg_pool2d, (3, 2, 1)),
         "adaptive_avg_pool2d to 2x2": (lambda m: m.adaptive_avg_pool2d, (2,))}


def best_us(f, calls):
    for _ in range(200):
        f()
    best = float("inf")
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(calls):
            f()
        best = min(best, (time.perf_counter() - t) / calls)
    return best * 1e6


class DefaultOverload:
    """While active, poolkit.torch's compiled calls trace to the default overloads (dynamo guards on the choice, so
    it stays active while that variant is timed too)."""

    def __enter__(self):
        self.untracked, _ops._untracked = _ops._untracked, lambda x: False

    def __exit__(self, *exc):
        _ops._untracked = self.untracked


class Plain:
    def __enter__(self):
        pass

    def __exit__(self, *exc):
        pass


X = torch.randn(1, 8, 8, 8)

if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=20000)
    args = ap.parse_args()
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; poolkit's C++ kernels loaded: "
          f"{_ops.CPU_KERNELS}; us a call, input 1 x 8 x 8 x 8 float32\n")
    cols = ["torch eager", "poolkit eager", "torch.compile", "poolkit compiled", "poolkit compiled, default overload"]
    print("| call | " + " | ".join(cols) + " | poolkit compiled / torch.compile |")
    print("|---" * (len(cols) + 2) + "|")
    for name, (pick, a) in CALLS.items():
        tf, pf = (lambda x, f=pick(F), a=a: f(x, *a)), (lambda x, f=pick(pt), a=a: f(x, *a))
        torch._dynamo.reset()
        variants = [(tf, Plain), (pf, Plain), (torch.compile(tf, fullgraph=True), Plain),
                    (torch.compile(pf, fullgraph=True), Plain), (torch.compile(pf, fullgraph=True), DefaultOverload)]
        t = []
        for f, mode in variants:
            with mode():
                t.append(best_us(lambda f=f: f(X), args.calls))
        print(f"| {name} | " + " | ".join(f"{v:.1f}" for v in t) + f" | {t[3] / t[2]:.2f} |")
