"""Test inputs in every layout, bitwise and rounding-tolerant comparisons, and refusal matching against PyTorch."""
import math
import os
import random
import zlib

import numpy as np
import torch

DTYPES = (torch.float32, torch.float64)
# Where the torch tensors of the tests live: POOLKIT_TEST_DEVICE=cuda runs the same cases on a GPU (torch's default
# device, so the tests' own tensors are made there too), PyTorch CUDA the oracle (scripts/gpu-check.sh).
DEVICE = os.environ.get("POOLKIT_TEST_DEVICE", "cpu")
if DEVICE != "cpu":
    torch.set_default_device(DEVICE)
LAYOUTS = ("channels_first", "channels_last", "strided")


def values(rng, shape, dtype, specials):
    """Random values with ties (a coarse grid half the time) and, when asked, NaN / +inf / -inf sprinkled in."""
    g = torch.Generator().manual_seed(rng.randrange(2**31))
    n = math.prod(shape)
    if rng.random() < 0.5:
        v = torch.randint(-3, 4, (n,), generator=g, device="cpu").to(dtype) * 0.5
    else:
        v = torch.randn(n, generator=g, dtype=dtype, device="cpu")
    if specials and n:
        for _ in range(rng.randint(1, 3)):
            v[rng.randrange(n)] = rng.choice([math.nan, math.inf, -math.inf])
        if rng.random() < 0.2:  # a whole run of -inf: max pooling must still pick the first cell
            v[: max(1, n // 3)] = -math.inf
    return v.reshape(shape).to(DEVICE)


def leaf_and_view(base, layout):
    """A leaf tensor holding `base`'s values and a view of it with logical shape base.shape in `layout`."""
    nd = base.dim()
    if layout == "channels_first" or nd < 3:
        leaf = base.clone().requires_grad_()
        return leaf, leaf
    if layout == "channels_last":
        leaf = base.movedim(1, -1).contiguous().requires_grad_()
        return leaf, leaf.movedim(-1, 1)
    # strided: every other cell of a wider last axis, channels and batch swapped in memory
    shape = list(base.shape)
    wide = torch.zeros(shape[:-1] + [2 * shape[-1]], dtype=base.dtype, device=base.device)
    wide[..., ::2] = base
    leaf = wide.transpose(0, 1).contiguous().requires_grad_()
    return leaf, leaf.transpose(0, 1)[..., ::2]


def oracle_leaf_and_view(base, layout):
    """leaf_and_view for PyTorch's side of a comparison: on the CPU whatever DEVICE is. PyTorch's CPU kernels are
    the oracle on a GPU too: PyTorch CUDA adds overlapping windows' gradients with atomics, in no fixed order, and
    its channels-last average backward with padding disagreed with its own CPU kernel on the H100 run."""
    return leaf_and_view(base.cpu(), layout)


def logical_grad(leaf, layout):
    """The leaf's gradient seen through the view leaf_and_view made (logical N, C, spatial order)."""
    if layout == "channels_first" or leaf.dim() < 3:
        return leaf.grad
    if layout == "channels_last":
        return leaf.grad.movedim(-1, 1)
    return leaf.grad.transpose(0, 1)[..., ::2]


def as_torch(a):
    return torch.from_numpy(np.ascontiguousarray(a))


def random_layout(rng):
    return rng.choice(LAYOUTS)


def bits_equal(a, b):
    """Bitwise equality of two tensors of one dtype (NaN payloads included), on any devices."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    a, b = a.detach().cpu().contiguous(), b.detach().cpu().contiguous()
    if a.dtype in (torch.float32, torch.float64):
        it = torch.int32 if a.dtype == torch.float32 else torch.int64
        return torch.equal(a.view(it), b.view(it))
    return torch.equal(a, b)


def same_nan_and_inf(a, b):
    return torch.equal(torch.isnan(a), torch.isnan(b)) and torch.equal(torch.isinf(a), torch.isinf(b))


def close(a, b, scale, ulps=8):
    """Equal up to rounding: NaN/inf where the other has them, else within `ulps` units of `scale` (the size of
    the terms summed, so cancellation is allowed for)."""
    a, b = a.detach().cpu(), b.detach().cpu()
    if a.shape != b.shape or not same_nan_and_inf(a, b):
        return False
    fin = torch.isfinite(a)
    if torch.isinf(a).any() and not torch.equal(a[torch.isinf(a)], b[torch.isinf(b)]):
        return False
    eps = torch.finfo(a.dtype).eps
    tol = ulps * eps * (scale + a[fin].abs())
    return bool(((a[fin] - b[fin]).abs() <= tol).all())


class Refused(Exception):
    pass


def call(fn, *args, **kwargs):
    """fn's result, or Refused carrying the exception."""
    try:
        return fn(*args, **kwargs)
    except (RuntimeError, ValueError, TypeError, IndexError, OverflowError) as e:
        return Refused(e)


def per_axis(v, r):
    return list(v) if isinstance(v, (list, tuple)) else [v] * r


def maybe_tuple(rng, vals):
    """An int when all entries agree and the coin says so, else a tuple (both forms must work)."""
    if all(v == vals[0] for v in vals) and rng.random() < 0.5:
        return vals[0]
    return tuple(vals)


def new_rng(*key):
    """A generator seeded by the case's key alone, so every case is reproducible on its own."""
    return random.Random(zlib.crc32(repr(key).encode()))


def np_of(t):
    return t.detach().cpu().numpy()


def ref_grad(fn, x_leaf_view, dy, outs_index=0):
    """Gradient of fn at the view through PyTorch's autograd, on the leaf."""
    leaf, view = x_leaf_view
    out = fn(view)
    y = out[outs_index] if isinstance(out, tuple) else out
    y.backward(dy)
    return out, leaf.grad


def unbatched_shape(shape, rng, allow=True):
    return shape[1:] if allow and rng.random() < 0.15 else shape


__all__ = [n for n in dir() if not n.startswith("_")]
