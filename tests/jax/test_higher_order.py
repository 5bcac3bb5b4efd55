"""poolkit.jax's max, average and unpooling in forward mode and to second order (jvp, jacfwd, hessian, grad of grad,
and jit, vmap and shard_map over them): against lax.reduce_window's pools under the same transforms, and by finite
differences in float64 (jax.test_util.check_grads, both modes, order 2). Lp, fractional, mixed and stochastic
pooling differentiate in reverse mode, to first order: forward mode raises JAX's error."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import Mesh, PartitionSpec as P
from jax.test_util import check_grads

import poolkit.jax as pj
import reference as ref

RNG = np.random.default_rng(11)
X = jnp.asarray(RNG.standard_normal((2, 9, 8, 3)).astype(np.float32))
T = jnp.asarray(RNG.standard_normal((2, 9, 8, 3)).astype(np.float32))
SMALL = X[:1, :5, :4, :2]

LIKE_REDUCE_WINDOW = {  # poolkit.jax's call, the reference's
    "max": (lambda x: pj.max_pool(x, (3, 3), (2, 2), "SAME"), lambda x: ref.max_pool(x, (3, 3), (2, 2), "SAME")),
    "max channels_first": (
        lambda x: pj.max_pool(x, (3, 2), (1, 2), ((1, 1), (0, 1)), channels_first=True),
        lambda x: ref.max_pool(x, (3, 2), (1, 2), ((1, 1), (0, 1)), channels_first=True)),
    "avg": (lambda x: pj.avg_pool(x, (3, 3), (2, 2), ((1, 1), (1, 1))),
            lambda x: ref.avg_pool(x, (3, 3), (2, 2), ((1, 1), (1, 1)))),
    "avg without padding": (lambda x: pj.avg_pool(x, (2, 3), (1, 1), "SAME", count_include_pad=False),
                            lambda x: ref.avg_pool(x, (2, 3), (1, 1), "SAME", count_include_pad=False)),
}


def _close(a, b):
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


def _cube_sum(f):
    return lambda x: (f(x) ** 3).sum()


@pytest.mark.parametrize("name", LIKE_REDUCE_WINDOW)
def test_jvp(name):
    f, r = LIKE_REDUCE_WINDOW[name]
    y, dy = jax.jvp(f, (X,), (T,))
    want_y, want_dy = jax.jvp(r, (X,), (T,))
    np.testing.assert_array_equal(y, want_y) if name.startswith("max") else _close(y, want_y)
    _close(dy, want_dy)


@pytest.mark.parametrize("name", LIKE_REDUCE_WINDOW)
def test_jacfwd_under_jit(name):
    f, r = LIKE_REDUCE_WINDOW[name]
    _close(jax.jit(jax.jacfwd(f))(SMALL), jax.jacfwd(r)(SMALL))


@pytest.mark.parametrize("name", LIKE_REDUCE_WINDOW)
def test_hessian(name):
    f, r = LIKE_REDUCE_WINDOW[name]
    _close(jax.hessian(_cube_sum(f))(SMALL), jax.hessian(_cube_sum(r))(SMALL))


@pytest.mark.parametrize("name", LIKE_REDUCE_WINDOW)
def test_grad_of_grad(name):
    f, r = LIKE_REDUCE_WINDOW[name]

    def second(g):
        return jax.grad(lambda x: (jax.grad(_cube_sum(g))(x) ** 2).sum())(X)
    _close(second(f), second(r))


def test_vmap_of_jvp_is_one_call():
    f, r = LIKE_REDUCE_WINDOW["max"]

    def tangents(g):
        return jax.jit(jax.vmap(lambda x, t: jax.jvp(g, (x,), (t,))[1]))
    _close(tangents(f)(X, T), tangents(r)(X, T))
    hlo = tangents(f).lower(X, T).as_text()
    assert hlo.count("poolkit_max_forward_argmax") == 1 and "while" not in hlo


def test_jvp_in_shard_map():
    mesh = Mesh(np.array(jax.devices("cpu")[:2]), ("batch",))
    f, r = LIKE_REDUCE_WINDOW["max"]
    sharded = jax.jit(jax.shard_map(lambda x, t: jax.jvp(f, (x,), (t,))[1], mesh=mesh, in_specs=(P("batch"),) * 2,
                                    out_specs=P("batch")))
    _close(sharded(X, T), jax.jvp(r, (X,), (T,))[1])


@pytest.fixture
def x64():
    with jax.enable_x64(True):
        yield


def _distinct(shape):
    """float64 values without ties (finite differences move each input: no window may change its max)."""
    return jnp.asarray(RNG.permutation(int(np.prod(shape))).reshape(shape) / 7.0 + 0.5)


@pytest.mark.parametrize("fn", [
    lambda x: pj.adaptive_max_pool(x, (3, 4)),
    lambda x: pj.global_max_pool(x),
    lambda x: pj.adaptive_avg_pool(x, (2, 4)),
    lambda x: pj.global_avg_pool(x, channels_first=True),
    lambda x: pj.max_pool2d(x, 3, 2, 1, 2),  # dilated, channels first
    lambda x: pj.max_pool3d(x[None], 2, 1, 0, 1, True),
    lambda x: pj.max_pool(x, (2, 3), (2, 1), return_indices=True)[0],
    lambda x: pj.max_unpool(*pj.max_pool(x, (2, 2), (2, 2), return_indices=True), (5, 7)),
    lambda x: pj.avg_pool2d(x, 3, 2, 1, True, False, 4),
], ids=["adaptive max", "global max", "adaptive avg", "global avg", "dilated max", "3-D max ceil", "max indices",
        "unpool", "avg divisor"])
def test_finite_differences_to_second_order(x64, fn):
    check_grads(fn, (_distinct((2, 5, 7, 3)),), order=2, modes=["fwd", "rev"])


def test_integer_inputs_have_float0_tangents(x64):
    xi = jnp.asarray(RNG.integers(-50, 50, (2, 6, 6, 3)), jnp.int32)
    zero = np.zeros(xi.shape, jax.dtypes.float0)
    for f in (lambda x: pj.max_pool(x, (2, 2), (2, 2)),
              lambda x: pj.max_unpool(*pj.max_pool(x, (2, 2), (2, 2), return_indices=True), (6, 6))):
        y, dy = jax.jvp(f, (xi,), (zero,))
        assert y.dtype == jnp.int32 and dy.dtype == jax.dtypes.float0 and dy.shape == y.shape


@pytest.mark.parametrize("fn", [lambda x: pj.lp_pool(x, 2.0, (2, 2)),
                                lambda x: pj.mixed_pool(x, (2, 2)),
                                lambda x: pj.stochastic_pool(x, (2, 2)),
                                lambda x: pj.fractional_max_pool(x, (2, 2), (4, 3), samples=jnp.full((2, 3, 2), .3))])
def test_first_order_pools_refuse_forward_mode(fn):
    with pytest.raises(TypeError, match="forward-mode"):
        jax.jvp(fn, (X,), (T,))
