"""poolkit.torch with data_format='channels_last': inputs (N, spatial..., C), results (values, indices, gradients)
in the same order, equal to PyTorch's channels-first results moved there."""
import pytest
import torch
import torch.nn.functional as F

import poolkit.torch as pt
from oracle import DEVICE


def to_last(t):
    return t.movedim(1, -1)


def to_first(t):
    return t.movedim(-1, 1)


def _x(shape, seed, positive=False):
    x = torch.randn(*shape, dtype=torch.float64, generator=torch.Generator(DEVICE).manual_seed(seed))
    return x.abs() + 0.5 if positive else x


# name: (poolkit.torch function, PyTorch function, spatial rank). Values and gradients are compared bit for bit
# except where poolkit sums in another order than PyTorch: the global average, and Lp gradients.
INEXACT_OUTPUT = {"global_avg_pool"}
INEXACT_GRAD = {"global_avg_pool", "lp_pool1d", "lp_pool2d"}


def close(a, b):
    return torch.allclose(a, b, rtol=1e-13, atol=1e-15)
OPS = {
    "max_pool1d": (lambda x, **kw: pt.max_pool1d(x, 3, 2, 1, **kw), lambda x: F.max_pool1d(x, 3, 2, 1), 1),
    "max_pool2d": (lambda x, **kw: pt.max_pool2d(x, 3, 2, 1, **kw), lambda x: F.max_pool2d(x, 3, 2, 1), 2),
    "max_pool3d": (lambda x, **kw: pt.max_pool3d(x, 2, 1, **kw), lambda x: F.max_pool3d(x, 2, 1), 3),
    "avg_pool1d": (lambda x, **kw: pt.avg_pool1d(x, 3, 2, 1, **kw), lambda x: F.avg_pool1d(x, 3, 2, 1), 1),
    "avg_pool2d": (lambda x, **kw: pt.avg_pool2d(x, 3, 2, 1, True, **kw),
                   lambda x: F.avg_pool2d(x, 3, 2, 1, True), 2),
    "avg_pool3d": (lambda x, **kw: pt.avg_pool3d(x, 2, **kw), lambda x: F.avg_pool3d(x, 2), 3),
    "lp_pool1d": (lambda x, **kw: pt.lp_pool1d(x, 2, 3, 2, **kw), lambda x: F.lp_pool1d(x, 2, 3, 2), 1),
    "lp_pool2d": (lambda x, **kw: pt.lp_pool2d(x, 1, 2, **kw), lambda x: F.lp_pool2d(x, 1, 2), 2),
    "global_max_pool": (lambda x, **kw: pt.global_max_pool(x, **kw), lambda x: F.adaptive_max_pool2d(x, 1), 2),
    "global_avg_pool": (lambda x, **kw: pt.global_avg_pool(x, **kw), lambda x: F.adaptive_avg_pool2d(x, 1), 2),
}
SHAPES = {1: (2, 3, 9), 2: (2, 3, 7, 6), 3: (2, 3, 4, 5, 4)}


@pytest.mark.parametrize("name", sorted(OPS))
def test_channels_last_results_and_gradients(name):
    ours, theirs, r = OPS[name]
    x = _x(SHAPES[r], 11, positive=name.startswith("lp"))
    xt = x.cpu().clone().requires_grad_()  # PyTorch's side on its CPU kernels, the oracle on a GPU too (oracle.py)
    xl = to_last(x).clone().requires_grad_()  # (N, spatial..., C)
    want = theirs(xt)
    got = ours(xl, data_format="channels_last")
    assert got.shape == to_last(want).shape
    assert (close if name in INEXACT_OUTPUT else torch.equal)(to_first(got).cpu(), want)
    dy = _x(tuple(want.shape), 12)
    want.backward(dy.cpu())
    got.backward(to_last(dy))
    assert (close if name in INEXACT_GRAD else torch.equal)(to_first(xl.grad).cpu(), xt.grad)


@pytest.mark.parametrize("r", [1, 2, 3])
def test_channels_last_indices(r):
    x = _x(SHAPES[r], 13)
    fn, tf = getattr(pt, f"max_pool{r}d"), getattr(F, f"max_pool{r}d")
    y, i = fn(to_last(x), 2, return_indices=True, data_format="channels_last")
    ty, ti = tf(x, 2, return_indices=True)
    assert torch.equal(to_first(y), ty) and torch.equal(to_first(i), ti)
    gy, gi = pt.global_max_pool(to_last(x), return_indices=True, data_format="channels_last")
    ty, ti = getattr(F, f"adaptive_max_pool{r}d")(x, 1, return_indices=True)
    assert torch.equal(to_first(gy), ty) and torch.equal(to_first(gi), ti)


def test_channels_last_unbatched():
    x = _x((3, 7, 6), 14)  # (C, H, W) as torch; (H, W, C) for poolkit
    got = pt.max_pool2d(x.movedim(0, -1), 2, data_format="channels_last")
    assert torch.equal(got.movedim(-1, 0), F.max_pool2d(x, 2))


def test_channels_last_mixed_and_stochastic():
    x = _x((2, 3, 8, 8), 15, positive=True)
    got = pt.mixed_pool2d(to_last(x), 2, lambda_=0.25, data_format="channels_last")
    assert torch.equal(to_first(got), pt.mixed_pool2d(x, 2, lambda_=0.25))
    got = pt.stochastic_pool2d(to_last(x), 2, training=False, data_format="channels_last")
    assert torch.equal(to_first(got), pt.stochastic_pool2d(x, 2, training=False))
