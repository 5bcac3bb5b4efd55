"""poolkit.jax's PyTorch-named Lp, mixed and stochastic pooling over (N, C, spatial...): Lp against
torch.nn.functional.lp_pool*d (values within 2 ulps, gradients in float64), mixed and stochastic against
poolkit.torch's same-named functions (bit-exact, the same seed drawing the same cells); check_grads in float64,
jit, argument errors."""
import zlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from jax.test_util import check_grads

import poolkit.jax as pj
import poolkit.torch as pt

RNG = np.random.default_rng(19)
SHAPES = {1: (2, 3, 11), 2: (2, 3, 9, 8), 3: (2, 2, 7, 6, 5)}
# (kernel_size, stride, ceil_mode): a partial last window with ceil_mode, where PyTorch's divisor is clipped
LP_ARGS = [(3, 2, False), (2, None, True), (3, 1, True), ((3, 2, 2), (2, 1, 3), True)]
# (kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, lambda_)
MIXED_ARGS = [(3, 2, 1, True, True, None, 0.3), (2, None, 0, False, False, 5, 0.8), (3, 1, 1, False, False, None, 1.0)]
# (kernel_size, stride, padding, ceil_mode)
WINDOW_ARGS = [(3, 2, 1, True), (2, None, 0, False)]


@pytest.fixture(autouse=True)
def x64():
    with jax.enable_x64(True):  # float64 stays float64
        yield


@pytest.fixture(autouse=True)
def seeded(request):
    """Each test's inputs from a generator seeded by the test's own id: the same values whichever worker (pytest -n)
    runs it and whatever ran before it there (a shared generator had drawn other values under another order)."""
    global RNG
    RNG = np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))


def normal(shape, dtype):
    return RNG.standard_normal(shape).astype(dtype)


def _per_rank(args, rank):
    """A per-axis entry of LP_ARGS cut to the rank's axes (an int in 1-D: PyTorch's lp_pool1d takes no tuple)."""
    return tuple((a[0] if rank == 1 else a[:rank]) if isinstance(a, tuple) else a for a in args)


def assert_within_ulps(a, b, ulps):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
    ok = ~np.isnan(b)
    assert np.all(np.abs(a[ok] - b[ok]) <= ulps * np.spacing(np.abs(b[ok]))), np.max(
        np.abs(a[ok] - b[ok]) / np.spacing(np.abs(b[ok])))


