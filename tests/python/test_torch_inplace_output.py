"""poolkit.torch's outputs may be modified in place under autograd, as PyTorch's own: an in-place ReLU after a pool
(`nn.ReLU(inplace=True)` after a converted `nn.MaxPool2d`) must train, and give torch's gradient. Outputs large
enough to come from poolkit's memory cache and channels-last outputs are the cases at risk (a tensor that is a view
of another cannot be modified in place once it left an autograd function)."""
import pytest
import torch
import torch.nn.functional as F

import poolkit.torch as pt

OPS = {
    "max_pool2d": lambda m, x: m.max_pool2d(x, 3, 2, 1),
    "avg_pool2d": lambda m, x: m.avg_pool2d(x, 2),
    "lp_pool2d": lambda m, x: m.lp_pool2d(x, 2, 2),
    "adaptive_max_pool2d": lambda m, x: m.adaptive_max_pool2d(x, (5, 3)),
    "adaptive_avg_pool2d": lambda m, x: m.adaptive_avg_pool2d(x, (5, 3)),
    "max_pool3d": lambda m, x: m.max_pool3d(x[:, :, None].expand(-1, -1, 2, -1, -1).contiguous(
        memory_format=torch.channels_last_3d if x.is_contiguous(memory_format=torch.channels_last)
        else torch.contiguous_format), 2),
    "max_pool2d+unpool2d": lambda m, x: m.max_unpool2d(*m.max_pool2d(x, 2, return_indices=True), 2),
}


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("channels", [2, 64])  # 64: outputs of 256 KiB or more, from the memory cache
@pytest.mark.parametrize("channels_last", [False, True])
def test_output_modified_in_place(op, channels, channels_last):
    gen = torch.Generator().manual_seed(channels)
    x = torch.randn(2, channels, 40, 40, generator=gen)
    if channels_last:
        x = x.contiguous(memory_format=torch.channels_last)
    grads = []
    for module in (pt, F):
        xg = x.clone().requires_grad_()
        y = OPS[op](module, xg)
        y.relu_()
        (y * torch.arange(y.numel()).reshape(y.shape).sin()).sum().backward()
        grads.append((y.detach(), xg.grad))
    (y, g), (y0, g0) = grads
    torch.testing.assert_close(y, y0, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(g, g0, rtol=1e-5, atol=1e-6)
