"""torch.compile(fullgraph=True) of every poolkit.torch function: no graph break, forward and gradient bits equal
to eager, channels-last kept."""
import pytest
import torch

from cases import cases, inputs

CASES = [(r, c) for r in (1, 2, 3) for c in cases(r)]


def _run(fn, x):
    x = x.detach().clone().requires_grad_(True)  # clone keeps the strides
    y = fn(x)
    w = torch.linspace(-1, 1, y.numel(), dtype=y.dtype).reshape(y.shape)
    (gx,) = torch.autograd.grad((y * w).sum(), x)
    return y, gx


@pytest.mark.parametrize("r, case", CASES, ids=[f"{r}d-{c[0]}" for r, c in CASES])
def test_compiled_equals_eager_without_graph_breaks(r, case):
    name, pk, _ = case
    torch._dynamo.reset()
    for layout, x in inputs(r).items():
        assert torch._dynamo.explain(pk)(x).graph_break_count == 0
        y0, g0 = _run(pk, x)
        y1, g1 = _run(torch.compile(pk, fullgraph=True, backend="aot_eager"), x)
        assert torch.equal(y0, y1) and torch.equal(g0, g1), (name, layout)
        assert y1.stride() == y0.stride(), (name, layout)


def test_inductor_module_forward_backward_bits():
    """The inductor backend on a small model of poolkit.torch.nn modules: same bits as eager."""
    import poolkit.torch.nn as pnn
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), pnn.MaxPool2d(2), torch.nn.ReLU(),
                                pnn.AvgPool2d(2, 1, 1), pnn.AdaptiveAvgPool2d(2), torch.nn.Flatten())
    x = inputs(2)["channels_last"]
    compiled = torch.compile(model, fullgraph=True)
    outs = []
    for m in (model, compiled):
        m.zero_grad()
        y = m(x)
        y.pow(2).sum().backward()
        outs.append((y.detach(), [p.grad.clone() for p in model.parameters()]))
    assert torch.equal(outs[0][0], outs[1][0])
    assert all(torch.equal(a, b) for a, b in zip(outs[0][1], outs[1][1]))
