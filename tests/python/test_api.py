"""The API itself: torch.nn.functional's signatures, autograd (gradcheck in float64 for every operator), the compact
argmax saved for backward, layouts kept without copies, unbatched inputs, DLPack, nn modules, and poolkit's own
operators (mixed, stochastic, 1-D fractional) against formulas written with torch."""
import inspect

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import poolkit
import poolkit.torch as pt
import poolkit.torch.nn as pnn
from known_differences import check_bits

TORCH_NAMES = [f"{base}{r}d" for r in (1, 2, 3) for base in ("max_pool", "avg_pool", "adaptive_max_pool",
                                                            "adaptive_avg_pool", "max_unpool")] + \
    ["lp_pool1d", "lp_pool2d", "fractional_max_pool2d", "fractional_max_pool3d"]


def _torch_params(name):
    """torch.nn.functional's parameters; the boolean-dispatched max pools take (*args, **kwargs) and document
    theirs on *_with_indices."""
    try:
        params = list(inspect.signature(getattr(F, name)).parameters.values())
    except (TypeError, ValueError):
        return None  # a builtin without a Python signature
    if params and params[0].kind == params[0].VAR_POSITIONAL:
        params = list(inspect.signature(getattr(F, name + "_with_indices")).parameters.values())
    return params


@pytest.mark.parametrize("name", TORCH_NAMES)
def test_signature_matches_torch(name):
    want = _torch_params(name)
    for mod in (poolkit, pt):
        got = list(inspect.signature(getattr(mod, name)).parameters.values())
        if want is None:
            assert got[0].name == "input"
            continue
        want_pos = [p for p in want if p.kind != p.KEYWORD_ONLY]
        for w, g in zip(want_pos, got):
            assert w.name == g.name, (name, w.name, g.name)
            # count_include_pad=None means PyTorch's True for numeric padding (False only for 'same'/ONNX forms)
            if w.name != "count_include_pad":
                assert w.default == g.default, (name, w.name, w.default, g.default)


def test_avg_pool_positional_order_as_torch():
    x = torch.randn(1, 2, 7, 7)
    args = (3, 2, 1, True, False, 4)  # kernel, stride, padding, ceil_mode, count_include_pad, divisor_override
    assert torch.equal(pt.avg_pool2d(x, *args), F.avg_pool2d(x, *args))


def _x(*shape):
    return torch.randn(*shape, dtype=torch.float64, generator=torch.Generator().manual_seed(7)).requires_grad_()


