"""The differentiable operators: each a jax.custom_vjp over poolkit's forward and backward FFI calls."""
import functools

import jax

from ._ffi import call


@functools.partial(jax.custom_vjp, nondiff_argnums=(1,))
def max_pool(x, spec):
    return call("poolkit_max_forward", spec.out(), x, **spec.attrs())


def _max_fwd(x, spec):
    y, argmax = call("poolkit_max_forward_argmax", (spec.out(), spec.argmax()), x, **spec.attrs())
    return y, argmax  # the compact window-local argmax is the whole residual


def _max_bwd(spec, argmax, dy):
    return (call("poolkit_max_backward", spec.like_input(), dy, argmax, **spec.attrs()),)


max_pool.defvjp(_max_fwd, _max_bwd)


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
