"""The differentiable operators. Max, average and unpooling in every mode (jvp, jacfwd, grad, hessian, vmap of
them): their tangents go through linear primitives (_linear) whose transposes are poolkit's backward FFI calls; max
pooling is a jax.custom_jvp whose rule keeps the compact argmax. Lp, fractional, mixed and stochastic pooling: a
jax.custom_vjp over poolkit's forward and backward FFI calls (first derivatives in reverse mode). Integer inputs
(max pooling, unpooling) have no gradient: JAX gives them float0 tangents and cotangents, as for
lax.reduce_window."""
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.interpreters import ad

from ._ffi import call
from ._linear import linear_pair


def _dx(spec, target, *args):
    """d(loss)/d(inputs) from one backward call."""
    return call(target, spec.like_input(), *args, **spec.attrs())


def _planes(v, spec):
    """v with each (n, c) plane's cells along its last axis, channels before them."""
    if spec.channels_last:
        v = jnp.moveaxis(v, -1, -spec.rank - 1)
    return v.reshape(v.shape[:-spec.rank] + (-1,))


def _argmax_cells(spec, argmax):
    """Each output's argmax as the cell of its (n, c) input plane, PyTorch's flat index, in _planes' form: argmax
    itself where it is that (int64), else the cell its window-local tap names (the geometry's table)."""
    planes = _planes(argmax, spec)
    if argmax.dtype == np.int64:
        return planes
    g = spec.core_geometry()
    cells = jnp.asarray(np.asarray(g.argmax_cells(), np.int32).reshape(-1, g.window_cells()))
    return cells[jnp.arange(cells.shape[0]), planes.astype(jnp.int32)]


def _gather_impl(t, argmax, *, spec):
    """t (shaped as the pool's input) at each output's argmax."""
    out = spec.out_shape()
    picked = jnp.take_along_axis(_planes(t, spec), _argmax_cells(spec, argmax), axis=-1)
    if spec.channels_last:
        return jnp.moveaxis(picked.reshape(out[:-spec.rank - 1] + (out[-1],) + out[-spec.rank - 1:-1]),
                            -spec.rank - 1, -1)
    return picked.reshape(out)


_gather_at_argmax, _ = linear_pair(
    "poolkit_gather_at_argmax", (_gather_impl, lambda spec: spec.out()),
    (lambda ct, argmax, *, spec: _dx(spec, "poolkit_max_backward", ct, argmax), lambda spec: spec.like_input()))


def _no_tangent(v):
    """The tangent of an integer value: float0 zeros (varying over shard_map's axes as v does)."""
    return ad.zeros_like_aval(jax.typeof(v).to_tangent_aval())


@functools.partial(jax.custom_jvp, nondiff_argnums=(1, 2))
def max_with_argmax(x, spec, int64_indices=False):
    """(max, argmax): the compact window-local argmax, or with int64_indices PyTorch's flat index in the (n, c) input
    plane."""
    return call("poolkit_max_forward_argmax", (spec.out(), spec.argmax(int64_indices)), x, **spec.attrs())


@max_with_argmax.defjvp
def _max_with_argmax_jvp(spec, int64_indices, primals, tangents):
    # (the same function on the primal: a derivative of this rule goes through it again)
    y, argmax = max_with_argmax(primals[0], spec, int64_indices)
    t = tangents[0]
    dy = _no_tangent(y) if t.dtype == jax.dtypes.float0 else _gather_at_argmax.bind(t, argmax, spec=spec)
    return (y, argmax), (dy, _no_tangent(argmax))


@functools.partial(jax.custom_jvp, nondiff_argnums=(1,))
def max_pool(x, spec):
    return call("poolkit_max_forward", spec.out(), x, **spec.attrs())


@max_pool.defjvp
def _max_jvp(spec, primals, tangents):
    # the compact argmax: the only residual of reverse mode
    (y, _), (dy, _) = jax.jvp(lambda x: max_with_argmax(x, spec), primals, tangents)
    return y, dy


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


_unpool, _ = linear_pair(
    "poolkit_unpool",
    (lambda x, indices, *, spec, x_shape: call("poolkit_unpool_forward", spec.like_input(), x, indices,
                                                **spec.attrs()),
     lambda spec, x_shape: spec.like_input()),
    (lambda dy, indices, *, spec, x_shape: call("poolkit_unpool_backward", _like(x_shape, spec), dy, indices,
                                                 **spec.attrs()),
     lambda spec, x_shape: _like(x_shape, spec)))


def _like(shape, spec):
    return jax.ShapeDtypeStruct(tuple(shape), np.dtype(spec.dtype))


def max_unpool(x, indices, spec, x_shape):
    """x put at PyTorch's flat indices of each (n, c) output plane, zeros elsewhere; `spec` describes the output
    (its in_shape is the unpooled shape). Its transpose gathers at the indices (PyTorch's backward)."""
    return _unpool.bind(x, indices, spec=spec, x_shape=tuple(x_shape))


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


_avg, _ = linear_pair(
    "poolkit_avg_pool",
    (lambda x, *, spec: call("poolkit_avg_forward", spec.out(), x, **spec.attrs()), lambda spec: spec.out()),
    (lambda dy, *, spec: call("poolkit_avg_backward", spec.like_input(), dy, **spec.attrs()),
     lambda spec: spec.like_input()))


def avg_pool(x, spec):
    return _avg.bind(x, spec=spec)


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
