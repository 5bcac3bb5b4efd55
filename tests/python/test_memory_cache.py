"""Outputs of 256 KiB and more come from poolkit's memory cache: they are right (equal to PyTorch's, in the
input's memory format), and a freed one is handed out again for the next call of the same size."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

import poolkit
import poolkit.torch as pt
from poolkit import _core
from poolkit._layout import TORCH


@pytest.mark.parametrize("channels_last", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_large_outputs_match_torch_and_keep_the_layout(channels_last, dtype):
    x = torch.randn(8, 16, 64, 64).to(dtype)
    if channels_last:
        x = x.to(memory_format=torch.channels_last)
    x.requires_grad_(True)
    y, idx = pt.max_pool2d(x, 3, 2, 1, return_indices=True)
    x_ref = x.detach().clone().requires_grad_(True)
    y_ref, idx_ref = F.max_pool2d(x_ref, 3, 2, 1, return_indices=True)
    assert y.is_contiguous(memory_format=torch.channels_last) == channels_last
    assert torch.equal(y, y_ref) and torch.equal(idx, idx_ref)
    g = torch.randn_like(y_ref)
    y.backward(g)
    # poolkit sums a 16-bit gradient in float32 and rounds once: PyTorch's float32 backward, rounded
    x_ref = x.detach().float().requires_grad_(True)
    F.max_pool2d(x_ref, 3, 2, 1).backward(g.float())
    assert torch.equal(x.grad, x_ref.grad.to(dtype))
    assert x.grad.is_contiguous(memory_format=torch.channels_last) == channels_last


def test_numpy_outputs_from_the_cache():
    x = np.random.default_rng(0).standard_normal((8, 8, 64, 64)).astype(np.float32)
    y = poolkit.avg_pool2d(x, 2)
    want = F.avg_pool2d(torch.from_numpy(x), 2).numpy()
    assert y.nbytes >= 256 << 10 and np.array_equal(y, want)
    xt = np.moveaxis(np.ascontiguousarray(np.moveaxis(x, 1, -1)), -1, 1)  # channels-last memory
    y2 = poolkit.avg_pool2d(xt, 2)
    assert np.array_equal(y2, want) and y2.strides[1] == y2.itemsize


def test_freed_output_is_reused_and_the_limit_frees_it():
    poolkit.set_cache_limit(1 << 30)
    x = torch.randn(4, 16, 128, 128)
    y = pt.max_pool2d(x, 2)
    nbytes = y.numel() * y.element_size()
    before = poolkit.cached_bytes()
    del y
    assert poolkit.cached_bytes() == before + nbytes
    y = pt.max_pool2d(x, 2)  # takes a cached block of its size again
    assert poolkit.cached_bytes() == before
    assert torch.equal(y, F.max_pool2d(x, 2))
    del y
    poolkit.set_cache_limit(0)
    assert poolkit.cached_bytes() == 0 and poolkit.cache_limit() == 0
    poolkit.set_cache_limit(1 << 30)
    with pytest.raises(ValueError, match="nbytes"):
        poolkit.set_cache_limit(-1)


@pytest.mark.parametrize("channels_last", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.uint8,
                                   torch.int8, torch.int16, torch.int32, torch.int64])
def test_cached_tensors_have_the_type_and_layout_asked_for(dtype, channels_last):
    shape = (4, 16, 64, 64)  # 256 KiB and more in every type: from the cache
    mf = torch.channels_last if channels_last else torch.contiguous_format
    t = TORCH.empty(shape, dtype, channels_last)
    want = torch.empty(shape, dtype=dtype, memory_format=mf)
    assert (t.dtype, t.shape, t.stride(), t.device) == (want.dtype, want.shape, want.stride(), want.device)
    assert t._base is None and not t._is_view()  # a tensor of its own: autograd lets callers modify it in place
    t.fill_(3)
    assert bool((t == 3).all())
    nbytes, before = t.numel() * t.element_size(), poolkit.cached_bytes()
    del t
    assert poolkit.cached_bytes() == before + nbytes


def test_cached_tensor_refuses_strides_it_cannot_hold():
    with pytest.raises(ValueError, match="strides"):
        _core.empty_tensor([4, 4], [-1, 4], 2, 32)
    with pytest.raises(ValueError, match="strides"):
        _core.empty_tensor([4, 4], [1], 2, 32)
    t = _core.empty_tensor([3, 0, 5], [0, 5, 1], 2, 32)  # empty: no element to reach
    assert t.shape == (3, 0, 5) and t.dtype == torch.float32
