"""Second derivatives: gradgradcheck in float64 (against finite differences), and equal to PyTorch's double
backward through torch.nn.functional's twin (a gradient penalty, with create_graph=True)."""
import pytest
import torch

from cases import cases, inputs

DIFFERENTIABLE_TWICE = ("max", "max_dilated_ceil", "max_indices", "max_same", "max_onnx_pads", "avg",
                        "avg_excl_ceil", "lp", "adaptive_max", "adaptive_avg", "unpool", "fractional", "global_max",
                        "global_avg", "global_lp")
CASES = [(r, c) for r in (1, 2, 3) for c in cases(r) if c[0] in DIFFERENTIABLE_TWICE]
IDS = [f"{r}d-{c[0]}" for r, c in CASES]


def _x(r, layout, positive, small=False):
    x = inputs(r, torch.float64, small=small)[layout].clone()
    return (x + 1 if positive else x - x.mean()).requires_grad_(True)


@pytest.mark.parametrize("r, case", CASES, ids=IDS)
def test_gradgradcheck(r, case):
    name, pk, _ = case
    for layout in ("channels_first", "channels_last"):
        x = _x(r, layout, positive="lp" in name, small=True)
        assert torch.autograd.gradgradcheck(pk, (x,), eps=1e-6, atol=1e-5)


def _penalty_grad(fn, x):
    y = fn(x)
    w = torch.linspace(-1, 1, y.numel(), dtype=y.dtype, device=y.device).reshape(y.shape)
    (g,) = torch.autograd.grad((y * w).sum(), x, create_graph=True)
    (gg,) = torch.autograd.grad((g * g).sum() + (g * x).sum(), x)
    return g, gg


@pytest.mark.parametrize("r, case", [(r, c) for r, c in CASES if c[2] is not None],
                         ids=[i for i, (r, c) in zip(IDS, CASES) if c[2] is not None])
def test_double_backward_equals_pytorch(r, case):
    name, pk, tf = case
    for layout in ("channels_first", "channels_last"):
        x = _x(r, layout, positive="lp" in name)
        # PyTorch's side on its CPU kernels, the oracle on a GPU too (PyTorch CUDA adds with atomics, in no order)
        g0, gg0 = _penalty_grad(tf, x.detach().cpu().requires_grad_(True))
        g1, gg1 = (t.cpu() for t in _penalty_grad(pk, x))
        if name in ("lp", "adaptive_avg"):  # sums in another order (first order too, in a few cases): to rounding
            torch.testing.assert_close(g1, g0, rtol=1e-12, atol=1e-12)
            torch.testing.assert_close(gg1, gg0, rtol=1e-10, atol=1e-10)
        else:
            assert torch.equal(g0, g1) and torch.equal(gg0, gg1), (name, layout)
