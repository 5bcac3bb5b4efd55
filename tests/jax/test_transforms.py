"""poolkit.jax under jit, vmap (one call over the folded batch), grad, jax.checkpoint and shard_map."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import Mesh, PartitionSpec as P

import poolkit.jax as pj
import reference as ref

X = jnp.asarray(np.random.default_rng(1).standard_normal((4, 3, 8, 6, 2)).astype(np.float32))


def loss(x):
    return (pj.max_pool(x, (2, 2), (2, 2)) ** 2).sum() + pj.avg_pool(x, (3, 3), (1, 1), "SAME").sum()


def ref_loss(x):
    return (ref.max_pool(x, (2, 2), (2, 2), "VALID") ** 2).sum() + ref.avg_pool(x, (3, 3), (1, 1), "SAME").sum()


def test_jit_and_grad():
    np.testing.assert_array_equal(jax.jit(lambda x: pj.max_pool(x, (2, 2), (2, 2)))(X),
                                  ref.max_pool(X, (2, 2), (2, 2), "VALID"))
    np.testing.assert_allclose(jax.jit(jax.grad(loss))(X), jax.grad(ref_loss)(X), rtol=1e-5, atol=1e-6)


def test_vmap_folds_into_one_call():
    f = jax.vmap(jax.grad(loss))
    np.testing.assert_allclose(f(X), jax.vmap(jax.grad(ref_loss))(X), rtol=1e-5, atol=1e-6)
    hlo = jax.jit(f).lower(X).as_text()
    assert hlo.count("poolkit_max_forward_argmax") == 1 and "while" not in hlo  # not a loop over the mapped axis
    # mapped axis other than the first, and an unbatched closure argument in the backward
    y = jax.vmap(lambda x: pj.max_pool(x, (2, 2), (2, 2)), in_axes=1, out_axes=1)(X)
    np.testing.assert_array_equal(y, ref.max_pool(X, (2, 2), (2, 2), "VALID"))


def test_checkpoint():
    np.testing.assert_allclose(jax.grad(jax.checkpoint(loss))(X), jax.grad(ref_loss)(X), rtol=1e-5, atol=1e-6)


def test_shard_map_over_batch():
    devices = jax.devices("cpu")
    assert len(devices) >= 2, "XLA_FLAGS=--xla_force_host_platform_device_count=2 must be set before jax starts"
    mesh = Mesh(np.array(devices[:2]), ("batch",))
    x = X.reshape(12, 8, 6, 2)
    f = jax.jit(jax.shard_map(jax.grad(loss), mesh=mesh, in_specs=P("batch"), out_specs=P("batch")))
    np.testing.assert_allclose(f(x), jax.grad(ref_loss)(x), rtol=1e-5, atol=1e-6)
    y = jax.shard_map(lambda x: pj.max_pool(x, (2, 2), (2, 2)), mesh=mesh, in_specs=P("batch"),
                      out_specs=P("batch"))(x)
    np.testing.assert_array_equal(y, ref.max_pool(x, (2, 2), (2, 2), "VALID"))


@pytest.mark.parametrize("dtype", [jnp.bfloat16, jnp.float16])
def test_half_gradient(dtype):
    x = X.astype(dtype)
    g = jax.grad(lambda x: pj.max_pool(x, (2, 2), (2, 2)).astype(jnp.float32).sum())(x)
    r = jax.grad(lambda x: ref.max_pool(x, (2, 2), (2, 2), "VALID").astype(jnp.float32).sum())(x)
    assert g.dtype == dtype
    np.testing.assert_array_equal(np.asarray(g, np.float32), np.asarray(r, np.float32))
