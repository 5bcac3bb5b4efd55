#!/usr/bin/env python3
"""Whole-model effect of poolkit's pooling modules, and the ReLU -> max-pool pair of the ResNet stem.

1. A training step (zero_grad, forward, cross-entropy, backward, SGD step) of torchvision's ResNet-50 and VGG-11
   (random weights) and a small 3-D CNN (cnn3d below), in eager mode and under torch.compile (inductor), with
   torch.nn's pooling modules (unconverted), with poolkit's (`poolkit.torch.nn.convert(model)`), and with poolkit's
   after `poolkit.torch.nn.pool_before_relu` (each ReLU -> max pool pair run as max pool -> ReLU). The variants
   of a model (--mode: eager, compiled or both) are timed in alternation (one step each, round after round), median
   per variant; on a 2-core machine run each model and mode as its own command. The pooling share of the eager step
   comes from torch.profiler: the CPU time under events whose name says "pool" (forward modules are wrapped in a
   record_function named "pool" for the profile only; backward nodes are named after their pooling function).
2. The ResNet stem's ReLU -> 3x3 stride-2 max pool (32 x 64 x 112 x 112) under torch.compile: torch's pair (inductor
   fuses the ReLU into its pooling loop), poolkit's pair (an opaque call after a ReLU pass), and poolkit's pool then
   ReLU (max pooling commutes with any increasing function: the ReLU runs on the output, a quarter of the cells;
   the gradient is the same, only the index of an all-negative window differs), written so and as the model's
   own ReLU -> MaxPool2d rewritten by `poolkit.torch.nn.pool_before_relu`, forward and training step.

    OMP_NUM_THREADS=2 PYTHONPATH=build/dev/python /work/venv-t2/bin/python bench/model_step.py [--batch 32] [--size 224] \\
        [--threads 2] [--reps 5] [--models resnet50,vgg11,cnn3d] [--mode eager|compiled|both] [--no-stem]
"""
import argparse
import copy
import os
import statistics
import time

import torch
import torch.nn.functional as F

import poolkit.torch as P
import poolkit.torch.nn as pnn
from poolkit.torch.relu_order import _Tracer  # the rewrite's own tracer, for the 'traced' control


class CNN3d(torch.nn.Module):
    """A small 3-D CNN: two conv-BN-ReLU-maxpool stages, a third stage, global average, linear."""

    def __init__(self, classes=10):
        super().__init__()
        def stage(i, o):
            return [torch.nn.Conv3d(i, o, 3, padding=1, bias=False), torch.nn.BatchNorm3d(o), torch.nn.ReLU()]
        self.features = torch.nn.Sequential(*stage(3, 32), torch.nn.MaxPool3d(2), *stage(32, 64),
                                            torch.nn.MaxPool3d(2), *stage(64, 128))
        self.pool = torch.nn.AdaptiveAvgPool3d(1)
        self.fc = torch.nn.Linear(128, classes)

    def forward(self, x):
        return self.fc(torch.flatten(self.pool(self.features(x)), 1))


def build(name, batch, size):
    import torchvision
    torch.manual_seed(0)
    if name == "resnet50":
        return torchvision.models.resnet50(weights=None), torch.randn(batch, 3, size, size), 1000
    if name == "vgg11":
        return torchvision.models.vgg11(weights=None), torch.randn(batch, 3, size, size), 1000
    if name == "cnn3d":  # clips of 16 frames at a quarter of the image side
        return CNN3d(), torch.randn(batch, 3, 16, size // 4, size // 4), 10
    raise SystemExit(f"model_step: unknown model {name!r} (resnet50, vgg11, cnn3d)")


def step_fn(model, x, target):
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)

    def step():
        opt.zero_grad(set_to_none=True)
        F.cross_entropy(model(x), target).backward()
        opt.step()
    return step


def pool_share(model, step):
    """Share of one eager step's CPU time under events named '...pool...' (outermost such events only)."""
    wrapped = []
    for m in model.modules():
        if "pool" in type(m).__name__.lower():
            fwd = m.forward

            def hooked(*a, _f=fwd, **k):
                with torch.profiler.record_function("pool"):
                    return _f(*a, **k)
            m.forward = hooked
            wrapped.append((m, fwd))
    step()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        t0 = time.perf_counter()
        step()
        total = time.perf_counter() - t0
    for m, fwd in wrapped:
        m.forward = fwd
    pooled = 0.0
    for e in prof.events():
        if "pool" not in e.name.lower():
            continue
        p, inner = e.cpu_parent, False
        while p is not None:
            if "pool" in p.name.lower():
                inner = True
                break
            p = p.cpu_parent
        if not inner:
            pooled += e.cpu_time_total * 1e-6
    return pooled / total


def alternate(variants, reps, before=None):
    """variants: name -> step callable (already warmed up). One step of each per round; median seconds each.
    before(rep, f), where given, runs (untimed) ahead of each timed step f."""
    times = {k: [] for k in variants}
    for rep in range(reps):
        for k, f in variants.items():
            if before:
                before(rep, f)
            t0 = time.perf_counter()
            f()
            times[k].append(time.perf_counter() - t0)
    return {k: statistics.median(v) for k, v in times.items()}


