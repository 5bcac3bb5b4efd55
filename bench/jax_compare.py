#!/usr/bin/env python3
"""poolkit.jax against lax.reduce_window (what flax.linen and Keras' JAX backend pool with) on the cases of
shared/BENCH_CASES.md, and a Keras training step with keras.layers against poolkit.keras, on the CPU.

Every call is jitted. forward: the pooled output. gradient: jax.vjp's forward and backward together (what jax.grad
runs: poolkit saves its compact argmax, XLA rewrites max's gradient into select-and-scatter). Peers where
reduce_window has no such operator or a faster one exists: global average = jnp.mean over the spatial axes (gap;
gap-rw: reduce_window's sum over the whole plane, over the cell count), adaptive 13->7 = Keras' JAX
adaptive_average_pool. Medians after a warm-up (at least 21 calls for calls under 20 ms); the ratio is the peer's
time over poolkit's. "of copy": the bytes the call must move over the time, as a fraction of a plain copy's
bandwidth measured in this run (each input read once and each output written once; max's gradient: x, y, its uint8
argmax written and read, dy, dx; average's gradient: dy and dx, XLA dropping the unused forward on both sides).
Also: the cost of one jitted call on a tiny input (per-call overhead), and model.train_on_batch for a small CNN on
the seed case's planes.

usage: python bench/jax_compare.py [--reps N] [--case NAME]... [--layout nhwc|nchw|both] [--out FILE]
       [--save-rows FILE | --from-rows FILE]
(poolkit with poolkit._jax_ffi importable: pip install . with jax present, or PYTHONPATH=build/<dir>/python)
"""
import argparse
import json
import os
import platform
import statistics
import tempfile
import time

os.environ.setdefault("KERAS_BACKEND", "jax")
os.environ.setdefault("KERAS_HOME", tempfile.mkdtemp(prefix="poolkit-bench-keras-"))
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402
import charts  # noqa: E402  (bench/charts.py, beside this script)

import poolkit.jax as pj  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CASES = [  # name, (N, C, spatial...), kind, window, stride, padding (per side), count_include_pad, dtype
    ("seed", (16384, 2, 32, 32), "max", 2, 2, 0, True, "float32"),
    ("seed", (16384, 2, 32, 32), "avg", 2, 2, 0, True, "float32"),
    ("resnet-stem", (32, 64, 112, 112), "max", 3, 2, 1, True, "float32"),
    ("vgg", (32, 128, 112, 112), "max", 2, 2, 0, True, "float32"),
    ("overlap-avg", (32, 64, 56, 56), "avg", 3, 1, 1, False, "float32"),
    ("gap", (256, 2048, 7, 7), "gap", None, None, None, False, "float32"),
    ("gap", (256, 2048, 7, 7), "gap-rw", None, None, None, False, "float32"),
    ("adaptive", (64, 256, 13, 13), "adaptive", 7, None, None, False, "float32"),
    ("pool3d", (8, 64, 32, 32, 32), "max", 2, 2, 0, True, "float32"),
    ("half", (32, 64, 112, 112), "max", 3, 2, 1, True, "bfloat16"),
    ("half", (32, 64, 112, 112), "max", 3, 2, 1, True, "float16"),
]


def parse():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--case", action="append")
    p.add_argument("--layout", choices=("nhwc", "nchw", "both"), default="both")
    p.add_argument("--out", default=os.path.join(ROOT, "bench", "RESULTS-jax.md"))
    p.add_argument("--save-rows", help="append the measured case rows to this JSON-lines file and stop (a long run "
                                       "split into parts, e.g. one per case)")
    p.add_argument("--from-rows", help="take the case rows from this JSON-lines file instead of measuring them")
    return p.parse_args()


def median_ms(f, args, reps):
    jax.block_until_ready(f(*args))  # compile and warm up
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        jax.block_until_ready(f(*args))
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3


