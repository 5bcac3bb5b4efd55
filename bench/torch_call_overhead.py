"""poolkit.torch's allocating forward with and without its thin eager path (session 23: calls that autograd does not
record skip the dispatcher; cached outputs wrapped by one DLPack call), one process, the variants timed in turn.
Usage: OMP_NUM_THREADS=2 PYTHONPATH=build/release/python .venv-pypi/bin/python bench/torch_call_overhead.py"""
import statistics
import time

import numpy as np
import torch
import torch.nn.functional as F

import poolkit.torch as pt
from poolkit import _layout
from poolkit._layout import _cached_bytes, layout_strides
from poolkit.torch import _ops
torch.set_num_threads(2)
new_empty, new_plain = _layout.TorchKind.empty, _ops._runs_plain


def old_empty(shape, dtype, channels_last, like=None):
    """TorchKind.empty before session 23: NumPy bytes from the cache, viewed as a tensor in four torch calls."""
    shape = tuple(int(s) for s in shape)
    strides = layout_strides(shape, channels_last)
    device = like.device if like is not None else "cpu"
    raw = None
    if torch.device(device).type == "cpu":
        raw = _cached_bytes(int(np.prod(shape, dtype=np.int64)), torch.empty((), dtype=dtype).element_size())
    if raw is None:
        return torch.empty_strided(shape, strides, dtype=dtype, device=device)
    block = torch.from_numpy(raw).view(dtype)
    storage = block.untyped_storage()
    return torch.empty(0, dtype=dtype).set_(storage, 0, shape, strides)


def variant(old):
    def run(f):
        def g():
            _layout.TorchKind.empty = staticmethod(old_empty) if old else staticmethod(new_empty)
            _ops._runs_plain = (lambda x: False) if old else new_plain
            return f()
        return g
    return run


cases = [("gap nchw", (256,2048,7,7), torch.contiguous_format, lambda x: pt.adaptive_avg_pool2d(x,1), lambda x: F.adaptive_avg_pool2d(x,1)),
 ("vgg nhwc", (32,128,112,112), torch.channels_last, lambda x: pt.max_pool2d(x,2,2), lambda x: F.max_pool2d(x,2,2)),
 ("pool3d nhwc", (8,64,32,32,32), torch.channels_last_3d, lambda x: pt.max_pool3d(x,2,2), lambda x: F.max_pool3d(x,2,2)),
 ("resnet-stem nchw", (32,64,112,112), torch.contiguous_format, lambda x: pt.max_pool2d(x,3,2,1), lambda x: F.max_pool2d(x,3,2,1)),
 ("small 1x8x7x7 gap", (1,8,7,7), torch.contiguous_format, lambda x: pt.adaptive_avg_pool2d(x,1), lambda x: F.adaptive_avg_pool2d(x,1))]
for name, shape, mf, p, t in cases:
    x = torch.rand(shape).contiguous(memory_format=mf)
    fns = {"PyTorch": lambda: t(x), "before": variant(True)(lambda: p(x)), "after": variant(False)(lambda: p(x))}
    big = torch.empty(25_000_000) if shape[0] == 1 else None
    ts = {n: [] for n in fns}
    for _ in range(31 if big is None else 200):
        for n, f in fns.items():
            f()
            if big is not None: big.fill_(1.0)  # cold caches, as after a large kernel
            t0 = time.perf_counter(); f(); ts[n].append(time.perf_counter() - t0)
    m = {n: statistics.median(v) * 1e3 for n, v in ts.items()}
    print(f"{name}: " + "  ".join(f"{n} {v:.3f} ms" for n, v in m.items()) + f"  | before/after {m['before']/m['after']:.2f}x, after vs PyTorch {m['PyTorch']/m['after']:.2f}x", flush=True)
