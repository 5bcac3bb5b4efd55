"""Lp pooling's norm types beyond the positive finite ones, as PyTorch 2's lp_pool takes them: +inf is max pooling
of |x| and -inf minus the max of -|x| (both composed exactly as PyTorch composes them, so compared bit for bit with
that composition, in every installed PyTorch: torch 1.13's own lp_pool has no such case and returns 1s there);
a negative finite power goes through the same formula as a positive one (compared with PyTorch 2's formula in torch
ops to 1e-14 relative, float64: its pow rounds differently from the core's in some cells); 0 is refused."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

import poolkit
import poolkit.torch as pt

INF = float("inf")


def _input(r, layout):
    x = torch.randn((2, 3) + (7, 6, 5)[:r], dtype=torch.float64, generator=torch.Generator().manual_seed(r))
    x[0, 0].view(-1)[:2] = 0.0  # |x| = 0 and sign(0): no gradient there
    if layout == "channels_last" and r > 1:
        x = x.to(memory_format=torch.channels_last if r == 2 else torch.channels_last_3d)
    return x.requires_grad_()


def _same(a, b):
    return a.shape == b.shape and bool(((a == b) | (a.isnan() & b.isnan())).all())


@pytest.mark.parametrize("layout", ["channels_first", "channels_last"])
@pytest.mark.parametrize("p", [INF, -INF])
@pytest.mark.parametrize("r", [1, 2, 3])
def test_infinite_norm_is_max_of_abs(r, p, layout):
    x = _input(r, layout)
    mp = getattr(F, f"max_pool{r}d")
    want = mp(x.abs(), 2, 2, 0, 1, True) if p > 0 else -mp(-x.abs(), 2, 2, 0, 1, True)
    got = getattr(pt, f"lp_pool{r}d")(x, p, 2, 2, True)
    dy = torch.rand_like(want)
    gw, = torch.autograd.grad(want, x, dy)
    gg, = torch.autograd.grad(got, x, dy)
    assert _same(got, want) and _same(gg, gw)
    n = getattr(poolkit, f"lp_pool{r}d")(x.detach().numpy(), p, 2, 2, True)
    nb = getattr(poolkit, f"lp_pool{r}d_backward")(dy.numpy(), x.detach().numpy(), p, 2, 2, True)
    assert np.array_equal(n, want.detach().numpy()) and np.array_equal(nb, gw.numpy())


@pytest.mark.parametrize("p", [-1.0, -2.0, -0.5, -1.5, -3.0])
@pytest.mark.parametrize("r", [1, 2, 3])
def test_negative_norm_follows_the_formula(r, p):
    x = _input(r, "channels_first")
    # PyTorch 2's lp_pool formula in torch ops (torch 1.13 has no lp_pool3d)
    out = getattr(F, f"avg_pool{r}d")(x.pow(p), 2, 2, 0, True)
    want = (torch.sign(out) * F.relu(torch.abs(out))).mul(2 ** r).pow(1.0 / p)
    got = getattr(pt, f"lp_pool{r}d")(x, p, 2, 2, True)
    dy = torch.rand_like(want)
    gw, = torch.autograd.grad(want, x, dy)
    gg, = torch.autograd.grad(got, x, dy)
    for a, b in ((got, want), (gg, gw)):
        assert bool((a.isnan() == b.isnan()).all())
        torch.testing.assert_close(a.nan_to_num(), b.nan_to_num(), rtol=1e-14, atol=0)


@pytest.mark.parametrize("r", [1, 2, 3])
def test_zero_norm_is_refused(r):
    x = _input(r, "channels_first")
    with pytest.raises(ValueError, match="norm_type"):
        getattr(pt, f"lp_pool{r}d")(x, 0.0, 2)
    with pytest.raises(ValueError, match="norm_type"):
        getattr(poolkit, f"lp_pool{r}d")(x.detach().numpy(), 0.0, 2)
    with pytest.raises(ValueError, match="norm_type"):  # ONNX's LpPool: p > 0
        getattr(poolkit, f"lp_pool{r}d")(x.detach().numpy(), -1.0, 2, convention="onnx")
