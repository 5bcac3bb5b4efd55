"""stride=None means the kernel size (PyTorch's default) in every padding form: per-side (begin, end) pairs and the
ONNX auto_pad strings too, not just numeric padding. Expected values: PyTorch with the stride given and the
padding made explicit (F.pad with -inf for max, 0 for sums)."""
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import poolkit
import poolkit.torch as pt

X = torch.randn(2, 3, 10, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(3))


def torch_max(x, k, pads):
    """pads: (top, bottom, left, right); stride = kernel."""
    t, b, left, right = pads
    return F.max_pool2d(F.pad(x, (left, right, t, b), value=-math.inf), k, k)


# (padding, its explicit pads (top, bottom, left, right) for a 10 x 8 input and kernel 3)
CASES = [
    (((0, 0), (0, 0)), (0, 0, 0, 0)),
    (((0, 0), (1, 1)), (0, 0, 1, 1)),
    (((1, 1), (0, 1)), (1, 1, 0, 1)),
    ("VALID", (0, 0, 0, 0)),
    # SAME: outputs ceil(10/3) = 4 and ceil(8/3) = 3; total padding 3*3+3-10 = 2 and 2*3+3-8 = 1
    ("SAME_UPPER", (1, 1, 0, 1)),
    ("SAME_LOWER", (1, 1, 1, 0)),
]


@pytest.mark.parametrize("padding, pads", CASES)
def test_max_pool_stride_defaults_to_kernel(padding, pads):
    want = torch_max(X, 3, pads)
    assert torch.equal(pt.max_pool2d(X, 3, padding=padding), want)
    assert torch.equal(pt.max_pool2d(X, 3, None, padding), want)
    assert np.array_equal(poolkit.max_pool2d(X.numpy(), 3, padding=padding), want.numpy())
    # one kernel entry per axis: the stride follows each
    want_13 = F.max_pool2d(F.pad(X, (pads[2], pads[3], 0, 0), value=-math.inf), (1, 3))
    if padding in ("VALID", "SAME_UPPER", "SAME_LOWER"):
        return
    pad_13 = ((0, 0), padding[1])
    assert torch.equal(pt.max_pool2d(X, (1, 3), padding=pad_13), want_13)


@pytest.mark.parametrize("padding", [((0, 0), (0, 0)), "VALID"])
def test_avg_and_lp_pool_stride_defaults_to_kernel(padding):
    assert torch.equal(pt.avg_pool2d(X, 3, padding=padding), F.avg_pool2d(X, 3))
    assert np.array_equal(poolkit.avg_pool2d(X.numpy(), 3, padding=padding), F.avg_pool2d(X, 3).numpy())
    xp = X.abs() + 0.5
    assert torch.equal(pt.lp_pool2d(xp, 2, 3, padding=padding), F.lp_pool2d(xp, 2, 3))


def test_avg_pool_pairs_count_real_cells_only():
    # ((0, 0), (1, 1)), stride 3 by default: windows of columns [-1, 2), [2, 5), [5, 8); the padded cells are not
    # counted (the default for per-side padding), so the edge windows average 2 columns.
    got = pt.avg_pool2d(X, 3, padding=((0, 0), (1, 1)))
    sums = F.avg_pool2d(F.pad(X, (1, 1, 0, 0)), 3, divisor_override=1)
    counts = F.avg_pool2d(F.pad(torch.ones_like(X), (1, 1, 0, 0)), 3, divisor_override=1)
    assert got.shape == (2, 3, 3, 3)
    assert torch.allclose(got, sums / counts, rtol=1e-14, atol=0)
