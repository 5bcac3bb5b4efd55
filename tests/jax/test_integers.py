"""Integer inputs in poolkit.jax: max pooling (window, adaptive, global, fractional) and max-unpool take uint8 ...
int64 as lax.reduce_window's max does, bit-exact; no gradient (JAX's own refusal, float0 with allow_int); the
averaging operators other than avg_pool and avg_pool*d refuse integers."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from jax import lax

import poolkit.jax as pj
import reference as ref

RNG = np.random.default_rng(11)
INTS = [np.uint8, np.int8, np.int16, np.int32, np.int64]


def ints(shape, dtype):
    """The type's whole range, its extremes included, and many ties."""
    info = np.iinfo(dtype)
    v = RNG.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    v.flat[::7] = info.min
    v.flat[3::11] = info.max
    v.flat[5::4] = v.flat[4::4][:len(v.flat[5::4])]
    return v


def reduce_window_max(x, window, strides, padding, channels_first=False):
    dims, strd, pad = ref._window_args(x, window, strides, padding, channels_first)
    return lax.reduce_window(x, jnp.array(np.iinfo(x.dtype).min, x.dtype), lax.max, dims, strd, pad)


@pytest.fixture(autouse=True)
def x64():
    with jax.enable_x64(True):
        yield


@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("case", [((2, 9, 3), (3,), (2,), "SAME"), ((2, 7, 6, 5), (3, 2), (2, 1), "VALID"),
                                  ((2, 7, 6, 5), (3, 3), (1, 2), ((1, 1), (0, 2))),
                                  ((2, 5, 6, 4, 3), (2, 3, 2), (2, 2, 1), "SAME")])
def test_window_max_is_reduce_window(dtype, case):
    shape, window, strides, padding = case
    x = jnp.asarray(ints(shape, dtype))
    for cf in (False, True):
        y = pj.max_pool(x, window, strides, padding, channels_first=cf)
        r = reduce_window_max(x, window, strides, padding, cf)
        assert y.dtype == x.dtype
        np.testing.assert_array_equal(y, r)
    np.testing.assert_array_equal(pj.global_max_pool(x), x.max(axis=tuple(range(1, x.ndim - 1))))


@pytest.mark.parametrize("dtype", INTS)
def test_torch_named_and_indices_are_torch(dtype):
    x = ints((2, 3, 9, 8), dtype)
    xt = torch.from_numpy(x)
    y, i = pj.max_pool2d(jnp.asarray(x), 3, 2, 1, return_indices=True)
    r, ri = F.max_pool2d(xt, 3, 2, 1, return_indices=True)
    np.testing.assert_array_equal(y, r.numpy())
    np.testing.assert_array_equal(i, ri.numpy())  # ties: the first maximum wins, as PyTorch's
    # unpooling: each value at its index of its plane (PyTorch has no integer max_unpool2d to compare with)
    want = np.zeros((6, 72), dtype)
    np.put_along_axis(want, ri.numpy().reshape(6, -1), r.numpy().reshape(6, -1), axis=1)
    np.testing.assert_array_equal(pj.max_unpool2d(y, i, 3, 2, 1, (9, 8)), want.reshape(x.shape))
    # adaptive bins and fractional windows: PyTorch's on the same values as float64 (exact below 2^53)
    small = (x.astype(np.int64) % 1000).astype(dtype) if dtype == np.int64 else x
    xf = torch.from_numpy(small.astype(np.float64))
    np.testing.assert_array_equal(pj.adaptive_max_pool2d(jnp.asarray(small), (4, 3)),
                                  F.adaptive_max_pool2d(xf, (4, 3)).numpy().astype(dtype))
    s = RNG.random((2, 3, 2))
    fy, fi = pj.fractional_max_pool2d(jnp.asarray(small), 2, (4, 5), return_indices=True,
                                      _random_samples=jnp.asarray(s))
    r, ri = F.fractional_max_pool2d(xf, 2, (4, 5), return_indices=True, _random_samples=torch.from_numpy(s))
    assert fy.dtype == dtype
    np.testing.assert_array_equal(fy, r.numpy().astype(dtype))
    np.testing.assert_array_equal(fi, ri.numpy())


@pytest.mark.parametrize("dtype", [np.uint8, np.int32])
def test_no_gradient_as_jax(dtype):
    x = jnp.asarray(ints((2, 6, 6, 3), dtype))
    mine = lambda x: pj.max_pool(x, (2, 2), (2, 2)).astype(jnp.float32).sum()  # noqa: E731
    theirs = lambda x: reduce_window_max(x, (2, 2), (2, 2), "VALID").astype(jnp.float32).sum()  # noqa: E731
    for f in (mine, theirs):
        with pytest.raises(TypeError, match="grad requires real- or complex-valued inputs"):
            jax.grad(f)(x)
    g, r = (jax.grad(f, allow_int=True)(x) for f in (mine, theirs))
    assert g.dtype == r.dtype == jax.dtypes.float0 and g.shape == x.shape
    y, vjp = jax.vjp(lambda x: pj.max_unpool(*pj.max_pool(x, (2, 2), (2, 2), return_indices=True), (6, 6)), x)
    assert vjp(np.zeros(y.shape, jax.dtypes.float0))[0].dtype == jax.dtypes.float0


def test_other_averages_refuse_integers():
    """avg_pool and the PyTorch-named avg_pool*d take integers (test_integer_averages.py); PyTorch's adaptive and
    Lp pooling, and poolkit's mixed, stochastic and global averages, take none (nor does the core)."""
    x = jnp.asarray(ints((2, 6, 6, 3), np.int64))
    for f in (lambda x: pj.adaptive_avg_pool(x, (2, 2)), pj.global_avg_pool, lambda x: pj.lp_pool(x, 2.0, (2, 2)),
              lambda x: pj.mixed_pool(x, (2, 2)), lambda x: pj.stochastic_pool(x, (2, 2)),
              lambda x: pj.adaptive_avg_pool2d(x, 2), lambda x: pj.lp_pool2d(x, 2.0, 2)):
        with pytest.raises(TypeError, match=r"poolkit: inputs: dtype must be float32, float64, bfloat16 or "
                                            r"float16 \(got int64\); of the integer types max pooling"):
            f(x)
    with pytest.raises(TypeError, match=r"inputs: dtype must be float32, float64, bfloat16, float16 or int64 "
                                        r"\(got int32\)$"):
        pj.avg_pool2d(x.astype(jnp.int32), 2)  # PyTorch's avg_pool2d: int64 alone
    with pytest.raises(TypeError, match="inputs: dtype must be .*int64 \\(got bool\\)"):
        pj.max_pool(x > 0, (2, 2))
