"""Averages of integers in poolkit.jax, each by its convention: the PyTorch-named avg_pool1d/2d/3d take int64 as
PyTorch does (int64 out, the int64 window sum divided with truncation toward zero), bit for bit against torch; the
flax-named avg_pool takes uint8 ... int64 as flax.linen.avg_pool does (the window sum in the input's type, wrapping,
divided in JAX's default float type): bit for bit against flax's code under jit, and to the last bit against a NumPy
model of that rule. No gradient for integer inputs, as JAX gives none."""
import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch
import torch.nn.functional as F

import poolkit.jax as pj
import reference as ref
from test_integers import INTS, ints

TORCH_CASES = [  # rank, shape, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override
    (1, (2, 3, 11), 3, 2, 1, True, False, None),
    (2, (2, 3, 9, 8), 3, 2, 1, True, False, None),
    (2, (2, 3, 9, 8), (3, 2), (2, 1), (1, 0), False, True, None),
    (2, (3, 2, 7, 7), 2, None, 0, True, True, 3),
    (3, (2, 2, 5, 6, 7), (2, 3, 2), (2, 2, 1), (1, 1, 0), True, False, None),
    (3, (2, 2, 5, 6, 7), 2, 1, 0, False, True, 5),
]


def small_signed(shape):
    """Values whose window sums are often negative and not multiples of the divisor: truncation shows."""
    return np.random.default_rng(3).integers(-50, 50, shape, dtype=np.int64, endpoint=True)


@pytest.mark.parametrize("case", TORCH_CASES, ids=lambda c: f"{c[0]}d")
@pytest.mark.parametrize("values", ["small", "full-range"])
def test_torch_named_int64_average_is_torch(case, values):
    rank, shape, k, s, p, ceil_mode, cip, div = case
    x = small_signed(shape) if values == "small" else ints(shape, np.int64)  # full range: the sums wrap
    mine = getattr(pj, f"avg_pool{rank}d")
    theirs = getattr(F, f"avg_pool{rank}d")
    kw = dict(ceil_mode=ceil_mode, count_include_pad=cip, **({} if div is None else {"divisor_override": div}))
    with jax.enable_x64(True):
        y = mine(jnp.asarray(x), k, s, p, **kw)
        r = theirs(torch.from_numpy(x), k, s, p, **kw).numpy()
        assert y.dtype == np.int64
        np.testing.assert_array_equal(y, r)


def test_torch_named_int64_under_jit_and_vmap():
    x = small_signed((3, 2, 2, 7, 6))
    with jax.enable_x64(True):
        f = jax.jit(jax.vmap(lambda v: pj.avg_pool2d(v, 3, 2, 1, count_include_pad=False)))
        y = f(jnp.asarray(x))
        for i in range(3):
            np.testing.assert_array_equal(
                y[i], F.avg_pool2d(torch.from_numpy(x[i]), 3, 2, 1, count_include_pad=False).numpy())


