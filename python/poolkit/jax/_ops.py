"""The differentiable operators: each a jax.custom_vjp over poolkit's forward and backward FFI calls. Integer
inputs (max pooling, unpooling) have no gradient: JAX gives them float0 cotangents without calling a backward, as
for lax.reduce_window."""
import functools

import jax
import jax.numpy as jnp
import numpy as np

from ._ffi import call


def _dx(spec, target, *args):
    """d(loss)/d(inputs) from one backward call."""
    return call(target, spec.like_input(), *args, **spec.attrs())


@functools.partial(jax.custom_vjp, nondiff_argnums=(1,))
def max_pool(x, spec):
    return call("poolkit_max_forward", spec.out(), x, **spec.attrs())


def _max_fwd(x, spec):
    y, argmax = call("poolkit_max_forward_argmax", (spec.out(), spec.argmax()), x, **spec.attrs())
    return y, argmax  # the compact window-local argmax is the whole residual


def _max_bwd(spec, argmax, dy):
    return (_dx(spec, "poolkit_max_backward", dy, argmax),)


max_pool.defvjp(_max_fwd, _max_bwd)


@functools.partial(jax.custom_vjp, nondiff_argnums=(1,))
def max_pool_indices(x, spec):
    """(max, PyTorch's int64 flat index of it in the (n, c) input plane)."""
    return call("poolkit_max_forward_argmax", (spec.out(), spec.argmax(True)), x, **spec.attrs())


def _max_indices_fwd(x, spec):
    y, idx = max_pool_indices(x, spec)
    return (y, idx), idx


def _max_indices_bwd(spec, idx, cts):
    return (_dx(spec, "poolkit_max_backward", cts[0], idx),)


max_pool_indices.defvjp(_max_indices_fwd, _max_indices_bwd)


@functools.partial(jax.custom_vjp, nondiff_argnums=(2, 3))
def fractional_max_pool(x, samples, spec, int64_indices):
    """Fractional max pooling with `samples` (batch..., C, rank) in [0, 1); with int64_indices also PyTorch's flat
    indices. The samples get a zero cotangent."""
    if int64_indices:
        return call("poolkit_fractional_forward_argmax", (spec.out(), spec.argmax(True)), x, samples, **spec.attrs())
    return call("poolkit_fractional_forward", spec.out(), x, samples, **spec.attrs())


def _fractional_fwd(x, samples, spec, int64_indices):
    y, argmax = call("poolkit_fractional_forward_argmax", (spec.out(), spec.argmax(int64_indices)), x, samples,
                     **spec.attrs())
    return ((y, argmax) if int64_indices else y), (argmax, samples)


def _fractional_bwd(spec, int64_indices, res, ct):
    argmax, samples = res
    dy = ct[0] if int64_indices else ct
    return _dx(spec, "poolkit_fractional_backward", dy, argmax, samples), jnp.zeros_like(samples)


fractional_max_pool.defvjp(_fractional_fwd, _fractional_bwd)


@functools.partial(jax.custom_vjp, nondiff_argnums=(2, 3))
def max_unpool(x, indices, spec, x_shape):
    """x put at PyTorch's flat indices of each (n, c) output plane, zeros elsewhere; `spec` describes the output
    (its in_shape is the unpooled shape)."""
    return call("poolkit_unpool_forward", spec.like_input(), x, indices, **spec.attrs())


def _unpool_fwd(x, indices, spec, x_shape):
    return max_unpool(x, indices, spec, x_shape), indices


def _unpool_bwd(spec, x_shape, indices, dy):
    dx = call("poolkit_unpool_backward", jax.ShapeDtypeStruct(x_shape, np.dtype(spec.dtype)), dy, indices,
              **spec.attrs())
    return dx, np.zeros(indices.shape, jax.dtypes.float0)


max_unpool.defvjp(_unpool_fwd, _unpool_bwd)


@functools.partial(jax.custom_vjp, nondiff_argnums=(2,))
def mixed_pool(x, lambda_, spec):
    """lambda_ * max + (1 - lambda_) * average; lambda_ is differentiable."""
    return call("poolkit_mixed_forward", spec.out(), x, lambda_, **spec.attrs())


def _mixed_fwd(x, lambda_, spec):
    return mixed_pool(x, lambda_, spec), (x, lambda_)


def _mixed_bwd(spec, res, dy):
    x, lambda_ = res
    dx, dlambda = call("poolkit_mixed_backward",
                       (spec.like_input(), jax.ShapeDtypeStruct(lambda_.shape, lambda_.dtype)), dy, x, lambda_,
                       **spec.attrs())
    # inside shard_map a lambda_ shared by the shards gets the sum of their cotangents
    summed = jax.typeof(dy).manual_axis_type.varying - jax.typeof(lambda_).manual_axis_type.varying
    return dx, jax.lax.psum(dlambda, tuple(sorted(summed))) if summed else dlambda


mixed_pool.defvjp(_mixed_fwd, _mixed_bwd)


@functools.partial(jax.custom_vjp, nondiff_argnums=(1,))
def avg_pool(x, spec):
    return call("poolkit_avg_forward", spec.out(), x, **spec.attrs())


def _avg_fwd(x, spec):
    return avg_pool(x, spec), None


def _avg_bwd(spec, _, dy):
    return (call("poolkit_avg_backward", spec.like_input(), dy, **spec.attrs()),)


avg_pool.defvjp(_avg_fwd, _avg_bwd)


@functools.partial(jax.custom_vjp, nondiff_argnums=(1,))
def lp_pool(x, spec):
    return call("poolkit_lp_forward", spec.out(), x, **spec.attrs())


def _lp_fwd(x, spec):
    return lp_pool(x, spec), x


def _lp_bwd(spec, x, dy):
    return (call("poolkit_lp_backward", spec.like_input(), dy, x, **spec.attrs()),)


lp_pool.defvjp(_lp_fwd, _lp_bwd)


@functools.partial(jax.custom_vjp, nondiff_argnums=(1,))
def stochastic_pool(x, spec):
    return call("poolkit_stochastic_forward", spec.out(), x, **spec.attrs())


def _stochastic_fwd(x, spec):
    return stochastic_pool(x, spec), x  # the backward re-draws the same cells from x and the seed


def _stochastic_bwd(spec, x, dy):
    return (call("poolkit_stochastic_backward", spec.like_input(), dy, x, **spec.attrs()),)


stochastic_pool.defvjp(_stochastic_fwd, _stochastic_bwd)
