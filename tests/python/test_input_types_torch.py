"""Unsupported input types through poolkit.torch: a TypeError naming the argument, the type it got and the types
it takes, raised before the C++ operator runs; supported float types come back in the input's dtype. (Object
arrays and byte-swapped data have no torch.Tensor form: tests/python/test_input_types.py covers them.)"""
import pytest
import torch

import poolkit.torch as pt
import poolkit.torch.nn as pnn
from test_input_types import no_core, refused  # noqa: F401  (no_core: a fixture)

T = torch.randn(1, 2, 6, 6)


def test_bool_tensor(no_core):
    refused(lambda: pt.max_pool2d(T > 0, 2), "input", "bool", "float32, float64, float16, bfloat16, uint8, int8, int16, int32 or int64")


def test_bool_tensor_through_module(no_core):
    refused(lambda: pnn.AvgPool2d(2)(T > 0), "input", "bool", "float32")


def test_complex_tensor(no_core):
    refused(lambda: pt.avg_pool2d(T.to(torch.complex64), 2), "input", "complex64", "float32")


def test_integer_tensor_for_lp_pooling(no_core):
    refused(lambda: pt.lp_pool2d(T.to(torch.int32), 2, 2), "input", "int32", "float32")


def test_integer_tensor_for_mixed_pooling(no_core):
    refused(lambda: pt.mixed_pool2d(T.to(torch.int64), 2), "input", "int64", "float32")


def test_tensor_on_another_device(no_core):
    refused(lambda: pt.max_pool2d(T.to("meta"), 2), "input", "meta", "CPU or CUDA tensor")


def test_cuda_tensor_without_the_cuda_backend(no_core, monkeypatch):
    # A CUDA tensor reaches the check without a GPU as a CPU tensor claiming to be one; a build with the CUDA
    # backend is told to lack it, so the refusal holds for every build.
    from poolkit import _core
    monkeypatch.setattr(_core, "with_cuda", False, raising=False)
    monkeypatch.setattr(torch.Tensor, "is_cuda", property(lambda self: True))
    monkeypatch.setattr(torch.Tensor, "is_cpu", property(lambda self: False))
    refused(lambda: pt.avg_pool2d(T, 2), "input", "CUDA tensor", "built without CUDA")


@pytest.mark.parametrize("value", [[[1.0, 2.0]], None, "abc"], ids=["list", "None", "str"])
def test_non_tensor(no_core, value):
    refused(lambda: pt.max_pool1d(value, 2), "input", type(value).__name__, "torch.Tensor")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
def test_output_dtype_is_input_dtype(dtype):
    x = T.to(dtype).requires_grad_()
    outs = {"max_pool2d": pt.max_pool2d(x, 2), "avg_pool2d": pt.avg_pool2d(x, 2), "lp_pool2d": pt.lp_pool2d(x, 2, 2),
            "mixed_pool2d": pt.mixed_pool2d(x, 2), "stochastic_pool2d": pt.stochastic_pool2d(x, 2),
            "adaptive_avg_pool2d": pt.adaptive_avg_pool2d(x, 4)}
    if x.element_size() >= 4:  # 16-bit inputs: the core takes float32/float64 samples only (reported, issue 20)
        outs["fractional_max_pool2d"] = pt.fractional_max_pool2d(x, 2, 4)
    y, idx = pt.max_pool2d(x, 2, return_indices=True)
    outs["max_unpool2d"] = pt.max_unpool2d(y, idx, 2)
    for name, out in outs.items():
        assert out.dtype == dtype, f"{name}: {out.dtype} from {dtype}"
        (grad,) = torch.autograd.grad(out.float().sum(), x)
        assert grad.dtype == dtype, f"{name} backward: {grad.dtype} from {dtype}"


def test_cuda_tensors_on_two_devices():
    # No GPU needed: the check reads only each tensor's device, before the core is readied.
    from types import SimpleNamespace

    from poolkit._layout import TORCH
    x = SimpleNamespace(is_cuda=True, device=torch.device("cuda:0"))
    dy = SimpleNamespace(is_cuda=True, device=torch.device("cuda:1"))
    with pytest.raises(TypeError, match="one device .got cuda:0 and cuda:1"):
        TORCH.prepare(x, (dy,))