def medians_ms(peer, mine, args, reps):
    """Medians (ms) of the peer's calls, then of poolkit's, each run in a block of its own: timed in turns, each
    call paid for the other's threads still spinning after it (poolkit's OpenMP workers slowed jnp.mean from 3.5
    to 6.4 ms). Calls under 20 ms get at least 21 repetitions: their medians of 5 moved by tens of percent."""
    if median_ms(mine, args, 1) < 20:
        reps = max(reps, 21)
    return median_ms(peer, args, reps), median_ms(mine, args, reps)


def copy_bandwidth(reps):
    a = np.ones(64 << 20, np.float32)
    b = np.empty_like(a)
    ts = []
    for _ in range(reps + 1):
        t = time.perf_counter()
        np.copyto(b, a)
        ts.append(time.perf_counter() - t)
    return 2 * a.nbytes / statistics.median(ts[1:])


def pools(kind, rank, k, s, p, cip, cf):
    """(poolkit's function, the peer's) for one case, on inputs in the layout cf says."""
    win, strides = (k,) * rank, (s,) * rank
    pads = ((p, p),) * rank if p else "VALID"
    sp = tuple(range(2, 2 + rank)) if cf else tuple(range(1, 1 + rank))

    def full(v, fill):  # a per-spatial-axis tuple as reduce_window's per-axis one
        out = [fill] * (rank + 2)
        for a, e in zip(sp, v):
            out[a] = e
        return tuple(out)

    rw_pad = "VALID" if pads == "VALID" else full(pads, (0, 0))
    if kind == "max":
        return (lambda x: pj.max_pool(x, win, strides, pads, channels_first=cf),
                lambda x: lax.reduce_window(x, np.array(-np.inf, x.dtype), lax.max, full(win, 1), full(strides, 1),
                                            rw_pad))
    if kind == "avg":
        def peer(x):
            ssum = lax.reduce_window(x, np.array(0, x.dtype), lax.add, full(win, 1), full(strides, 1), rw_pad)
            if cip:
                return ssum / np.prod(win)
            # the cells counted per window: one plane of ones (a whole tensor of them is constant-folded by XLA
            # for minutes at these sizes), broadcast over batch and channels
            ones = jnp.ones([x.shape[a] if a in sp else 1 for a in range(x.ndim)], x.dtype)
            return ssum / lax.reduce_window(ones, np.array(0, x.dtype), lax.add, full(win, 1), full(strides, 1),
                                            rw_pad)
        return (lambda x: pj.avg_pool(x, win, strides, pads, cip, channels_first=cf), peer)
    if kind.startswith("gap"):
        def plane_window(x):  # the whole plane as reduce_window's window, its sum over the cell count
            win = full([x.shape[a] for a in sp], 1)
            ssum = lax.reduce_window(x, np.array(0, x.dtype), lax.add, win, win, "VALID")
            return jnp.squeeze(ssum, sp) / np.prod(win)
        return (lambda x: pj.global_avg_pool(x, channels_first=cf),
                plane_window if kind == "gap-rw" else lambda x: jnp.mean(x, axis=sp))
    from keras.src.backend.jax import nn as knn
    fmt = "channels_first" if cf else "channels_last"
    return (lambda x: pj.adaptive_avg_pool(x, (k,) * rank, channels_first=cf),
            lambda x: knn.adaptive_average_pool(x, (k,) * rank, data_format=fmt))


def bytes_moved(x, y, kind, grad):
    xb, yb = x.size * x.dtype.itemsize, y.size * y.dtype.itemsize
    if not grad:
        return xb + yb
    if kind != "max":  # only dx is asked for and the backward needs no forward: XLA drops it (peer and poolkit)
        return yb + xb
    return xb + 2 * y.size + yb + xb  # forward: read x, write y and the uint8 argmax; backward: read dy, argmax


