"""PyTorch CUDA over the cases of BENCH_CASES.md: prints CSV rows like poolkit_gpu_bench (median of many
CUDA-event-timed runs after a warm-up, random data)."""
import sys

import torch
import torch.nn.functional as F

CASES = [
    # name, shape, kind, kernel, stride, pad, count_include_pad, adaptive out, dtype, ops
    ("seed-max", (16384, 2, 32, 32), "max", 2, 2, 0, True, None, torch.float32, ("fwd", "fwd_idx", "bwd")),
    ("seed-avg", (16384, 2, 32, 32), "avg", 2, 2, 0, True, None, torch.float32, ("fwd", "bwd")),
    ("resnet-stem", (32, 64, 112, 112), "max", 3, 2, 1, True, None, torch.float32, ("fwd", "fwd_idx", "bwd")),
    ("vgg", (32, 128, 112, 112), "max", 2, 2, 0, True, None, torch.float32, ("fwd_idx", "bwd")),
    ("overlap-avg", (32, 64, 56, 56), "avg", 3, 1, 1, False, None, torch.float32, ("fwd", "bwd")),
    ("gap", (256, 2048, 7, 7), "adaptive", 0, 0, 0, True, (1, 1), torch.float32, ("fwd", "bwd")),
    ("adaptive", (64, 256, 13, 13), "adaptive", 0, 0, 0, True, (7, 7), torch.float32, ("fwd", "bwd")),
    ("pool3d", (8, 64, 32, 32, 32), "max", 2, 2, 0, True, None, torch.float32, ("fwd_idx", "bwd")),
    ("half-bf16", (32, 64, 112, 112), "max", 3, 2, 1, True, None, torch.bfloat16, ("fwd", "bwd")),
    ("half-f16", (32, 64, 112, 112), "max", 3, 2, 1, True, None, torch.float16, ("fwd", "bwd")),
]
NAMES = {torch.float32: "float32", torch.bfloat16: "bfloat16", torch.float16: "float16"}


def median_us(fn, warmup=5, runs=50):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(runs):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    times.sort()
    return 1000.0 * times[len(times) // 2]


def run_case(case, channels_last):
    name, shape, kind, k, s, p, include_pad, out, dtype, ops = case
    rank = len(shape) - 2
    x = torch.rand(shape, device="cuda", dtype=torch.float32).mul_(2).sub_(1).to(dtype)
    if channels_last:
        x = x.contiguous(memory_format=torch.channels_last if rank == 2 else torch.channels_last_3d)
    layout = "channels_last" if channels_last else "contiguous"
    maxp = F.max_pool2d if rank == 2 else F.max_pool3d
    avgp = F.avg_pool2d if rank == 2 else F.avg_pool3d
    if kind == "max":
        fwd = lambda: maxp(x, k, s, p)  # noqa: E731
        fwd_idx = lambda: maxp(x, k, s, p, return_indices=True)  # noqa: E731
    elif kind == "avg":
        fwd = lambda: avgp(x, k, s, p, count_include_pad=include_pad)  # noqa: E731
        fwd_idx = None
    else:
        fwd = lambda: F.adaptive_avg_pool2d(x, out)  # noqa: E731
        fwd_idx = None
    y = fwd()
    xb, yb = x.numel() * x.element_size(), y.numel() * y.element_size()
    rows = []
    for op in ops:
        if op == "fwd":
            rows.append((op, "", median_us(fwd), xb + yb))
        elif op == "fwd_idx":
            rows.append((op, "int64", median_us(fwd_idx), xb + yb + y.numel() * 8))
        elif op == "bwd":
            xr = x.detach().requires_grad_(True)
            if kind == "max":
                yr, idx = maxp(xr, k, s, p, return_indices=True)
                dy = torch.rand_like(yr)
                # the backward kernel alone: max_pool*_with_indices_backward
                bw = torch.ops.aten.max_pool2d_with_indices_backward if rank == 2 else \
                    torch.ops.aten.max_pool3d_with_indices_backward
                ks, ss, ps = [k] * rank, [s] * rank, [p] * rank
                fn = lambda: bw(dy, xr, ks, ss, ps, [1] * rank, False, idx)  # noqa: E731
                rows.append((op, "int64", median_us(fn), xb + yb + y.numel() * 8))
            else:
                yr = (F.adaptive_avg_pool2d(xr, out) if kind == "adaptive" else
                      avgp(xr, k, s, p, count_include_pad=include_pad))
                dy = torch.rand_like(yr)
                fn = lambda: torch.autograd.grad(yr, xr, dy, retain_graph=True)  # noqa: E731
                rows.append((op, "", median_us(fn), xb + yb))
    for op, variant, us, nbytes in rows:
        print(f"torch,{name},{layout},{NAMES[dtype]},{op},{variant},{us:.3f},{nbytes}", flush=True)


def main():
    if not torch.cuda.is_available():
        sys.exit("torch_pool_bench: PyTorch sees no CUDA device")
    torch.backends.cudnn.benchmark = False
    print("impl,case,layout,dtype,op,variant,median_us,bytes")
    only = sys.argv[1] if len(sys.argv) > 1 else None
    for case in CASES:
        if only and case[0] != only:
            continue
        for cl in (False, True):
            run_case(case, cl)


if __name__ == "__main__":
    main()
