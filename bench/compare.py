#!/usr/bin/env python3
"""poolkit against PyTorch CPU on the cases of shared/BENCH_CASES.md, in one process with the same thread count.

For each case and layout: the allocating forward call of each library (with and without PyTorch's int64 indices)
and a training step through autograd (forward, then backward; poolkit.torch saves its compact argmax), as median
times, as fractions of a plain copy's bandwidth measured in the same run, and as poolkit's speed-up. Writes a
markdown table (default bench/RESULTS-compare.md) and a PNG bar chart beside it.

usage: python bench/compare.py [--threads N] [--reps N] [--case NAME]... [--out FILE]
(poolkit must be importable: pip install . or PYTHONPATH=build/<dir>/python)
"""
import argparse
import os
import platform
import statistics
import struct
import sys
import time
import zlib

CASES = [  # name, shape, kind, kernel, stride, padding, count_include_pad, operators
    ("seed", (16384, 2, 32, 32), "max+avg", 2, 2, 0, True),
    ("resnet-stem", (32, 64, 112, 112), "max", 3, 2, 1, True),
    ("vgg", (32, 128, 112, 112), "max", 2, 2, 0, True),
    ("overlap-avg", (32, 64, 56, 56), "avg", 3, 1, 1, False),
    ("gap", (256, 2048, 7, 7), "gap", None, None, None, True),
    ("adaptive", (64, 256, 13, 13), "adaptive", None, None, None, True),
    ("pool3d", (8, 64, 32, 32, 32), "max", 2, 2, 0, True),
]


def parse():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--case", action="append")
    p.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "RESULTS-compare.md"))
    return p.parse_args()


ARGS = parse()
os.environ["OMP_NUM_THREADS"] = str(ARGS.threads)  # poolkit's OpenMP threads, read when the library loads
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import poolkit.torch as pt  # noqa: E402

torch.set_num_threads(ARGS.threads)


def median_seconds(fn, reps):
    fn()
    times = []
    start = time.perf_counter()
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
        if time.perf_counter() - start > 5:
            break
    return statistics.median(times)


def copy_bandwidth():
    a = torch.ones(64 << 20)
    b = torch.empty_like(a)
    t = median_seconds(lambda: b.copy_(a), ARGS.reps)
    return 2 * a.numel() * 4 / t


def functions(case):
    name, shape, kind, k, s, p, cip = case
    r = len(shape) - 2
    tmax = getattr(F, f"max_pool{r}d")
    pmax = getattr(pt, f"max_pool{r}d")
    tavg = getattr(F, f"avg_pool{r}d")
    pavg = getattr(pt, f"avg_pool{r}d")
    ops = []
    if "max" in kind:
        ops.append(("max-fwd", lambda x: tmax(x, k, s, p), lambda x: pmax(x, k, s, p)))
        ops.append(("max-fwd int64 indices", lambda x: tmax(x, k, s, p, return_indices=True),
                    lambda x: pmax(x, k, s, p, return_indices=True)))
    if "avg" in kind:
        ops.append(("avg-fwd", lambda x: tavg(x, k, s, p, count_include_pad=cip),
                    lambda x: pavg(x, k, s, p, count_include_pad=cip)))
    if kind == "gap":
        ops.append(("avg-fwd", lambda x: F.adaptive_avg_pool2d(x, 1), lambda x: pt.adaptive_avg_pool2d(x, 1)))
    if kind == "adaptive":
        ops.append(("avg-fwd", lambda x: F.adaptive_avg_pool2d(x, 7), lambda x: pt.adaptive_avg_pool2d(x, 7)))
    return ops


def nbytes(t):
    return t.numel() * t.element_size()