def _same_pads(n, k, s):
    """lax's 'SAME': as many outputs as ceil(n / s), the padding split with the extra cell at the end."""
    total = max((-(-n // s) - 1) * s + k - n, 0)
    return total // 2, total - total // 2


def flax_integer_mean(x, window, strides, padding, count_include_pad, real):
    """flax.linen.avg_pool's result for a (batch, spatial..., features) integer array, in NumPy: zero padding, each
    window summed in x's own type (NumPy's integer sums wrap as XLA's do), then as `real` divided by the window's
    size (count_include_pad) or by its cells inside the input."""
    spatial = x.shape[1:-1]
    if padding == "VALID":
        pads = [(0, 0)] * len(window)
    elif padding == "SAME":
        pads = [_same_pads(n, k, s) for n, k, s in zip(spatial, window, strides)]
    else:
        pads = [tuple(p) for p in padding]
    xp = np.pad(x, [(0, 0)] + pads + [(0, 0)])
    inside = np.pad(np.ones(spatial, np.int64), pads)
    out = [(n + lo + hi - k) // s + 1 for n, (lo, hi), k, s in zip(spatial, pads, window, strides)]
    y = np.empty((x.shape[0], *out, x.shape[-1]), real)
    for o in itertools.product(*map(range, out)):
        cells = tuple(slice(i * s, i * s + k) for i, s, k in zip(o, strides, window))
        total = xp[(slice(None), *cells)].sum(axis=tuple(range(1, 1 + len(window))), dtype=x.dtype)
        divisor = np.prod(window) if count_include_pad else inside[cells].sum()
        y[(slice(None), *o)] = total.astype(real) / real.type(divisor)
    return y


FLAX_CASES = [  # shape (batch, spatial..., features), window, strides, padding
    ((2, 11, 3), (3,), (2,), "VALID"),
    ((2, 7, 6, 3), (3, 2), (2, 1), "SAME"),
    ((2, 7, 6, 3), (3, 3), (1, 2), ((1, 2), (0, 1))),
    ((2, 4, 5, 6, 2), (2, 3, 2), (2, 2, 1), "SAME"),
]


@pytest.mark.parametrize("dtype,x64", [(t, True) for t in INTS] + [(np.uint8, False), (np.int32, False)],
                         ids=lambda v: np.dtype(v).name if isinstance(v, type) else "x64" if v else "x32")
@pytest.mark.parametrize("case", FLAX_CASES, ids=lambda c: f"{len(c[1])}d-{c[3] if isinstance(c[3], str) else 'pairs'}")
def test_flax_named_integer_average_is_flax(case, dtype, x64):
    """Without jax_enable_x64 (no int64 then) the quotient is float32."""
    shape, window, strides, padding = case
    x = ints(shape, dtype)  # the type's whole range: 2x2 sums of uint8 already wrap
    with jax.enable_x64(x64):
        real = np.dtype(jnp.result_type(float))
        eps = np.finfo(real).eps
        xj = jnp.asarray(x)
        for cip in (True, False):
            want = flax_integer_mean(x, window, strides, padding, cip, real)
            # flax's code under jit (reference.avg_pool) is that rule, up to XLA's division (a product by the
            # reciprocal: the last bit can differ from the quotient NumPy rounds, and from flax's own without jit)
            flax = jax.jit(lambda v: ref.avg_pool(v, window, strides, padding, cip))(xj)  # noqa: B023
            np.testing.assert_allclose(flax, want, rtol=eps, atol=0)
            y = jax.jit(lambda v: pj.avg_pool(v, window, strides, padding, cip))(xj)  # noqa: B023
            assert y.dtype == real
            np.testing.assert_array_equal(y, flax)
            np.testing.assert_allclose(y, want, rtol=eps, atol=0)
            cf = pj.avg_pool(jnp.moveaxis(xj, -1, 1), window, strides, padding, cip, channels_first=True)
            np.testing.assert_allclose(jnp.moveaxis(cf, 1, -1), want, rtol=eps, atol=0)


def test_flax_named_integer_average_under_jit_and_vmap():
    x = ints((3, 2, 6, 5, 4), np.int16)
    f = jax.jit(jax.vmap(lambda v: pj.avg_pool(v, (2, 3), (1, 2), "SAME", False)))
    y = f(jnp.asarray(x))
    for i in range(3):
        np.testing.assert_allclose(y[i], flax_integer_mean(x[i], (2, 3), (1, 2), "SAME", False, np.dtype(np.float32)),
                                   rtol=np.finfo(np.float32).eps, atol=0)


@pytest.mark.parametrize("which", ["flax-named uint8", "torch-named int64"])
def test_no_gradient_as_jax(which):
    with jax.enable_x64(True):
        if which.startswith("flax"):
            x = jnp.asarray(ints((2, 6, 6, 3), np.uint8))
            mine = lambda x: pj.avg_pool(x, (2, 2), (2, 2)).sum()  # noqa: E731
            theirs = lambda x: ref.avg_pool(x, (2, 2), (2, 2), "VALID").sum()  # noqa: E731
        else:
            x = jnp.asarray(small_signed((2, 3, 6, 6)))
            mine = lambda x: pj.avg_pool2d(x, 2).astype(jnp.float64).sum()  # noqa: E731
            theirs = lambda x: x.astype(jnp.float64).sum()  # noqa: E731
        for f in (mine, theirs):
            with pytest.raises(TypeError, match="grad requires real- or complex-valued inputs"):
                jax.grad(f)(x)
        g, r = (jax.grad(f, allow_int=True)(x) for f in (mine, theirs))
        assert g.dtype == r.dtype == jax.dtypes.float0 and g.shape == x.shape