S2 = torch.rand(2, 3, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
S3 = torch.rand(2, 3, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
LAM = torch.tensor(0.3, dtype=torch.float64, requires_grad=True)

GRADCHECK = {
    "max_pool1d": (lambda x: pt.max_pool1d(x, 3, 2, 1, 2, True), (2, 3, 11)),
    "max_pool2d": (lambda x: pt.max_pool2d(x, 3, 2, 1), (2, 3, 7, 6)),
    "max_pool3d": (lambda x: pt.max_pool3d(x, 2, 1, 1), (1, 2, 4, 3, 4)),
    "avg_pool1d": (lambda x: pt.avg_pool1d(x, 3, 2, 1, True, False), (2, 3, 9)),
    "avg_pool2d": (lambda x: pt.avg_pool2d(x, 3, 2, 1, divisor_override=5), (2, 3, 7, 6)),
    "avg_pool3d": (lambda x: pt.avg_pool3d(x, 2, 1, 1, True), (1, 2, 4, 3, 4)),
    "lp_pool1d": (lambda x: pt.lp_pool1d(x.abs() + 0.5, 2, 3, 2), (2, 3, 9)),
    "lp_pool2d": (lambda x: pt.lp_pool2d(x.abs() + 0.5, 3, 2), (2, 3, 6, 6)),
    "lp_pool3d": (lambda x: pt.lp_pool3d(x.abs() + 0.5, 1.5, 2), (1, 2, 4, 4, 4)),
    "adaptive_max_pool1d": (lambda x: pt.adaptive_max_pool1d(x, 4), (2, 3, 9)),
    "adaptive_max_pool2d": (lambda x: pt.adaptive_max_pool2d(x, (3, 8)), (2, 3, 7, 6)),
    "adaptive_max_pool3d": (lambda x: pt.adaptive_max_pool3d(x, 2), (1, 2, 4, 3, 5)),
    "adaptive_avg_pool1d": (lambda x: pt.adaptive_avg_pool1d(x, 4), (2, 3, 9)),
    "adaptive_avg_pool2d": (lambda x: pt.adaptive_avg_pool2d(x, (3, 8)), (2, 3, 7, 6)),
    "adaptive_avg_pool3d": (lambda x: pt.adaptive_avg_pool3d(x, 2), (1, 2, 4, 3, 5)),
    "fractional_max_pool2d": (lambda x: pt.fractional_max_pool2d(x, 2, (4, 4), _random_samples=S2), (2, 3, 9, 8)),
    "fractional_max_pool3d": (lambda x: pt.fractional_max_pool3d(x, 2, 3, _random_samples=S3), (2, 3, 6, 6, 6)),
    "max_unpool2d": (lambda x: pt.max_unpool2d(*pt.max_pool2d(x, 2, return_indices=True), 2), (2, 3, 6, 6)),
    "global_max_pool": (lambda x: pt.global_max_pool(x), (2, 3, 5, 4)),
    "global_avg_pool": (lambda x: pt.global_avg_pool(x), (2, 3, 5, 4)),
    "global_lp_pool": (lambda x: pt.global_lp_pool(x, 2), (2, 3, 5, 4)),
    "mixed_pool2d": (lambda x: pt.mixed_pool2d(x, 3, 2, 1, lambda_=LAM), (2, 3, 7, 6)),
    "stochastic_pool2d train": (lambda x: pt.stochastic_pool2d(x.abs() + 0.1, 2, seed=5), (2, 3, 6, 6)),
    "stochastic_pool2d eval": (lambda x: pt.stochastic_pool2d(x.abs() + 0.1, 2, training=False), (2, 3, 6, 6)),
}


@pytest.mark.parametrize("name", sorted(GRADCHECK))
def test_gradcheck(name, tally):
    fn, shape = GRADCHECK[name]
    assert torch.autograd.gradcheck(fn, (_x(*shape),))
    tally("gradcheck float64", cases=1)


def test_gradcheck_mixed_lambda():
    x = _x(2, 3, 6, 6)
    assert torch.autograd.gradcheck(lambda lam: pt.mixed_pool2d(x, 2, lambda_=lam), (LAM,))


def test_compact_argmax_saved_unless_indices_asked():
    x = torch.randn(2, 3, 8, 8, requires_grad=True)
    y = pt.max_pool2d(x, 3, 2)
    saved = y.grad_fn.saved_tensors[0]  # the argmax first (registered operators also save x, for a double backward)
    assert saved.dtype == torch.uint8 and saved.shape == y.shape
    y2, idx = pt.max_pool2d(x, 3, 2, return_indices=True)
    assert idx.dtype == torch.int64 and y2.grad_fn.saved_tensors[0].dtype == torch.int64
    big = pt.adaptive_max_pool2d(torch.randn(1, 1, 40, 40, requires_grad=True), 2)  # 20x20 window: int16
    assert big.grad_fn.saved_tensors[0].dtype == torch.int16


def test_layouts_kept_without_copies():
    x = torch.randn(2, 5, 9, 8).to(memory_format=torch.channels_last)
    y = pt.max_pool2d(x, 2)
    assert y.is_contiguous(memory_format=torch.channels_last)
    assert torch.equal(y, F.max_pool2d(x, 2))
    x3 = torch.randn(2, 5, 4, 6, 6).to(memory_format=torch.channels_last_3d)
    assert pt.avg_pool3d(x3, 2).is_contiguous(memory_format=torch.channels_last_3d)
    a = np.random.default_rng(0).standard_normal((2, 9, 8, 5)).astype(np.float32)  # NHWC memory
    nchw = np.moveaxis(a, -1, 1)
    out = poolkit.max_pool2d(nchw, 2)
    assert out.strides[1] == out.itemsize  # channels innermost, as the input
    np.testing.assert_array_equal(out, F.max_pool2d(torch.from_numpy(nchw), 2).numpy())
    nhwc = poolkit.max_pool2d(a, 2, data_format="channels_last")
    np.testing.assert_array_equal(nhwc, np.moveaxis(out, 1, -1))
    rev = nchw[..., ::-1]  # negative strides
    np.testing.assert_array_equal(poolkit.avg_pool2d(rev, 3), F.avg_pool2d(torch.from_numpy(rev.copy()), 3).numpy())


def test_unbatched_inputs():
    x = torch.randn(3, 9, 8)
    assert torch.equal(pt.max_pool2d(x, 2), F.max_pool2d(x, 2))
    y, i = poolkit.max_pool1d(x.numpy(), 3, return_indices=True)
    ty, ti = F.max_pool1d(x, 3, return_indices=True)
    assert np.array_equal(y, ty.numpy()) and np.array_equal(i, ti.numpy())
    assert torch.equal(pt.adaptive_avg_pool2d(x, 4), F.adaptive_avg_pool2d(x, 4))
    assert torch.equal(pt.max_unpool2d(*F.max_pool2d(x, 2, return_indices=True), 2),
                       F.max_unpool2d(*F.max_pool2d(x, 2, return_indices=True), 2))


def test_torch_tensors_and_dlpack_through_numpy_api():
    x = torch.randn(2, 3, 8, 8)
    y = poolkit.max_pool2d(x, 2)
    assert isinstance(y, torch.Tensor) and torch.equal(y, F.max_pool2d(x, 2))

    class Foreign:  # any DLPack producer
        def __init__(self, a):
            self.a = a

        def __dlpack__(self, stream=None):
            return self.a.__dlpack__()

        def __dlpack_device__(self):
            return self.a.__dlpack_device__()

    a = x.numpy()
    np.testing.assert_array_equal(poolkit.avg_pool2d(Foreign(a), 2), F.avg_pool2d(x, 2).numpy())


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_half_precision_max(dtype):
    x = torch.randn(2, 3, 9, 9).to(dtype)
    if dtype == torch.float16:
        ref = F.max_pool2d(x.float(), 3, 2, 1).to(dtype)  # PyTorch 1.13 has no CPU float16 max pool
    else:
        ref = F.max_pool2d(x, 3, 2, 1)
    assert torch.equal(pt.max_pool2d(x, 3, 2, 1), ref)


def test_nn_modules_in_sequential():
    x = torch.randn(2, 3, 16, 16, generator=torch.Generator().manual_seed(0))
    ours = torch.nn.Sequential(pnn.MaxPool2d(3, 2, 1), pnn.AvgPool2d(3, 2, ceil_mode=True), pnn.LPPool2d(2, 2),
                               pnn.AdaptiveMaxPool2d((2, 3)), pnn.AdaptiveAvgPool2d(1))
    ref = torch.nn.Sequential(torch.nn.MaxPool2d(3, 2, 1), torch.nn.AvgPool2d(3, 2, ceil_mode=True),
                              torch.nn.LPPool2d(2, 2), torch.nn.AdaptiveMaxPool2d((2, 3)),
                              torch.nn.AdaptiveAvgPool2d(1))
    h = x
    for a, b in zip(ours, ref):  # each module on the same input: bit-identical but for the known differences
        got, want = a(h), b(h)
        assert torch.allclose(got, want, rtol=1e-6, atol=1e-6)
        check_bits(torch.equal(got, want), "nn_sequential", None, type(a).__name__, "output")
        h = want
    assert torch.allclose(ours(x), ref(x), rtol=1e-6, atol=1e-6)
    for cls in (pnn.MaxPool1d, pnn.AvgPool3d, pnn.AdaptiveAvgPool3d, pnn.FractionalMaxPool2d, pnn.MaxUnpool2d,
                pnn.MixedPool2d, pnn.StochasticPool2d):
        assert issubclass(cls, torch.nn.Module)
    pool, unpool = pnn.MaxPool2d(2, return_indices=True), pnn.MaxUnpool2d(2)
    y, i = pool(x)
    assert torch.equal(unpool(y, i), torch.nn.MaxUnpool2d(2)(y, i))
    sp = pnn.StochasticPool2d(2, seed=3)
    xp = x.abs()
    sp.eval()
    assert torch.equal(sp(xp), pt.stochastic_pool2d(xp, 2, training=False))


def test_mixed_pool_is_the_blend():
    x = torch.randn(2, 3, 9, 9, dtype=torch.float64)
    want = 0.25 * F.max_pool2d(x, 3, 2, 1) + 0.75 * F.avg_pool2d(x, 3, 2, 1)
    assert torch.allclose(pt.mixed_pool2d(x, 3, 2, 1, lambda_=0.25), want, rtol=1e-12, atol=1e-12)


def test_stochastic_pool():
    x = torch.rand(2, 3, 8, 8, dtype=torch.float64) + 0.01
    win = F.unfold(x.reshape(6, 1, 8, 8), 2, stride=2)  # (6, 4, 16): the cells of each window
    expected = ((win * win).sum(1) / win.sum(1)).reshape(2, 3, 4, 4)
    assert torch.allclose(pt.stochastic_pool2d(x, 2, training=False), expected, rtol=1e-12)
    a, b = pt.stochastic_pool2d(x, 2, seed=11), pt.stochastic_pool2d(x, 2, seed=11)
    assert torch.equal(a, b)  # reproducible from the seed
    picked = a.reshape(6, 1, 16)
    assert bool((win == picked).any(1).all())  # every output is one of its window's cells


def test_fractional_max_pool1d_is_the_2d_rule_on_one_row():
    x = torch.randn(2, 3, 17, dtype=torch.float64)
    u = torch.rand(2, 3, 1, dtype=torch.float64)
    y, i = pt.fractional_max_pool1d(x, 3, 6, return_indices=True, _random_samples=u)
    u2 = torch.cat([u, torch.zeros_like(u)], -1)  # (W, H) samples; H has a single window
    ty, ti = F.fractional_max_pool2d(x[:, :, None], (1, 3), (1, 6), return_indices=True, _random_samples=u2)
    assert torch.equal(y, ty[:, :, 0]) and torch.equal(i, ti[:, :, 0])


def test_backward_functions_documented():
    for name in poolkit.__all__:
        if name.endswith("_backward"):
            fn = getattr(poolkit, name)
            params = list(inspect.signature(fn).parameters)
            assert params[0] == "grad_output", name
