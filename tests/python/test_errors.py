"""Bad arguments raise ValueError / TypeError / IndexError / OverflowError naming the argument and the rule, through
the NumPy and torch entry points; nothing crashes."""
import numpy as np
import pytest
import torch

import poolkit
import poolkit.torch as pt

X = np.random.default_rng(0).standard_normal((1, 2, 6, 6)).astype(np.float32)


@pytest.mark.parametrize("call, exc, words", [
    (lambda: poolkit.max_pool2d(X, 0), ValueError, ["kernel_size", ">= 1"]),
    (lambda: poolkit.max_pool2d(X, 2, 0), ValueError, ["stride", ">= 1"]),
    (lambda: poolkit.max_pool2d(X, 2, 1, 2), ValueError, ["padding", "half"]),
    (lambda: poolkit.max_pool2d(X, 2, 1, -1), ValueError, ["padding", ">= 0"]),
    (lambda: poolkit.max_pool2d(X, 2, 1, 0, 0), ValueError, ["dilation", ">= 1"]),
    (lambda: poolkit.max_pool2d(X, 7), ValueError, ["output size", ">= 1"]),
    (lambda: poolkit.max_pool2d(X, (2, 2, 2)), ValueError, ["kernel_size", "entries"]),
    (lambda: poolkit.max_pool2d(X, 2.5), TypeError, ["kernel_size"]),
    (lambda: poolkit.max_pool2d(X, 2, padding="bogus"), ValueError, ["padding"]),
    (lambda: poolkit.max_pool2d(X, 2, 1, "same", dilation=2), ValueError, ["dilation"]),
    (lambda: poolkit.max_pool2d(X, 2, data_format="nhwc"), ValueError, ["data_format"]),
    (lambda: poolkit.max_pool2d(X[0, 0], 2), ValueError, ["input", "3-D"]),
    (lambda: poolkit.avg_pool2d(X.astype(np.int32), 2), TypeError, ["float32", "int64"]),
    (lambda: poolkit.max_pool1d(X[0], 2 ** 62, dilation=4), OverflowError, ["overflows"]),
    (lambda: poolkit.avg_pool2d(X, 2, divisor_override=0), ValueError, ["divisor_override", "> 0"]),
    (lambda: poolkit.avg_pool3d(X[:, :, None, :2], 3), ValueError, ["input", "kernel_size"]),
    (lambda: poolkit.lp_pool2d(X, 0, 2), ValueError, ["norm_type"]),
    (lambda: poolkit.adaptive_avg_pool2d(X, 0), ValueError, ["output_size", ">= 1"]),
    (lambda: poolkit.adaptive_max_pool2d(X, (1, 2, 3)), ValueError, ["output_size"]),
    (lambda: poolkit.fractional_max_pool2d(X, 2, (5, 6), _random_samples=np.full((1, 2, 2), 0.5, np.float32)),
     ValueError, ["output_size", "input size"]),
    (lambda: poolkit.fractional_max_pool2d(X, 2, (3, 3), _random_samples=np.full((1, 2, 3), 0.5, np.float32)),
     ValueError, ["_random_samples", "shape"]),
    (lambda: poolkit.fractional_max_pool2d(X, 2, (3, 3), _random_samples=np.full((1, 2, 2), 1.5, np.float32)),
     ValueError, ["_random_samples", "[0, 1)"]),
    (lambda: poolkit.fractional_max_pool2d(X, 2), ValueError, ["output_size"]),
    (lambda: poolkit.max_unpool2d(X, np.full(X.shape, 99, np.int64), 2, 1), IndexError, ["indices", "invalid"]),
    (lambda: poolkit.max_unpool2d(X, np.zeros((1, 2, 5, 5), np.int64), 2), ValueError, ["indices", "shape"]),
    (lambda: poolkit.max_unpool2d(X, np.zeros(X.shape, np.int32), 2), TypeError, ["indices", "int64"]),
    (lambda: poolkit.max_unpool2d(X, np.zeros(X.shape, np.int64), 2, output_size=(20, 12)), ValueError,
     ["output_size", "stride"]),
    (lambda: poolkit.max_pool2d_backward(np.zeros((1, 2, 2, 2), np.float32), X, None, 2), ValueError,
     ["grad_output", "shape"]),
    (lambda: poolkit.max_pool2d_backward(np.zeros((1, 2, 3, 3), np.float32), X,
                                         np.zeros((1, 2, 3, 3), np.float64), 2), TypeError, ["indices"]),
    (lambda: pt.max_pool2d(torch.from_numpy(X), 0), ValueError, ["kernel_size"]),
    (lambda: pt.max_pool2d(X, 2), TypeError, ["torch.Tensor"]),
    (lambda: pt.max_unpool1d(torch.zeros(1, 1, 3), torch.tensor([[[0, 1, 9]]]), 2), IndexError, ["indices"]),
])
def test_error(call, exc, words, tally):
    with pytest.raises(exc) as info:
        call()
    msg = str(info.value)
    for w in words:
        assert w in msg, f"{w!r} not in {msg!r}"
    tally("errors", cases=1)


def test_unpool_rejects_before_writing():
    x = torch.ones(1, 1, 4)
    with pytest.raises(IndexError):
        pt.max_unpool1d(x, torch.tensor([[[0, 1, 2, -1]]]), 2)
