"""poolkit.jax against lax.reduce_window, PyTorch and NumPy: values (max bit-exact), gradients, dtypes, errors."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch
from jax.test_util import check_grads

import poolkit.jax as pj
import reference as ref

RNG = np.random.default_rng(0)


def normal(shape, dtype=np.float32):
    return jnp.asarray(RNG.standard_normal(shape).astype(np.float32)).astype(dtype)


CASES = [  # (input shape channels-last, window, strides, padding)
    ((2, 9, 3), (3,), (2,), "VALID"),
    ((2, 9, 3), (2,), (2,), "SAME"),
    ((2, 7, 6, 3), (2, 2), (2, 2), "VALID"),
    ((2, 7, 6, 3), (3, 2), (2, 1), "SAME"),
    ((2, 7, 6, 3), (3, 3), None, ((1, 1), (0, 2))),
    ((2, 5, 6, 4, 2), (2, 3, 2), (2, 2, 1), "SAME"),
    ((3, 2, 7, 6, 3), (2, 2), (2, 2), "VALID"),  # two batch axes
]


def _strides(case):
    return case[2] if case[2] is not None else (1,) * len(case[1])


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("channels_first", [False, True])
@pytest.mark.parametrize("dtype", [jnp.float32, jnp.float64, jnp.bfloat16, jnp.float16])
def test_max_pool_is_reduce_window(case, channels_first, dtype):
    shape, window, strides, padding = case
    with jax.enable_x64(dtype == jnp.float64):
        x = normal(shape, dtype)
        y = pj.max_pool(x, window, strides, padding, channels_first=channels_first)
        r = ref.max_pool(x, window, _strides(case), padding, channels_first)
        assert y.dtype == x.dtype and y.shape == r.shape
        np.testing.assert_array_equal(np.asarray(y, np.float32), np.asarray(r, np.float32))


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("count_include_pad", [True, False])
def test_avg_pool_is_reduce_window(case, count_include_pad):
    shape, window, strides, padding = case
    x = normal(shape)
    for cf in (False, True):
        y = pj.avg_pool(x, window, strides, padding, count_include_pad, channels_first=cf)
        r = ref.avg_pool(x, window, _strides(case), padding, count_include_pad, cf)
        np.testing.assert_allclose(y, r, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("case", CASES[:6])
def test_max_gradient_is_reduce_windows(case):
    shape, window, strides, padding = case
    x = normal(shape)
    dy = normal(ref.max_pool(x, window, _strides(case), padding).shape)
    g = jax.grad(lambda x: (pj.max_pool(x, window, strides, padding) * dy).sum())(x)
    r = jax.grad(lambda x: (ref.max_pool(x, window, _strides(case), padding) * dy).sum())(x)
    np.testing.assert_allclose(g, r, rtol=1e-6, atol=1e-6)
    if tuple(_strides(case)) == tuple(window):  # no overlap: each cell gets one term
        np.testing.assert_array_equal(g, r)


@pytest.mark.parametrize("case", CASES[:6])
def test_avg_gradient_is_reduce_windows(case):
    shape, window, strides, padding = case
    x = normal(shape)
    for cip in (True, False):
        g = jax.grad(lambda x: (pj.avg_pool(x, window, strides, padding, cip) ** 2).sum())(x)
        r = jax.grad(lambda x: (ref.avg_pool(x, window, _strides(case), padding, cip) ** 2).sum())(x)
        np.testing.assert_allclose(g, r, rtol=1e-5, atol=1e-6)


def _torch_nchw(x):
    return torch.from_numpy(np.array(x)).permute(0, 3, 1, 2)


def test_lp_pool_is_torch():
    x = normal((2, 8, 7, 3))
    y = pj.lp_pool(x, 2.0, (3, 2), (2, 2))
    r = torch.nn.functional.lp_pool2d(_torch_nchw(x), 2.0, (3, 2), (2, 2)).permute(0, 2, 3, 1).numpy()
    np.testing.assert_allclose(y, r, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("out", [(3, 2), (4, 4), (1, 1)])
def test_adaptive_is_torch(out):
    x = normal((2, 9, 7, 3))
    for mine, theirs in ((pj.adaptive_max_pool, torch.nn.functional.adaptive_max_pool2d),
                         (pj.adaptive_avg_pool, torch.nn.functional.adaptive_avg_pool2d)):
        r = theirs(_torch_nchw(x), out).permute(0, 2, 3, 1).numpy()
        np.testing.assert_allclose(mine(x, out), r, rtol=1e-6, atol=1e-6)
        rcf = theirs(torch.from_numpy(np.array(x)), out[:1] * 2).numpy()  # channels_first: (N, C=9, 7, 3)
        np.testing.assert_allclose(mine(x, out[:1] * 2, channels_first=True), rcf, rtol=1e-6, atol=1e-6)


def test_global_pools():
    x = normal((2, 5, 4, 3))
    np.testing.assert_array_equal(pj.global_max_pool(x), x.max(axis=(1, 2)))
    np.testing.assert_allclose(pj.global_avg_pool(x, keepdims=True), x.mean(axis=(1, 2), keepdims=True), rtol=1e-6)
    np.testing.assert_array_equal(pj.global_max_pool(x, channels_first=True), x.max(axis=(2, 3)))


def test_stochastic_pool():
    x = jnp.abs(normal((2, 6, 6, 3))) + 0.1
    # inference: the probability-weighted mean sum(x^2) / sum(x) over each window
    y = pj.stochastic_pool(x, (2, 2), (2, 2), training=False)
    r = ref.avg_pool(x * x, (2, 2), (2, 2), "VALID") / ref.avg_pool(x, (2, 2), (2, 2), "VALID")
    np.testing.assert_allclose(y, r, rtol=1e-5)
    # training: one cell of each window, drawn again identically by the backward
    y, vjp = jax.vjp(lambda x: pj.stochastic_pool(x, (2, 2), (2, 2), seed=7), x)
    (g,) = vjp(jnp.ones_like(y))
    assert np.all(np.asarray(g).sum(axis=(1, 2)) == 9) and set(np.unique(g)) <= {0.0, 1.0}
    picked = np.asarray(x)[np.asarray(g) == 1.0].reshape(-1)
    assert sorted(picked) == sorted(np.asarray(y).reshape(-1))


def test_input_without_batch_axis():
    x = normal((7, 6, 3))
    np.testing.assert_array_equal(pj.max_pool(x, (2, 2), (2, 2)), ref.max_pool(x[None], (2, 2), (2, 2), "VALID")[0])


@pytest.mark.parametrize("fn", [
    lambda x: pj.max_pool(x, (2, 2), (2, 1), "SAME"),
    lambda x: pj.avg_pool(x, (3, 2), (1, 2), ((1, 1), (0, 1)), count_include_pad=False),
    lambda x: pj.lp_pool(x, 3.0, (2, 2), (1, 1)),
    lambda x: pj.adaptive_avg_pool(x, (2, 3)),
    lambda x: pj.adaptive_max_pool(x, (3, 2), channels_first=True),
])
def test_check_grads_float64(fn):
    with jax.enable_x64(True):
        x = jnp.asarray(RNG.permutation(2 * 5 * 6 * 3).reshape(2, 5, 6, 3) / 7.0 + 0.5)  # distinct: no max ties
        check_grads(fn, (x,), order=1, modes=["rev"])


def test_errors_name_argument_and_rule():
    x = normal((2, 7, 6, 3))
    with pytest.raises(ValueError, match="padding"):
        pj.max_pool(x, (2, 2), (2, 2), "FULL")
    with pytest.raises(ValueError, match="kernel_shape"):
        pj.max_pool(x, (0, 2))
    with pytest.raises(TypeError, match="inputs: dtype"):
        pj.max_pool(x > 0, (2, 2))
    # the handler's own check of XLA's buffers, reported through XLA's status
    from poolkit.jax._ffi import call
    from poolkit.jax._spec import window
    spec = window(x, (2, 2), (2, 2), "VALID", False)
    with pytest.raises(Exception, match=r"poolkit: y: must have shape") as e:
        call("poolkit_max_forward", jax.ShapeDtypeStruct((2, 4, 4, 3), jnp.float32), x, **spec.attrs())
    assert "JaxRuntimeError" in type(e.value).__name__