@pytest.mark.parametrize("rank", [1, 2, 3])
@pytest.mark.parametrize("norm_type", [1.0, 2.0, 3.0, 1.5])
@pytest.mark.parametrize("args", LP_ARGS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_lp_pool_is_torch(rank, norm_type, args, dtype):
    """No abs on x (PyTorch's convention): NaN where the pooled sum of x^p is negative and 1/p is fractional, as
    PyTorch's. 2 ulps is the largest difference from PyTorch 2.15 measured over these cases (float32; float64: 1);
    poolkit.torch computes with the same core, so it must agree bit for bit."""
    x = normal(SHAPES[rank], dtype)
    if norm_type == 1.5:
        x = np.abs(x)
    args = _per_rank(args, rank)
    y = getattr(pj, f"lp_pool{rank}d")(jnp.asarray(x), norm_type, *args)
    assert_within_ulps(y, getattr(F, f"lp_pool{rank}d")(torch.tensor(x), norm_type, *args).numpy(), 2)
    np.testing.assert_array_equal(y, getattr(pt, f"lp_pool{rank}d")(torch.tensor(x), norm_type, *args).numpy())
    np.testing.assert_array_equal(getattr(pj, f"lp_pool{rank}d")(jnp.asarray(x[0]), norm_type, *args), y[0])


@pytest.mark.parametrize("rank", [1, 2, 3])
@pytest.mark.parametrize("args", LP_ARGS)
def test_lp_pool_grad_is_torch(rank, args):
    x = np.abs(normal(SHAPES[rank], np.float64)) + 0.1
    args = _per_rank(args, rank)
    xt = torch.tensor(x, requires_grad=True)
    r = getattr(F, f"lp_pool{rank}d")(xt, 3.0, *args)
    dy = normal(tuple(r.shape), np.float64)
    (r * torch.tensor(dy)).sum().backward()
    g = jax.grad(lambda x: (getattr(pj, f"lp_pool{rank}d")(x, 3.0, *args) * dy).sum())(jnp.asarray(x))
    np.testing.assert_allclose(g, xt.grad.numpy(), rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("rank", [1, 2, 3])
@pytest.mark.parametrize("args", MIXED_ARGS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_mixed_pool_is_poolkit_torch(rank, args, dtype):
    """Values, d/dx and d/dlambda_ as poolkit.torch's mixed_pool*d, lambda_ a keyword."""
    x = normal(SHAPES[rank], dtype)
    *window, lam = args
    xt = torch.tensor(x, requires_grad=True)
    lt = torch.tensor(lam, dtype=torch.float64, requires_grad=True)
    r = getattr(pt, f"mixed_pool{rank}d")(xt, *window, lambda_=lt)
    dy = normal(tuple(r.shape), dtype)
    (r * torch.tensor(dy)).sum().backward()
    f = getattr(pj, f"mixed_pool{rank}d")
    y = f(jnp.asarray(x), *window, lambda_=lam)
    assert y.dtype == dtype
    np.testing.assert_array_equal(y, r.detach().numpy())
    gx, gl = jax.grad(lambda x, l: (f(x, *window, lambda_=l) * dy).sum(), (0, 1))(jnp.asarray(x), lam)
    np.testing.assert_array_equal(gx, xt.grad.numpy())
    np.testing.assert_allclose(gl, lt.grad.item(), rtol=1e-6 if dtype == np.float32 else 1e-13)
    np.testing.assert_array_equal(f(jnp.asarray(x[0]), *window, lambda_=lam), y[0])


@pytest.mark.parametrize("rank", [1, 2, 3])
@pytest.mark.parametrize("args", WINDOW_ARGS)
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_stochastic_pool_is_poolkit_torch(rank, args, training, dtype):
    """The same seed draws the same cells as poolkit.torch's stochastic_pool*d (values and d/dx bit-exact); in
    training another seed draws others."""
    x = np.abs(normal(SHAPES[rank], dtype))
    xt = torch.tensor(x, requires_grad=True)
    r = getattr(pt, f"stochastic_pool{rank}d")(xt, *args, training, 11)
    dy = normal(tuple(r.shape), dtype)
    (r * torch.tensor(dy)).sum().backward()
    f = getattr(pj, f"stochastic_pool{rank}d")
    y, vjp = jax.vjp(lambda x: f(x, *args, training, 11), jnp.asarray(x))
    np.testing.assert_array_equal(y, r.detach().numpy())
    np.testing.assert_array_equal(vjp(jnp.asarray(dy))[0], xt.grad.numpy())
    other = f(jnp.asarray(x), *args, training=training, seed=12)
    assert np.array_equal(other, y) != training
    np.testing.assert_array_equal(f(jnp.asarray(x[0]), *args, training, 11), y[0])


def distinct(shape):
    """Positive float64 values without ties."""
    return jnp.asarray(RNG.permutation(int(np.prod(shape))).reshape(shape) / 7.0 + 0.5)


CHECK_GRADS = {
    "lp_pool1d": (lambda x: pj.lp_pool1d(x, 3.0, 3, 2, True), (2, 3, 10)),
    "lp_pool2d": (lambda x: pj.lp_pool2d(x, 1.5, (3, 2), 1), (2, 3, 5, 6)),
    "lp_pool3d": (lambda x: pj.lp_pool3d(x, 2.0, 2, ceil_mode=True), (1, 2, 5, 4, 3)),
    "mixed_pool2d": (lambda x: pj.mixed_pool2d(x, 3, 2, 1, True, False, lambda_=0.7), (2, 3, 5, 6)),
    "mixed_pool3d": (lambda x: pj.mixed_pool3d(x, 2, 1, 1, divisor_override=3, lambda_=0.2), (1, 2, 4, 3, 3)),
    "stochastic_pool1d": (lambda x: pj.stochastic_pool1d(x, 3, 2, 1, seed=5), (2, 3, 10)),
    "stochastic_pool2d eval": (lambda x: pj.stochastic_pool2d(x, 2, training=False), (2, 3, 5, 6)),
}


@pytest.mark.parametrize("case", CHECK_GRADS)
def test_check_grads_float64(case):
    fn, shape = CHECK_GRADS[case]
    check_grads(fn, (distinct(shape),), order=1, modes=["rev"])


def test_check_grads_mixed_lambda():
    x = distinct((2, 3, 5, 6))
    check_grads(lambda l: pj.mixed_pool2d(x, 2, lambda_=l), (jnp.float64(0.4),), order=1, modes=["rev"])


@pytest.mark.parametrize("fn", [
    lambda x: pj.lp_pool2d(x, 2.0, 3, 2, True),
    lambda x: pj.mixed_pool2d(x, 3, 2, 1, lambda_=0.3),
    lambda x: pj.stochastic_pool2d(x, 2, 2, seed=3),
])
def test_under_jit(fn):
    x = jnp.asarray(np.abs(normal((2, 3, 9, 8), np.float32)))
    np.testing.assert_array_equal(jax.jit(fn)(x), fn(x))
    loss = lambda x: (fn(x) ** 2).sum()  # noqa: E731
    np.testing.assert_array_equal(jax.jit(jax.grad(loss))(x), jax.grad(loss)(x))


def test_errors_name_argument():
    x = jnp.asarray(normal((2, 3, 9, 8), np.float32))
    with pytest.raises(Exception, match="norm_type: must be finite and non-zero") as e:
        pj.lp_pool2d(x, 0.0, 2)
    assert "JaxRuntimeError" in type(e.value).__name__
    with pytest.raises(ValueError, match="kernel_size: must have 2 entries"):
        pj.lp_pool2d(x, 2.0, (2, 2, 2))
    with pytest.raises(ValueError, match=r"kernel_size\[0\]: .* larger than the padded input"):
        pj.lp_pool2d(x, 2.0, 10)
    with pytest.raises(ValueError, match=r"padding\[0\]: must be at most half"):
        pj.stochastic_pool2d(x, 2, padding=2)
    with pytest.raises(ValueError, match="stride: must have 2 entries"):
        pj.mixed_pool2d(x, 2, (1, 1, 1))
    with pytest.raises(Exception, match="lambda: must be finite"):
        pj.mixed_pool2d(x, 2, lambda_=float("nan"))
    with pytest.raises(TypeError, match="inputs: dtype must be"):
        pj.lp_pool2d(x.astype(jnp.int32), 2.0, 2)
    with pytest.raises(ValueError, match="input: must be"):
        pj.lp_pool2d(x[0, 0], 2.0, 2)


@pytest.mark.parametrize("p", [float("inf"), -float("inf")])
def test_lp_infinite_norm_is_max_of_abs(p):
    """PyTorch 2's lp_pool takes +-inf as max pooling of |x| (minus the max of -|x| for -inf): compared with that
    composition in torch, values and gradients bit for bit."""
    x = normal((2, 3, 9, 8), np.float32)
    t = torch.tensor(x, requires_grad=True)
    s = 1 if p > 0 else -1
    want = s * torch.nn.functional.max_pool2d(s * t.abs(), 3, 2, 0, 1, True)
    want.sum().backward()
    got = pj.lp_pool2d(jnp.asarray(x), p, 3, 2, True)
    np.testing.assert_array_equal(np.asarray(got), want.detach().numpy())
    g = jax.grad(lambda v: pj.lp_pool2d(v, p, 3, 2, True).sum())(jnp.asarray(x))
    np.testing.assert_array_equal(np.asarray(g), t.grad.numpy())