def run():
    copy = copy_bandwidth()
    rows = []
    cases = [c for c in CASES if not ARGS.case or c[0] in ARGS.case]
    total = sum(2 * 2 * len(functions(c)) for c in cases)
    done = 0
    for case in cases:
        for layout in ("nchw", "nhwc"):
            x = torch.rand(case[1])
            if layout == "nhwc":
                x = x.to(memory_format=torch.channels_last if x.dim() == 4 else torch.channels_last_3d)
            for op, tfn, pfn in functions(case):
                y = tfn(x)
                out = y if isinstance(y, torch.Tensor) else y[0]
                fwd_bytes = nbytes(x) + sum(nbytes(t) for t in (y if isinstance(y, tuple) else (y,)))
                for mode in ("forward", "train step"):
                    done += 1
                    print(f"\r[{done}/{total}] {case[0]} {layout} {op} {mode} ...          ", end="", file=sys.stderr)
                    if mode == "forward":
                        tt = median_seconds(lambda: tfn(x), ARGS.reps)
                        tp = median_seconds(lambda: pfn(x), ARGS.reps)
                        b = fwd_bytes
                    else:
                        if "indices" in op:
                            continue
                        xg = x.detach().clone(memory_format=torch.preserve_format).requires_grad_()
                        dy = torch.rand_like(out)

                        def step(fn):
                            xg.grad = None
                            fn(xg).backward(dy)
                        tt = median_seconds(lambda: step(tfn), ARGS.reps)
                        tp = median_seconds(lambda: step(pfn), ARGS.reps)
                        b = nbytes(x) + 2 * nbytes(out) + nbytes(x)  # x, y, dy, dx once each
                    rows.append((case[0], layout, op, mode, tt, tp, b))
    print("\r" + " " * 70 + "\r", end="", file=sys.stderr)
    return copy, rows


def write_png(path, rows, copy):
    """A bar chart without plotting libraries: per row, PyTorch (grey) and poolkit (blue) as fractions of copy."""
    bar, gap, height = 6, 6, 200
    width = max(1, len(rows) * (2 * bar + gap) + gap)
    img = [[(255, 255, 255)] * width for _ in range(height)]
    for y in (0, height // 2):  # lines at 1.0 and 0.5 of copy
        for x in range(width):
            img[y][x] = (200, 80, 80)
    for i, (_, _, _, _, tt, tp, b) in enumerate(rows):
        for j, (t, colour) in enumerate(((tt, (150, 150, 150)), (tp, (40, 90, 200)))):
            frac = min(1.0, b / t / copy)
            x0 = gap + i * (2 * bar + gap) + j * bar
            for y in range(height - int(frac * (height - 1)), height):
                for x in range(x0, x0 + bar):
                    img[y][x] = colour
    raw = b"".join(b"\x00" + bytes(c for px in row for c in px) for row in img)

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)) +
                chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def main():
    copy, rows = run()
    png = os.path.splitext(ARGS.out)[0] + ".png"
    lines = [f"# poolkit vs PyTorch {torch.__version__} (CPU), {ARGS.threads} thread(s)", "",
             f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs. Plain copy "
             f"{copy / 1e9:.1f} GB/s (bytes read + written). Command: `python bench/compare.py --threads "
             f"{ARGS.threads} --reps {ARGS.reps}`. Allocating calls (torch.nn.functional vs poolkit.torch); the "
             "train step is forward with autograd, then backward.", "",
             "| case | layout | operator | call | PyTorch ms | poolkit ms | PyTorch of copy | poolkit of copy | "
             "poolkit speed-up |", "|---|---|---|---|---|---|---|---|---|"]
    for name, layout, op, mode, tt, tp, b in rows:
        lines.append(f"| {name} | {layout} | {op} | {mode} | {tt * 1e3:.2f} | {tp * 1e3:.2f} | "
                     f"{b / tt / copy:.2f} | {b / tp / copy:.2f} | {tt / tp:.2f}x |")
    lines += ["", f"Chart: `{os.path.basename(png)}` (per row: PyTorch grey, poolkit blue; fraction of copy, "
              "red lines at 0.5 and 1.0)."]
    with open(ARGS.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    write_png(png, rows, copy)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