def case_rows(case, layout, reps, copy_bw):
    name, shape, kind, k, s, p, cip, dtype = case
    rank = len(shape) - 2
    cf = layout == "nchw"
    dims = shape if cf else (shape[0],) + shape[2:] + (shape[1],)
    x = jnp.asarray(np.random.default_rng(0).standard_normal(dims, np.float32)).astype(dtype)
    mine, peer = pools(kind, rank, k, s, p, cip, cf)
    y = mine(x)
    dy = jnp.ones_like(y)
    rows = []
    for what, wrap in (("forward", lambda f: jax.jit(f)),
                       ("gradient", lambda f: jax.jit(lambda x, dy: jax.vjp(f, x)[1](dy)[0]))):
        args = (x,) if what == "forward" else (x, dy)
        t_peer, t_mine = medians_ms(wrap(peer), wrap(mine), args, reps)
        frac = bytes_moved(x, y, kind, what == "gradient") / (t_mine / 1e3) / copy_bw
        label = f"{kind} {dtype}" if dtype != "float32" else kind
        rows.append((name, layout, label, what, t_peer, t_mine, frac))
        print(f"{name:12s} {layout} {label:16s} {what:9s} peer {t_peer:9.2f} ms  poolkit {t_mine:8.2f} ms  "
              f"{t_peer / t_mine:6.2f}x  {frac:.2f} of copy", flush=True)
    return rows


