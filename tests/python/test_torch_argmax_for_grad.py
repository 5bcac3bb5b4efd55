"""poolkit.torch's max pooling (sliding, adaptive, fractional) keeps its compact argmax only where autograd records
the call (grad mode on and the input requiring grad), as PyTorch's own max pooling does: an inference call writes
no argmax. The outputs, the int64 indices asked for, and the gradients are PyTorch's either way."""
import contextlib

import pytest
import torch
import torch.nn.functional as F

import poolkit._engine as engine
import poolkit.torch as pt

CALLS = {
    "max_pool2d": (lambda m, x, **kw: m.max_pool2d(x, 3, 2, 1, **kw), lambda x, **kw: F.max_pool2d(x, 3, 2, 1, **kw)),
    "adaptive_max_pool2d": (lambda m, x, **kw: m.adaptive_max_pool2d(x, 3, **kw),
                            lambda x, **kw: F.adaptive_max_pool2d(x, 3, **kw)),
    "max_pool3d": (lambda m, x, **kw: m.max_pool3d(x, 2, **kw), lambda x, **kw: F.max_pool3d(x, 2, **kw)),
    "fractional_max_pool2d": (lambda m, x, **kw: m.fractional_max_pool2d(x, 2, 3, _random_samples=_samples(), **kw),
                              lambda x, **kw: F.fractional_max_pool2d(x, 2, 3, _random_samples=_samples(), **kw)),
}
MODES = {  # mode: (x requires grad, context, the argmax form the forward must write)
    "inference input": (False, contextlib.nullcontext, None),
    "no_grad": (True, torch.no_grad, None),
    "inference_mode": (True, getattr(torch, "inference_mode", torch.no_grad), None),
    "training": (True, contextlib.nullcontext, "compact"),
}


def _samples():
    return torch.rand(2, 3, 2, generator=torch.Generator().manual_seed(1))


def _input(name, requires_grad):
    shape = (2, 3, 4, 6, 5) if name.endswith("3d") else (2, 3, 7, 6)
    return torch.randn(*shape, generator=torch.Generator().manual_seed(0)).requires_grad_(requires_grad)


@pytest.mark.parametrize("name", sorted(CALLS))
@pytest.mark.parametrize("mode", sorted(MODES))
def test_argmax_only_where_autograd_records(name, mode, monkeypatch):
    """(The Python kernels, spied on here; tests/torch2/test_opcheck.py holds the C++ kernels to the same rule.)"""
    if hasattr(pt, "A") and hasattr(pt.A, "_cpp_plain"):
        monkeypatch.setattr(pt.A, "_cpp_plain", lambda x: False)
    forms = []
    for op in ("max_pool", "fractional_max_pool"):  # (kind, g, [samples,] x, form)
        run = getattr(engine, op)
        monkeypatch.setattr(engine, op, lambda *a, run=run: (forms.append(a[-1]), run(*a))[1])
    ours, theirs = CALLS[name]
    requires_grad, context, form = MODES[mode]
    x = _input(name, requires_grad)
    with context():
        y = ours(pt, x)
        _, i = ours(pt, x, return_indices=True)
    assert forms == [form, "int64"]
    ref_x = x.detach().clone().requires_grad_(requires_grad)
    ref_y, ref_i = theirs(ref_x, return_indices=True)
    assert torch.equal(y.detach(), ref_y.detach()) and torch.equal(i, ref_i)
    if form is not None:
        y.backward(torch.ones_like(y))
        ref_y.backward(torch.ones_like(ref_y))
        assert torch.equal(x.grad, ref_x.grad)
