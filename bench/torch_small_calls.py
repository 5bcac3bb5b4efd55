"""What an eager poolkit.torch call costs besides its kernel, against torch.nn.functional, the two called in turn,
rep after rep (medians): small calls each right after a 100 MB fill (the caches cold, as after any large layer);
inference-sized calls (one image) warm, back to back; whole large calls (the allocating rows of compare.py that
such costs weigh on), each right after an untimed call of its own. Speed-ups above 1: poolkit faster.

Usage: OMP_NUM_THREADS=2 .venv-pypi/bin/python bench/torch_small_calls.py [--reps 200]
       [--out bench/RESULTS-small-calls.md]"""
import argparse
import os
import platform
import sys

import torch
import torch.nn.functional as F

import poolkit.torch as pt
from model_step import alternate  # (bench/)


def _max3(m, x):
    return m.max_pool2d(x, 3, 2, 1)


def _gap(m, x):
    return m.adaptive_avg_pool2d(x, 1)


# (row, input shape, channels-last, call taking (module, x))
SMALL = [
    ("max_pool2d 3x3 stride 2", (1, 8, 14, 14), False, _max3),
    ("max_pool2d 2x2 with indices", (1, 8, 14, 14), False, lambda m, x: m.max_pool2d(x, 2, return_indices=True)),
    ("max_pool2d 3x3 stride 2", (1, 8, 14, 14), True, _max3),
    ("avg_pool2d 2x2", (1, 8, 14, 14), False, lambda m, x: m.avg_pool2d(x, 2)),
    ("adaptive_avg_pool2d to 1", (1, 8, 7, 7), False, _gap),
    ("adaptive_max_pool2d to 3", (1, 8, 7, 7), False, lambda m, x: m.adaptive_max_pool2d(x, 3)),
    ("max_pool3d 2x2x2", (1, 8, 8, 8, 8), False, lambda m, x: m.max_pool3d(x, 2)),
]
ONE_IMAGE = [  # batch 1 of BENCH_CASES.md's cases
    ("resnet-stem", (1, 64, 112, 112), False, _max3),
    ("resnet-stem", (1, 64, 112, 112), True, _max3),
    ("gap", (1, 2048, 7, 7), False, _gap),
    ("gap", (1, 2048, 7, 7), True, _gap),
    ("vgg", (1, 128, 112, 112), False, lambda m, x: m.max_pool2d(x, 2)),
]
LARGE = [  # BENCH_CASES.md's cases
    ("gap", (256, 2048, 7, 7), False, _gap),
    ("pool3d max", (8, 64, 32, 32, 32), True, lambda m, x: m.max_pool3d(x, 2)),
    ("resnet-stem", (32, 64, 112, 112), True, _max3),
]


def tensor(shape, channels_last):
    x = torch.randn(*shape)
    if channels_last:
        x = x.contiguous(memory_format=torch.channels_last if len(shape) == 4 else torch.channels_last_3d)
    return x


def race(shape, channels_last, call, reps, before):
    """Median seconds of torch.nn.functional's and poolkit.torch's call, in turn, before(rep, f) run ahead of each
    timed call f; their outputs checked alike first."""
    x = tensor(shape, channels_last)
    both = {"PyTorch": lambda: call(F, x), "poolkit": lambda: call(pt, x)}
    ref, got = both["PyTorch"](), both["poolkit"]()
    for r, g in zip(*[v if isinstance(v, tuple) else (v,) for v in (ref, got)]):
        torch.testing.assert_close(g, r, rtol=1e-6, atol=1e-6)  # (a global mean's order differs in the last bit)
    t = alternate(both, reps, before)
    return t["PyTorch"], t["poolkit"]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--reps", type=int, default=200, help="reps of the cold small calls (the warm ones: 1.5x, the "
                   "large ones: 1/8)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--out", help="also write the table, with the machine and the command, to this Markdown file")
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    fill = torch.empty(100_000_000 // 4)
    groups = [("caches cold", SMALL, a.reps, lambda rep, f: fill.fill_(rep), 1e6, "us"),
              ("warm, one image", ONE_IMAGE, a.reps * 3 // 2, lambda rep, f: None, 1e6, "us"),
              ("warm, allocating", LARGE, max(5, a.reps // 8), lambda rep, f: f(), 1e3, "ms")]
    lines = ["| call | input | layout | when | PyTorch | poolkit | poolkit's speed-up |", "|---|---|---|---|---|---|---|"]
    for when, rows, reps, before, scale, unit in groups:
        for name, shape, cl, call in rows:
            ta, tb = race(shape, cl, call, reps, before)
            pa, pb = (f"{v * scale:.{1 if unit == 'us' else 2}f} {unit}" for v in (ta, tb))
            lines.append(f"| {name} | {'x'.join(map(str, shape))} | {'NHWC' if cl else 'NCHW'} | {when} | {pa} | {pb} | "
                         f"{ta / tb:.2f}x |")
            print(lines[-1], flush=True)
    if a.out:
        head = [f"Eager calls of torch.nn.functional and poolkit.torch, float32, torch {torch.__version__}, {a.threads} "
                f"thread(s), the two in turn, medians. Caches cold: each call right after a 100 MB fill; warm, "
                f"allocating: each right after an untimed call of its own. Machine: "
                f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs. Command: "
                f"`{' '.join(['bench/torch_small_calls.py'] + sys.argv[1:])}`.", ""]
        with open(a.out, "w") as f:
            f.write("\n".join(head + lines) + "\n")


if __name__ == "__main__":
    main()
