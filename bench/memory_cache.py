#!/usr/bin/env python3
"""What poolkit's memory cache saves on the allocating call: the seed case's training step through poolkit.torch
(forward with autograd, then backward) timed with the cache on and off, in one process, beside PyTorch's own.

usage: python bench/memory_cache.py [--threads N] [--reps N]   (poolkit importable, as for compare.py)
"""
import argparse
import os
import statistics
import time

p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
p.add_argument("--threads", type=int, default=os.cpu_count())
p.add_argument("--reps", type=int, default=7)
ARGS = p.parse_args()
os.environ["OMP_NUM_THREADS"] = str(ARGS.threads)
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import poolkit  # noqa: E402
import poolkit.torch as pt  # noqa: E402

torch.set_num_threads(ARGS.threads)


def median_ms(fn):
    fn()
    times = []
    for _ in range(ARGS.reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return 1e3 * statistics.median(times)


def main():
    print(f"seed case (16384, 2, 32, 32) float32, 2x2 stride 2, {ARGS.threads} thread(s), median of {ARGS.reps}")
    print("| layout | operator | PyTorch ms | poolkit, cache off ms | poolkit, cache on ms | cache saves |")
    print("|---|---|---|---|---|---|")
    for layout in ("nchw", "nhwc"):
        x = torch.rand(16384, 2, 32, 32)
        if layout == "nhwc":
            x = x.to(memory_format=torch.channels_last)
        x.requires_grad_()
        dy = torch.rand_like(F.max_pool2d(x.detach(), 2))
        for name, tfn, pfn in (("max train step", lambda a: F.max_pool2d(a, 2), lambda a: pt.max_pool2d(a, 2)),
                               ("avg train step", lambda a: F.avg_pool2d(a, 2), lambda a: pt.avg_pool2d(a, 2))):
            def step(fn):
                x.grad = None
                fn(x).backward(dy)
            t_torch = median_ms(lambda: step(tfn))
            poolkit.set_cache_limit(0)
            t_off = median_ms(lambda: step(pfn))
            poolkit.set_cache_limit(1 << 30)
            t_on = median_ms(lambda: step(pfn))
            print(f"| {layout} | {name} | {t_torch:.2f} | {t_off:.2f} | {t_on:.2f} | {t_off / t_on:.2f}x |")


if __name__ == "__main__":
    main()