def models_section(args):
    print(f"## Training step, batch {args.batch}, {args.size}x{args.size} (3-D CNN: 16 frames of "
          f"{args.size // 4}x{args.size // 4}), float32, {args.threads} threads, median of {args.reps} alternating steps")
    print("poolkit modules from poolkit.torch.nn.convert; 'reordered': then poolkit.torch.nn.pool_before_relu; "
          "'traced': the converted model through torch.fx unchanged (what the rewrite's GraphModule changes by itself)")
    print()
    print("| model | mode | torch.nn ms | poolkit ms | speed-up | traced ms | speed-up | reordered ms | speed-up | "
          "pooling share (torch.nn / poolkit) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name in args.models.split(","):
        model, x, classes = build(name, args.batch, args.size)
        target = torch.randint(0, classes, (x.shape[0],))
        if args.channels_last:
            x = x.contiguous(memory_format=torch.channels_last if x.dim() == 4 else torch.channels_last_3d)
            model = model.to(memory_format=torch.channels_last if x.dim() == 4 else torch.channels_last_3d)
        variants = {"torch.nn": model, "poolkit": pnn.convert(copy.deepcopy(model))}
        variants["traced"] = torch.fx.GraphModule(variants["poolkit"], _Tracer().trace(variants["poolkit"]))
        variants["reordered"] = pnn.pool_before_relu(copy.deepcopy(variants["poolkit"]))
        steps, share = {}, {}
        if args.mode in ("eager", "both"):
            steps = {f"eager {k}": step_fn(m, x, target) for k, m in variants.items()}
            share = {k: pool_share(variants[k], steps[f"eager {k}"]) for k in ("torch.nn", "poolkit")}
        if args.mode in ("compiled", "both"):
            for k, m in ((f"compiled {k}", m) for k, m in variants.items()):
                t0 = time.perf_counter()
                steps[k] = step_fn(torch.compile(m), x, target)
                steps[k]()  # compiles
                print(f"({name} {k}: first step, with compilation, {time.perf_counter() - t0:.0f} s)", flush=True)
        for f in steps.values():
            f()
        t = alternate(steps, args.reps)
        for mode in ("eager", "compiled"):
            ms = [t.get(f"{mode} {k}") for k in variants]
            if ms[0] is None:
                continue
            sh = f"{share['torch.nn']:.1%} / {share['poolkit']:.1%}" if mode == "eager" else "n/a"
            cols = " | ".join(f"{v * 1e3:.1f} | {ms[0] / v:.3f}x" for v in ms[1:])
            print(f"| {name} | {mode} | {ms[0] * 1e3:.1f} | {cols} | {sh} |", flush=True)
    print()


def stem_section(args):
    shape = (32, 64, 112, 112)
    print(f"## ResNet stem ReLU -> max_pool2d(3, 2, 1) on {shape}, float32, torch.compile, {args.threads} threads, "
          f"median of {args.reps * 3} alternating calls")
    print()
    x = torch.randn(*shape)
    pairs = {
        "torch relu -> pool": lambda t: F.max_pool2d(F.relu(t), 3, 2, 1),
        "poolkit relu -> pool": lambda t: P.max_pool2d(F.relu(t), 3, 2, 1),
        "poolkit pool -> relu": lambda t: F.relu(P.max_pool2d(t, 3, 2, 1)),
        # the model's own order, rewritten by poolkit.torch.nn.pool_before_relu
        "poolkit pool_before_relu(relu -> pool)": pnn.pool_before_relu(pnn.convert(
            torch.nn.Sequential(torch.nn.ReLU(), torch.nn.MaxPool2d(3, 2, 1)))),
    }
    fwd, train = {}, {}
    xg = x.clone().requires_grad_()
    dy = torch.randn(32, 64, 56, 56)
    for k, f in pairs.items():
        c = torch.compile(f)
        with torch.no_grad():
            ref = F.max_pool2d(F.relu(x), 3, 2, 1)
            assert torch.equal(c(x), ref), k
        fwd[k] = lambda c=c: c(x)

        def tr(c=c):
            xg.grad = None
            c(xg).backward(dy)
        tr()
        train[k] = tr
    with torch.no_grad():
        tf = alternate(fwd, args.reps * 3)
    tt = alternate(train, args.reps * 3)
    print("| pair | forward ms | vs torch | training step ms | vs torch |")
    print("|---|---|---|---|---|")
    for k in pairs:
        print(f"| {k} | {tf[k] * 1e3:.2f} | {tf['torch relu -> pool'] / tf[k]:.2f}x | {tt[k] * 1e3:.2f} | "
              f"{tt['torch relu -> pool'] / tt[k]:.2f}x |")
    print()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--models", default="resnet50,vgg11,cnn3d")
    ap.add_argument("--channels-last", action="store_true", help="models and inputs in channels-last memory format")
    ap.add_argument("--mode", choices=("eager", "compiled", "both"), default="both")
    ap.add_argument("--no-stem", dest="stem", action="store_false")
    ap.add_argument("--no-models", dest="run_models", action="store_false")
    args = ap.parse_args()
    if args.batch < 1 or args.size < 32 or args.reps < 1 or args.threads < 1:
        ap.error("--batch, --reps and --threads must be >= 1, --size >= 32")
    torch.set_num_threads(args.threads)
    if os.environ.get("OMP_NUM_THREADS") != str(args.threads):  # poolkit's kernels take OpenMP's thread count
        print(f"(warning: OMP_NUM_THREADS is {os.environ.get('OMP_NUM_THREADS')}, not --threads {args.threads})")
    print(f"torch {torch.__version__}, {args.threads} threads\n", flush=True)
    if args.stem:
        stem_section(args)
    if args.run_models:
        models_section(args)


if __name__ == "__main__":
    main()
