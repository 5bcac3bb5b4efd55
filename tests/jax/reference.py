"""Independent references: lax.reduce_window (what flax.linen pools with) in poolkit.jax's layout."""
import jax.numpy as jnp
import numpy as np
from jax import lax


def _window_args(x, window, strides, padding, channels_first):
    r = len(window)
    lead = x.ndim - r - 1
    if channels_first:
        dims, strd = (1,) * (lead + 1) + tuple(window), (1,) * (lead + 1) + tuple(strides)
    else:
        dims, strd = (1,) * lead + tuple(window) + (1,), (1,) * lead + tuple(strides) + (1,)
    if not isinstance(padding, str):
        pairs = [(0, 0)] * (lead + (1 if channels_first else 0)) + [tuple(p) for p in padding]
        padding = pairs + [(0, 0)] * (0 if channels_first else 1)
    return dims, strd, padding


def max_pool(x, window, strides, padding, channels_first=False):
    dims, strd, pad = _window_args(x, window, strides, padding, channels_first)
    return lax.reduce_window(x, -jnp.inf, lax.max, dims, strd, pad)


def avg_pool(x, window, strides, padding, count_include_pad=True, channels_first=False):
    dims, strd, pad = _window_args(x, window, strides, padding, channels_first)
    s = lax.reduce_window(x, 0.0, lax.add, dims, strd, pad)
    if count_include_pad:
        return s / np.prod(window)
    # flax counts the cells with ones of JAX's default float type: integers are divided in it
    ones = jnp.ones_like(x, jnp.result_type(float) if jnp.issubdtype(x.dtype, jnp.integer) else x.dtype)
    return s / lax.reduce_window(ones, 0.0, lax.add, dims, strd, pad)
