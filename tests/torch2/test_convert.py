"""poolkit.torch.nn.convert on torchvision models (random weights): every torch.nn pooling module replaced, and a
training step gives the unconverted model's loss and gradients bit for bit, in eager mode and (ResNet-50, VGG-11)
under torch.compile with its default backend (inductor).

Under torch.compile the converted model is compared with the unconverted model compiled the same way, not with
eager mode: inductor changes some of the rest of the model's numbers itself (checked one layer at a time on
torch 2.15: its dropout draws other masks from the same seed, its training-mode batch norm gives other last bits;
convolution, ReLU, linear layers and max pooling keep eager's bits). Its own lowering of adaptive average pooling
(a mean over the plane) sums in another order than eager's too, but the 2x2 planes these models pool at 64x64
give the same bits either way, so the comparison stays exact."""
import copy

import pytest
import torch
import torchvision

import poolkit.torch.nn as pnn

POOLS = tuple(getattr(torch.nn, n) for n in pnn._CONVERTIBLE if hasattr(torch.nn, n))


def _step(model, x, target):
    model.zero_grad()
    torch.manual_seed(2)  # the same dropout masks
    loss = torch.nn.functional.cross_entropy(model(x), target)
    loss.backward()
    return loss.detach(), [p.grad.clone() for p in model.parameters()]


# name: (the model, whether it is also compared under torch.compile). GoogLeNet's pools (ceil_mode, stride-1
# windows) run under inductor in test_compile.py already; compiling the whole model (twice) cost CI over 2 minutes.
MODELS = {
    "resnet50": (lambda: torchvision.models.resnet50(num_classes=10), True),
    "vgg11": (lambda: torchvision.models.vgg11(num_classes=10), True),
    "googlenet": (lambda: torchvision.models.googlenet(num_classes=10, aux_logits=False, init_weights=True), False),
}


@pytest.mark.parametrize("name", MODELS)
def test_training_step_same_bits(name):
    torch.manual_seed(0)
    make, compiled = MODELS[name]
    model = make()
    converted = pnn.convert(copy.deepcopy(model))
    pooling = [m for m in model.modules() if isinstance(m, POOLS)]
    replaced = [m for m in converted.modules() if type(m).__module__ == pnn.__name__]
    assert pooling and len(replaced) == len(pooling)
    assert not any(isinstance(m, POOLS) for m in converted.modules())
    x = torch.randn(2, 3, 64, 64, generator=torch.Generator().manual_seed(1))
    target = torch.tensor([3, 7])
    runs = [(model, converted)]
    if compiled:
        runs.append((torch.compile(model, fullgraph=True), torch.compile(converted, fullgraph=True)))
    for unconverted, run in runs:
        loss0, grads0 = _step(unconverted, x, target)
        loss, grads = _step(run, x, target)
        assert torch.equal(loss, loss0)
        assert all(torch.equal(a, b) for a, b in zip(grads, grads0))


def test_convert_keeps_arguments():
    model = torch.nn.Sequential(torch.nn.MaxPool2d(3, 2, 1, 2, ceil_mode=True), torch.nn.AvgPool1d(3, 1, 1, True, False),
                                torch.nn.Sequential(torch.nn.LPPool2d(3, 2), torch.nn.AdaptiveMaxPool3d((2, None, 3))),
                                torch.nn.FractionalMaxPool2d(2, output_ratio=(0.5, 0.5)), torch.nn.MaxUnpool2d(2, 1))
    model.eval()
    converted = pnn.convert(copy.deepcopy(model))
    for old, new in zip(model.modules(), converted.modules()):
        if isinstance(old, POOLS):
            assert type(new).__name__ == type(old).__name__ and type(new).__module__ == pnn.__name__
            assert all(getattr(old, a) == new._values[a] for a in new._args)
            assert new.training is False
    assert isinstance(pnn.convert(torch.nn.MaxPool1d(2)), pnn.MaxPool1d)
