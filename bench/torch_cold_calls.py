"""What an eager poolkit.torch call costs besides its kernel: small calls, each right after a 100 MB fill (the caches
cold, as after any large layer), poolkit.torch against torch.nn.functional, in turn, rep after rep (medians,
microseconds); inference-sized calls (one image) warm, back to back; then whole large calls (the allocating rows
of compare.py that such costs weigh on), each right after an untimed call of its own (milliseconds). Ratios above
1: poolkit faster.

Usage: OMP_NUM_THREADS=2 .venv-pypi/bin/python bench/torch_cold_calls.py [--reps 200] [--large-reps 25]"""
import argparse
import statistics
import time

import torch
import torch.nn.functional as F

import poolkit.torch as pt

SMALL = [  # (name, input shape, channels-last, call taking (module, x))
    ("max_pool2d k3 s2 p1", (1, 8, 14, 14), False, lambda m, x: m.max_pool2d(x, 3, 2, 1)),
    ("max_pool2d k2 + indices", (1, 8, 14, 14), False, lambda m, x: m.max_pool2d(x, 2, return_indices=True)),
    ("max_pool2d k3 s2 p1, channels-last", (1, 8, 14, 14), True, lambda m, x: m.max_pool2d(x, 3, 2, 1)),
    ("avg_pool2d k2", (1, 8, 14, 14), False, lambda m, x: m.avg_pool2d(x, 2)),
    ("adaptive_avg_pool2d 1", (1, 8, 7, 7), False, lambda m, x: m.adaptive_avg_pool2d(x, 1)),
    ("adaptive_max_pool2d 3", (1, 8, 7, 7), False, lambda m, x: m.adaptive_max_pool2d(x, 3)),
    ("max_pool3d k2", (1, 8, 8, 8, 8), False, lambda m, x: m.max_pool3d(x, 2)),
]
ONE_IMAGE = [  # batch 1 of the layers of BENCH_CASES.md's models
    ("resnet-stem, 1 image", (1, 64, 112, 112), False, lambda m, x: m.max_pool2d(x, 3, 2, 1)),
    ("resnet-stem, 1 image, channels-last", (1, 64, 112, 112), True, lambda m, x: m.max_pool2d(x, 3, 2, 1)),
    ("gap, 1 image", (1, 2048, 7, 7), False, lambda m, x: m.adaptive_avg_pool2d(x, 1)),
    ("gap, 1 image, channels-last", (1, 2048, 7, 7), True, lambda m, x: m.adaptive_avg_pool2d(x, 1)),
    ("vgg, 1 image", (1, 128, 112, 112), False, lambda m, x: m.max_pool2d(x, 2)),
]
LARGE = [  # compare.py's cases (BENCH_CASES.md)
    ("gap NCHW", (256, 2048, 7, 7), False, lambda m, x: m.adaptive_avg_pool2d(x, 1)),
    ("pool3d NHWC max", (8, 64, 32, 32, 32), True, lambda m, x: m.max_pool3d(x, 2)),
    ("resnet-stem NHWC max", (32, 64, 112, 112), True, lambda m, x: m.max_pool2d(x, 3, 2, 1)),
]


def tensor(shape, channels_last):
    x = torch.randn(*shape)
    if channels_last:
        x = x.contiguous(memory_format=torch.channels_last if len(shape) == 4 else torch.channels_last_3d)
    return x


def timed(f):
    s = time.perf_counter()
    f()
    return time.perf_counter() - s


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--reps", type=int, default=200)
    p.add_argument("--warm-reps", type=int, default=300)
    p.add_argument("--large-reps", type=int, default=25)
    a = p.parse_args()
    torch.set_num_threads(2)
    fill = torch.empty(100_000_000 // 4)
    print("small calls after a 100 MB fill: PyTorch us, poolkit us, poolkit's speed-up")
    for name, shape, cl, call in SMALL:
        x = tensor(shape, cl)
        both = {"PyTorch": lambda: call(F, x), "poolkit": lambda: call(pt, x)}
        ref, got = both["PyTorch"](), both["poolkit"]()
        for r, g in zip(*[v if isinstance(v, tuple) else (v,) for v in (ref, got)]):
            torch.testing.assert_close(g, r, rtol=1e-6, atol=1e-6)  # (a global mean's order differs in the last bit)
        t = {k: [] for k in both}
        for rep in range(a.reps):
            for k in (("PyTorch", "poolkit") if rep % 2 else ("poolkit", "PyTorch")):
                fill.fill_(rep)
                t[k].append(timed(both[k]) * 1e6)
        m = {k: statistics.median(v) for k, v in t.items()}
        print(f"  {name:38s} {m['PyTorch']:7.1f} {m['poolkit']:7.1f}  {m['PyTorch'] / m['poolkit']:.2f}x")
    print("one image, warm: PyTorch us, poolkit us, poolkit's speed-up")
    for name, shape, cl, call in ONE_IMAGE:
        x = tensor(shape, cl)
        both = {"PyTorch": lambda: call(F, x), "poolkit": lambda: call(pt, x)}
        t = {k: [] for k in both}
        for rep in range(a.warm_reps):
            for k in (("PyTorch", "poolkit") if rep % 2 else ("poolkit", "PyTorch")):
                t[k].append(timed(both[k]) * 1e6)
        m = {k: statistics.median(v) for k, v in t.items()}
        print(f"  {name:38s} {m['PyTorch']:7.1f} {m['poolkit']:7.1f}  {m['PyTorch'] / m['poolkit']:.2f}x")
    print("large allocating calls: PyTorch ms, poolkit ms, poolkit's speed-up")
    for name, shape, cl, call in LARGE:
        x = tensor(shape, cl)
        both = {"PyTorch": lambda: call(F, x), "poolkit": lambda: call(pt, x)}
        t = {k: [] for k in both}
        for rep in range(a.large_reps):
            for k in (("PyTorch", "poolkit") if rep % 2 else ("poolkit", "PyTorch")):
                both[k]()
                t[k].append(timed(both[k]) * 1e3)
        m = {k: statistics.median(v) for k, v in t.items()}
        print(f"  {name:38s} {m['PyTorch']:7.3f} {m['poolkit']:7.3f}  {m['PyTorch'] / m['poolkit']:.2f}x")


if __name__ == "__main__":
    main()
