"""poolkit.torch.nn.pool_before_relu: ReLU -> max pool pairs moved to max pool -> ReLU. The expected values are the
untouched model's, run by PyTorch: the same loss and gradients bit for bit in eager mode (torch.equal: -0 and +0
are equal, the one difference an all-negative window may make), the pairs moved where they may be and only there."""
import copy

import pytest
import torch
import torch.nn.functional as F
import torchvision

import poolkit.torch.nn as pnn


def _step(model, x, target):
    model.zero_grad()
    loss = F.cross_entropy(model(x), target)
    loss.backward()
    return loss.detach(), [p.grad.clone() for p in model.parameters()]


def _pools_after_relu(gm):
    """(pool nodes fed by a ReLU, ReLU nodes fed by a pool) of a traced graph."""
    def relu(n):
        return n.op == "call_module" and isinstance(gm.get_submodule(n.target), torch.nn.ReLU)

    def pool(n):
        return n.op == "call_module" and "MaxPool" in type(gm.get_submodule(n.target)).__name__
    nodes = list(gm.graph.nodes)
    return ([n for n in nodes if pool(n) and relu(n.args[0])], [n for n in nodes if relu(n) and pool(n.args[0])])


@pytest.mark.parametrize("name, pools", [("resnet50", 1), ("vgg11", 5)])
@pytest.mark.parametrize("converted", [False, True])
def test_models_same_step(name, pools, converted):
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(num_classes=10).eval()  # eval: no dropout masks to align
    moved = copy.deepcopy(model)
    if converted:
        moved = pnn.convert(moved)
    moved = pnn.pool_before_relu(moved)
    before, after = _pools_after_relu(moved)
    assert not before and len(after) == pools
    x = torch.randn(2, 3, 64, 64, generator=torch.Generator().manual_seed(1))
    target = torch.tensor([3, 7])
    loss0, grads0 = _step(model, x, target)
    loss, grads = _step(moved, x, target)
    assert torch.equal(loss, loss0)
    assert len(grads) == len(grads0) and all(torch.equal(a, b) for a, b in zip(grads, grads0))


def test_compiled_without_graph_break():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.ReLU(inplace=True), torch.nn.MaxPool2d(3, 2, 1))
    moved = pnn.pool_before_relu(pnn.convert(copy.deepcopy(model)))
    x = torch.randn(2, 3, 20, 20, requires_grad=True)
    compiled = torch.compile(moved, fullgraph=True)
    y = compiled(x)
    torch.testing.assert_close(y, model(x), rtol=1e-6, atol=1e-6)


class Functional(torch.nn.Module):
    """Pairs written with functions and methods; the NaN and -inf cases of the commuted pair."""

    def forward(self, x):
        a = F.max_pool2d(F.relu(x), 2)
        b = F.adaptive_max_pool2d(torch.relu(x), (3, 2))
        c = F.max_pool2d(x.relu(), 3, 1, 1, 2)  # kernel, stride, padding, dilation
        d = F.max_pool2d(input=F.relu(x), kernel_size=2)  # keywords (torch.fx records the input positionally)
        return a.sum() + b.sum() + c.sum() + d.sum(), a, b, c, d


def test_functional_forms_moved_same_values():
    x = torch.randn(2, 3, 9, 9)
    x[0, 0, :2, :2] = float("nan")
    x[1, 2] = -float("inf")
    x[0, 1, 3:6, 3:6] = -1.0  # a window with no positive cell
    moved = pnn.pool_before_relu(Functional())
    relus = [n for n in moved.graph.nodes if n.target in (F.relu, torch.relu, "relu")]
    assert len(relus) == 4 and all("max_pool" in n.args[0].name for n in relus)
    for got, want in zip(moved(x), Functional()(x)):
        torch.testing.assert_close(got, want, rtol=0, atol=0, equal_nan=True)


class Kept(torch.nn.Module):
    """Pairs that must stay in order: the ReLU's input read elsewhere (an in-place ReLU would change it), a ReLU
    with a second user, a pool that returns indices."""

    def __init__(self):
        super().__init__()
        self.relu1, self.relu2, self.relu3 = (torch.nn.ReLU(inplace=True) for _ in range(3))
        self.pool = torch.nn.MaxPool2d(2)
        self.pool_idx = torch.nn.MaxPool2d(2, return_indices=True)

    def forward(self, x):
        y = x * 2
        a = self.pool(self.relu1(y)).sum() + y.sum()
        r = self.relu2(x + 1)
        b = self.pool(r).sum() + r.sum()
        c, i = self.pool_idx(self.relu3(x - 1))
        return a + b + c.sum() + i.sum()


def test_pairs_kept_in_order():
    x = torch.randn(2, 3, 8, 8)
    moved = pnn.pool_before_relu(Kept())
    before, after = _pools_after_relu(moved)
    assert len(before) == 3 and not after
    assert torch.equal(moved(x), Kept()(x))


def test_errors():
    class Branching(torch.nn.Module):
        def forward(self, x):
            return F.max_pool2d(F.relu(x), 2) if x.sum() > 0 else x

    with pytest.raises(TypeError, match="pool_before_relu: torch.fx cannot trace Branching"):
        pnn.pool_before_relu(Branching())
    with pytest.raises(TypeError, match="model must be a torch.nn.Module"):
        pnn.pool_before_relu(lambda x: x)