def overhead_us(reps):
    x = jnp.ones((1, 4, 4, 1), jnp.float32)
    mine = jax.jit(lambda x: pj.max_pool(x, (2, 2), (2, 2)))
    peer = jax.jit(lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID"))
    ident = jax.jit(lambda x: x + 1)
    out = {}
    for label, f in (("jit(x + 1)", ident), ("lax.reduce_window", peer), ("poolkit.jax", mine)):
        n = 2000
        jax.block_until_ready(f(x))
        samples = []
        for _ in range(max(reps, 5)):
            t = time.perf_counter()
            for _ in range(n):
                r = f(x)
            jax.block_until_ready(r)
            samples.append((time.perf_counter() - t) / n * 1e6)
        out[label] = statistics.median(samples)
        print(f"per call, (1, 4, 4, 1) max 2x2: {label:18s} {out[label]:.1f} us", flush=True)
    return out


def keras_step(reps):
    """model.train_on_batch of Conv2D(8, 1) -> MaxPooling2D(2) -> Conv2D(8, 1) -> AveragePooling2D(2) ->
    GlobalAveragePooling2D -> Dense(10) on (4096, 32, 32, 2) float32 (the seed case's planes, channels-last)."""
    import keras
    import poolkit.keras as pk
    x = np.random.default_rng(0).standard_normal((4096, 32, 32, 2)).astype(np.float32)
    t = np.random.default_rng(1).standard_normal((4096, 10)).astype(np.float32)
    out = {}
    for label, m in (("keras.layers", keras.layers), ("poolkit.keras", pk)):
        keras.utils.set_random_seed(0)
        model = keras.Sequential([keras.Input((32, 32, 2)), keras.layers.Conv2D(8, 1), m.MaxPooling2D(2),
                                  keras.layers.Conv2D(8, 1), m.AveragePooling2D(2), m.GlobalAveragePooling2D(),
                                  keras.layers.Dense(10)])
        model.compile(optimizer="sgd", loss="mse")
        model.train_on_batch(x, t)
        ts = []
        for _ in range(reps):
            s = time.perf_counter()
            model.train_on_batch(x, t)
            ts.append(time.perf_counter() - s)
        out[label] = statistics.median(ts) * 1e3
        print(f"keras train step: {label:14s} {out[label]:.1f} ms", flush=True)
    return out


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            return next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor() or "cpu"


def main():
    a = parse()
    copy_bw = copy_bandwidth(a.reps)
    layouts = ("nhwc", "nchw") if a.layout == "both" else (a.layout,)
    rows = []
    for case in CASES:
        if a.from_rows or (a.case and case[0] not in a.case):
            continue
        for layout in layouts:
            rows += case_rows(case, layout, a.reps, copy_bw)
    if a.save_rows:
        with open(a.save_rows, "a") as f:
            f.writelines(json.dumps([*r, copy_bw]) + "\n" for r in rows)
        return
    if a.from_rows:
        with open(a.from_rows) as f:
            saved = [json.loads(line) for line in f]
        rows, copy_bw = [tuple(r[:-1]) for r in saved], statistics.median(r[-1] for r in saved)
    ovh = overhead_us(a.reps)
    step = keras_step(a.reps)
    cmd = "python bench/jax_compare.py" + "".join(f" --case {c}" for c in a.case or []) + \
        (f" --layout {a.layout}" if a.layout != "both" else "") + f" --reps {a.reps}" + \
        (" (cases run in parts with --save-rows, merged with --from-rows)" if a.from_rows else "")
    with open(a.out, "w") as f:
        f.write(f"# poolkit.jax vs lax.reduce_window (jax {jax.__version__}, CPU)\n\n")
        f.write(f"Machine: {platform.machine()}, {os.cpu_count()} CPUs ({cpu_model()}). Plain copy "
                f"{copy_bw / 1e9:.1f} GB/s (bytes read + written). Command: `{cmd}`. One process; XLA and poolkit "
                f"each with their default threads. Medians of {a.reps} (at least 21 for calls under 20 ms) after a "
                "warm-up; every call jitted.\n\n")
        f.write(__doc__.split("\n\n")[1].replace("\n", " ") + "\n\n")
        f.write("| case | layout | operator | call | lax.reduce_window (peer) ms | poolkit.jax ms | poolkit vs peer | "
                "poolkit of copy |\n|---|---|---|---|---|---|---|---|\n")
        for name, layout, label, what, tp, tm, frac in rows:
            f.write(f"| {name} | {layout} | {label} | {what} | {tp:.2f} | {tm:.2f} | {tp / tm:.2f}x | {frac:.2f} |\n")
        stem_name = os.path.basename(os.path.splitext(a.out)[0])
        f.write(f"\nCharts: `{stem_name}-speedup.png` (poolkit's speed-up per row, log scale) and "
                f"`{stem_name}-limit.png` (fraction of copy), drawn by bench/charts.py.\n")
        f.write("\nPeers: gap = `jnp.mean` over the spatial axes; gap-rw = `lax.reduce_window`'s sum over the whole plane over "
                "the cell count; adaptive = Keras' JAX `adaptive_average_pool`.\n\n")
        f.write("Per-call cost of one jitted call on a (1, 4, 4, 1) input, max 2x2 (mean of 2000 calls, median of "
                f"{max(a.reps, 5)}): " + ", ".join(f"{k} {v:.1f} us" for k, v in ovh.items()) +
                f". poolkit's FFI call over a trivial jitted op: {ovh['poolkit.jax'] - ovh['jit(x + 1)']:.1f} us.\n\n")
        f.write(keras_step.__doc__.replace("\n   ", "") + " Median ms: " +
                ", ".join(f"{k} {v:.1f}" for k, v in step.items()) +
                f"; poolkit.keras {step['keras.layers'] / step['poolkit.keras']:.2f}x.\n")
    # The two charts of bench/charts.py beside the table (the peer's bytes are poolkit's: the same work).
    chart_rows = [(name, layout, label, what, {"lax.reduce_window": (tp / 1e3, frac * copy_bw * tm / 1e3),
                                               "poolkit": (tm / 1e3, frac * copy_bw * tm / 1e3)})
                  for name, layout, label, what, tp, tm, frac in rows]
    stem = os.path.splitext(a.out)[0]
    machine = f"{platform.machine()}, {os.cpu_count()} CPUs"
    charts.speedup_chart(chart_rows, stem + "-speedup.png",
                         f"poolkit.jax vs lax.reduce_window (jax {jax.__version__}, CPU): speed-up per row\n"
                         f"{machine}; `{cmd}`")
    charts.limit_chart(chart_rows, stem + "-limit.png",
                       f"Fraction of a plain copy's bandwidth ({copy_bw / 1e9:.1f} GB/s) per row\n{machine}; `{cmd}`",
                       copy_bw)
    print("wrote", a.out, "and its charts")


if __name__ == "__main__":
    main()
