"""poolkit.jax's fractional max pooling, max-unpool, mixed pooling, int64 flat indices and PyTorch-named variants
against PyTorch (values and indices bit-exact) and NumPy; gradients in float64; argument errors."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from jax.test_util import check_grads

import poolkit.jax as pj
import reference as ref

RNG = np.random.default_rng(5)
SHAPES = {1: (2, 3, 11), 2: (2, 3, 9, 8), 3: (2, 2, 7, 6, 5)}


def normal(shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def distinct(shape):
    """float64 values without ties (check_grads moves each input by eps: no window may change its max)."""
    return jnp.asarray(RNG.permutation(int(np.prod(shape))).reshape(shape) / 7.0 + 0.5)


@pytest.fixture
def x64():
    with jax.enable_x64(True):
        yield


@pytest.mark.parametrize("rank", [1, 2, 3])
@pytest.mark.parametrize("args", [(3, 2, 1, 1, False), (2, None, 0, 1, True), (3, 1, 1, 2, True)])
def test_max_pool_torch_names_and_indices(x64, rank, args):
    x = normal(SHAPES[rank])
    k, s, p, d, ceil = args
    tf = getattr(F, f"max_pool{rank}d")
    r, ri = tf(torch.tensor(x), k, s, p, d, ceil, return_indices=True)
    y, i = getattr(pj, f"max_pool{rank}d")(jnp.asarray(x), k, s, p, d, ceil, return_indices=True)
    assert i.dtype == jnp.int64
    np.testing.assert_array_equal(y, r.numpy())
    np.testing.assert_array_equal(i, ri.numpy())
    np.testing.assert_array_equal(getattr(pj, f"max_pool{rank}d")(jnp.asarray(x[0]), k, s, p, d, ceil), r[0].numpy())
    if d != 1:  # (unpooling knows no dilation)
        return
    # unpooling the result is PyTorch's
    u = getattr(pj, f"max_unpool{rank}d")(y, i, k, s, p, output_size=x.shape[2:])
    ru = getattr(F, f"max_unpool{rank}d")(r, ri, k, s, p, output_size=x.shape[2:])
    np.testing.assert_array_equal(u, ru.numpy())


def test_flax_style_indices_are_channels_last_torch(x64):
    x = normal((2, 9, 8, 3))
    y, i = pj.max_pool(jnp.asarray(x), (3, 2), (2, 2), "VALID", return_indices=True)
    r, ri = F.max_pool2d(torch.tensor(x).permute(0, 3, 1, 2), (3, 2), (2, 2), return_indices=True)
    np.testing.assert_array_equal(i, ri.permute(0, 2, 3, 1).numpy())
    np.testing.assert_array_equal(pj.max_unpool(y, i, (9, 8)),
                                  F.max_unpool2d(r, ri, (3, 2), (2, 2), output_size=(9, 8)).permute(0, 2, 3, 1))
    mine = pj.adaptive_max_pool(jnp.asarray(x), (4, 3), return_indices=True)
    theirs = F.adaptive_max_pool2d(torch.tensor(x).permute(0, 3, 1, 2), (4, 3), return_indices=True)
    for a, b in zip(mine, theirs):
        np.testing.assert_array_equal(a, b.permute(0, 2, 3, 1).numpy())
    mine = pj.global_max_pool(jnp.asarray(x), return_indices=True)  # both squeezed to (N, C)
    theirs = F.adaptive_max_pool2d(torch.tensor(x).permute(0, 3, 1, 2), 1, return_indices=True)
    for a, b in zip(mine, theirs):
        np.testing.assert_array_equal(a, b[:, :, 0, 0].numpy())


@pytest.mark.parametrize("rank", [1, 2, 3])
def test_avg_and_adaptive_torch_names(rank):
    x = normal(SHAPES[rank])
    xt = torch.tensor(x)
    kw = {} if rank == 1 else {"divisor_override": 5}
    for args in ((3, 2, 1, True, False), (2, None, 0, False, True)):
        y = getattr(pj, f"avg_pool{rank}d")(jnp.asarray(x), *args, **kw)
        np.testing.assert_allclose(y, getattr(F, f"avg_pool{rank}d")(xt, *args, **kw).numpy(), rtol=1e-6, atol=1e-6)
    out = (4, 3, 2)[:rank]
    np.testing.assert_allclose(getattr(pj, f"adaptive_avg_pool{rank}d")(jnp.asarray(x), out),
                               getattr(F, f"adaptive_avg_pool{rank}d")(xt, out).numpy(), rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(getattr(pj, f"adaptive_max_pool{rank}d")(jnp.asarray(x), out),
                                  getattr(F, f"adaptive_max_pool{rank}d")(xt, out).numpy())


@pytest.mark.parametrize("rank", [2, 3])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fractional_is_torch(x64, rank, dtype):
    x = normal(SHAPES[rank], dtype)
    s = RNG.random((x.shape[0], x.shape[1], rank)).astype(dtype)
    out = (4, 3, 2)[:rank]
    r, ri = getattr(F, f"fractional_max_pool{rank}d")(torch.tensor(x), 2, out, return_indices=True,
                                                      _random_samples=torch.tensor(s))
    y, i = getattr(pj, f"fractional_max_pool{rank}d")(jnp.asarray(x), 2, out, return_indices=True,
                                                      _random_samples=jnp.asarray(s))
    np.testing.assert_array_equal(y, r.numpy())
    np.testing.assert_array_equal(i, ri.numpy())
    ratio = getattr(F, f"fractional_max_pool{rank}d")(torch.tensor(x), 2, output_ratio=(0.6,) * rank,
                                                      _random_samples=torch.tensor(s))
    np.testing.assert_array_equal(getattr(pj, f"fractional_max_pool{rank}d")(
        jnp.asarray(x), 2, output_ratio=(0.6,) * rank, _random_samples=jnp.asarray(s)), ratio.numpy())
    # gradient: dy routed to the argmax of each window, as PyTorch's
    xt = torch.tensor(x, requires_grad=True)
    dy = normal(r.shape, dtype)
    (getattr(F, f"fractional_max_pool{rank}d")(xt, 2, out, _random_samples=torch.tensor(s)) * torch.tensor(dy)).sum() \
        .backward()
    g = jax.grad(lambda x: (getattr(pj, f"fractional_max_pool{rank}d")(x, 2, out, _random_samples=jnp.asarray(s))
                            * dy).sum())(jnp.asarray(x))
    np.testing.assert_allclose(g, xt.grad.numpy(), rtol=1e-6, atol=1e-6)


def test_fractional_key_draws_samples():
    x = jnp.asarray(normal((2, 9, 8, 3)))
    key = jax.random.key(4)
    y = pj.fractional_max_pool(x, (2, 2), (4, 5), key=key)
    s = jax.random.uniform(key, (2, 3, 2))
    np.testing.assert_array_equal(y, pj.fractional_max_pool(x, (2, 2), (4, 5), samples=s))
    assert not np.array_equal(y, pj.fractional_max_pool(x, (2, 2), (4, 5), key=jax.random.key(5)))


def _mixed_reference(x, lam, window, strides, padding, cip):
    return lam * ref.max_pool(x, window, strides, padding) + (1 - lam) * ref.avg_pool(x, window, strides, padding, cip)


@pytest.mark.parametrize("cip", [True, False])
def test_mixed_pool_is_max_and_average(x64, cip):
    x = jnp.asarray(normal((2, 7, 6, 3), np.float64))
    dy = jnp.asarray(normal((2, 4, 3, 3), np.float64))
    args = ((3, 2), (2, 2), ((1, 1), (0, 1)))
    y = pj.mixed_pool(x, *args, lambda_=0.3, count_include_pad=cip)
    np.testing.assert_allclose(y, _mixed_reference(x, 0.3, *args, cip), rtol=1e-12, atol=1e-12)
    g = jax.grad(lambda x, l: (pj.mixed_pool(x, *args, lambda_=l, count_include_pad=cip) * dy).sum(), (0, 1))
    r = jax.grad(lambda x, l: (_mixed_reference(x, l, *args, cip) * dy).sum(), (0, 1))
    for a, b in zip(g(x, 0.3), r(x, 0.3)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("fn", [
    lambda x: pj.fractional_max_pool(x, (2, 2), (3, 2), samples=jnp.full((2, 3, 2), 0.3)),
    lambda x: pj.max_pool2d(x, 3, 2, 1, return_indices=True)[0],
    lambda x: pj.max_unpool(*pj.max_pool(x, (2, 2), (2, 2), return_indices=True), (5, 6)),
    lambda x: pj.mixed_pool(x, (2, 2), (1, 1), "SAME", lambda_=0.7),
    lambda x: pj.avg_pool2d(x, 3, 2, 1, True, False, 4),
])
def test_check_grads_float64(x64, fn):
    check_grads(fn, (distinct((2, 5, 6, 3)),), order=1, modes=["rev"])


def test_check_grads_mixed_lambda(x64):
    x = distinct((2, 5, 6, 3))
    check_grads(lambda l: pj.mixed_pool(x, (2, 2), (2, 2), lambda_=l), (jnp.float64(0.4),), order=1, modes=["rev"])


def test_new_ops_under_transforms(x64):
    """jit, vmap (one call over the folded batch, lambda_ batched too), checkpoint and shard_map."""
    x = jnp.asarray(normal((4, 3, 8, 6, 2)))
    s = jnp.asarray(RNG.random((4, 3, 2, 2)).astype(np.float32))

    def loss(x, s, lam):
        y, i = pj.max_pool(x, (2, 2), (2, 2), return_indices=True)
        return ((pj.fractional_max_pool(x, (2, 2), (4, 3), samples=s) ** 2).sum()
                + (pj.max_unpool(y * y, i, (8, 6)) * x).sum() + pj.mixed_pool(x, (3, 3), lambda_=lam).sum())

    def one_by_one(x, s, lam):
        return jnp.stack([jax.grad(loss, (0, 2))(x[b], s[b], lam[b])[0] for b in range(4)])

    lam = jnp.linspace(0.1, 0.9, 4, dtype=jnp.float32)
    want = one_by_one(x, s, lam)
    f = jax.jit(jax.vmap(jax.grad(loss, (0, 2))))
    g, dl = f(x, s, lam)
    np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-5)
    assert dl.shape == (4,)
    np.testing.assert_allclose(dl[1], jax.grad(loss, 2)(x[1], s[1], lam[1]), rtol=1e-5)
    mixed = jax.vmap(lambda x, l: pj.mixed_pool(x, (3, 3), lambda_=l))(x, lam)
    np.testing.assert_array_equal(mixed[2], pj.mixed_pool(x[2], (3, 3), lambda_=lam[2]))
    hlo = f.lower(x, s, lam).as_text()
    assert hlo.count("poolkit_mixed_backward") == 1 and "while" not in hlo
    np.testing.assert_allclose(jax.grad(jax.checkpoint(loss))(x[0], s[0], 0.5), jax.grad(loss)(x[0], s[0], 0.5),
                               rtol=1e-6)
    from jax.sharding import Mesh, PartitionSpec as P
    mesh = Mesh(np.array(jax.devices("cpu")[:2]), ("batch",))
    sharded = jax.jit(jax.shard_map(lambda x, s: jax.grad(loss)(x, s, 0.5), mesh=mesh, in_specs=(P("batch"),) * 2,
                                    out_specs=P("batch")))
    xb, sb = x.reshape(12, 8, 6, 2), s.reshape(12, 2, 2)
    np.testing.assert_allclose(sharded(xb, sb), jax.grad(loss)(xb, sb, 0.5), rtol=1e-5, atol=1e-6)


def test_errors_name_argument(x64):
    x = jnp.asarray(normal((2, 3, 9, 8)))
    with pytest.raises(ValueError, match="key"):
        pj.fractional_max_pool2d(x, 2, (4, 4))
    with pytest.raises(ValueError, match="output_size"):
        pj.fractional_max_pool2d(x, 2, key=jax.random.key(0))
    with pytest.raises(Exception, match="_random_samples: must lie in"):
        pj.fractional_max_pool2d(x, 2, (4, 4), _random_samples=jnp.full((2, 3, 2), 1.5))
    with pytest.raises(Exception, match="_random_samples: must have shape"):
        pj.fractional_max_pool2d(x, 2, (4, 4), _random_samples=jnp.full((2, 4, 2), 0.5))
    y, i = pj.max_pool2d(x, 2, return_indices=True)
    with pytest.raises(Exception, match="indices") as e:
        pj.max_unpool2d(y, i + 100, 2)
    assert "JaxRuntimeError" in type(e.value).__name__
    with pytest.raises(TypeError, match="indices: must be int64"):
        pj.max_unpool2d(y, i.astype(jnp.int32), 2)
    with pytest.raises(Exception, match="lambda: must be finite"):
        pj.mixed_pool(x, (2, 2), lambda_=float("nan"))
    with pytest.raises(ValueError, match="kernel_size"):
        pj.max_pool2d(x, (2, 2, 2))
    with pytest.raises(ValueError, match="padding"):
        pj.max_pool2d(x, 2, padding=2)
    with pytest.raises(TypeError, match="inputs: dtype"):
        pj.avg_pool2d(x.astype(jnp.int32), 2)  # (PyTorch averages int64 alone)
    with jax.enable_x64(False):
        with pytest.raises(ValueError, match="return_indices: .*jax_enable_x64"):
            pj.max_pool(jnp.asarray(normal((2, 9, 8, 3))), (2, 2), return_indices=True)
