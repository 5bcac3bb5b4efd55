"""Unsupported input types through the NumPy API: a TypeError naming the argument, the type it got and the types
it takes, raised before the C++ operator runs; supported float types come back in the input's dtype. (NumPy
alone: this file also runs against the installed wheel in a venv without torch.)"""
import numpy as np
import pytest

import poolkit
from poolkit import _engine

X = np.random.default_rng(0).standard_normal((1, 2, 6, 6)).astype(np.float32)
FLOATS = ["float32", "float64", "float16"]


class ReachedCore(Exception):
    pass


class _Unreachable:
    """Stands for poolkit._core in _engine: any operator call raises ReachedCore."""

    def __getattr__(self, name):
        def call(*args):
            raise ReachedCore(name)
        return call


@pytest.fixture
def no_core(monkeypatch):
    """The operators' C++ entry points made unreachable: a refusal must come before them."""
    monkeypatch.setattr(_engine, "_core", _Unreachable())


def refused(call, *words):
    with pytest.raises(TypeError) as info:
        call()
    msg = str(info.value)
    for w in words:
        assert w in msg, f"{w!r} not in {msg!r}"


def test_object_array(no_core):
    refused(lambda: poolkit.avg_pool2d(X.astype(object), 2), "input", "object", "float32, float64, float16, bfloat16 or int64")


def test_bool_array(no_core):
    refused(lambda: poolkit.max_pool2d(X > 0, 2), "input", "bool", "float32")


def test_complex_array(no_core):
    refused(lambda: poolkit.avg_pool2d(X.astype(np.complex64), 2), "input", "complex64", "float32")


def test_complex_grad_output(no_core):
    dy = np.zeros((1, 2, 3, 3), np.complex128)
    refused(lambda: poolkit.avg_pool2d_backward(dy, X, 2), "grad_output", "complex128", "float32")


def test_non_native_byte_order(no_core):
    swapped = X.astype(X.dtype.newbyteorder())
    assert not swapped.dtype.isnative
    refused(lambda: poolkit.max_pool2d(swapped, 2), "input", "byte order", swapped.dtype.str, "float32")


def test_integer_array_for_lp_pooling(no_core):
    refused(lambda: poolkit.lp_pool2d(np.ones((1, 2, 6, 6), np.int32), 2, 2), "input", "int32", "float32")


def test_list(no_core):
    refused(lambda: poolkit.avg_pool2d(X.tolist(), 2), "input", "list", "numpy.ndarray")


def test_none(no_core):
    refused(lambda: poolkit.max_pool2d(None, 2), "input", "NoneType", "numpy.ndarray")


def test_string(no_core):
    refused(lambda: poolkit.max_pool1d("abcdef", 2), "input", "str", "numpy.ndarray")


def test_list_as_grad_output(no_core):
    refused(lambda: poolkit.global_avg_pool_backward([[[[1.0]]]], X), "grad_output", "list")


@pytest.mark.parametrize("call", [
    lambda a: poolkit.max_pool2d(a, 2),
    lambda a: poolkit.avg_pool2d(a.astype(np.int64), 2),
    lambda a: poolkit.max_unpool2d(a, np.zeros(a.shape, np.int64), 1),
], ids=["max_pool2d", "avg_pool2d", "max_unpool2d"])
def test_integer_arrays_reach_the_core_for_max_avg_unpool(no_core, call):
    """The integer arrays these families take (poolkit/_types.py: max and unpool every integer type, average
    int64) reach the core: no refusal before it."""
    with pytest.raises(ReachedCore):
        call(np.ones((1, 2, 6, 6), np.int32))


def _every_family(x):
    """(name, output) of each operator family's forward and backward on x (N, C, 6, 6)."""
    y, idx = poolkit.max_pool2d(x, 2, return_indices=True)
    dy = np.ones_like(y)
    yield "max_pool2d", y
    yield "max_pool2d_backward", poolkit.max_pool2d_backward(dy, x, idx, 2)
    yield "avg_pool2d", poolkit.avg_pool2d(x, 2)
    yield "avg_pool2d_backward", poolkit.avg_pool2d_backward(dy, x, 2)
    yield "lp_pool2d", poolkit.lp_pool2d(x, 2, 2)
    yield "lp_pool2d_backward", poolkit.lp_pool2d_backward(dy, x, 2, 2)
    yield "mixed_pool2d", poolkit.mixed_pool2d(x, 2)
    yield "mixed_pool2d_backward", poolkit.mixed_pool2d_backward(dy, x, 2)[0]
    yield "stochastic_pool2d", poolkit.stochastic_pool2d(x, 2)
    yield "stochastic_pool2d_backward", poolkit.stochastic_pool2d_backward(dy, x, 2)
    yield "adaptive_avg_pool2d", poolkit.adaptive_avg_pool2d(x, 4)
    yield "adaptive_max_pool2d", poolkit.adaptive_max_pool2d(x, 4)
    if x.dtype.itemsize >= 4:  # 16-bit inputs: the core takes float32/float64 samples only (reported, issue 20)
        yield "fractional_max_pool2d", poolkit.fractional_max_pool2d(x, 2, 4)
    yield "max_unpool2d", poolkit.max_unpool2d(y, idx, 2)
    yield "max_unpool2d_backward", poolkit.max_unpool2d_backward(x, idx)


@pytest.mark.parametrize("dtype", FLOATS)
def test_output_dtype_is_input_dtype(dtype):
    x = X.astype(dtype)
    for name, out in _every_family(x):
        assert out.dtype == x.dtype, f"{name}: {out.dtype} from {x.dtype}"
