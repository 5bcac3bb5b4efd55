"""poolkit's operators for JAX, as XLA FFI calls on the CPU, with flax.linen's signatures and layout: inputs are
(batch..., window dims..., features) (a missing batch axis is added and removed), or with channels_first=True
(batch..., features, window dims...). Differentiable through poolkit's backward kernels, and usable under jit,
vmap, grad, jax.checkpoint and shard_map; max, average (adaptive and global too) and unpooling also in forward mode
and to any order (jvp, jacfwd, hessian, grad of grad); Lp, fractional, mixed and stochastic pooling in reverse mode,
first derivatives (see _ops).

Max pooling (window, adaptive, global, fractional) and max_unpool take integer inputs too (uint8, int8, int16,
int32, int64), as lax.reduce_window's max does; avg_pool takes them as flax.linen.avg_pool does (a float result),
the PyTorch-named avg_pool1d/2d/3d int64 as PyTorch does (an int64 result, divided with truncation toward zero).
Integer inputs have no gradient (JAX itself refuses them to jax.grad). The other averaging operators take
floating types alone. return_indices=True gives PyTorch's int64 flat indices (needs jax_enable_x64).
PyTorch-named variants over (N, C, spatial...) arrays, with PyTorch's arguments: max_pool1d/2d/3d, avg_pool*,
lp_pool*, adaptive_max_pool*, adaptive_avg_pool*, fractional_max_pool*, max_unpool*, and poolkit.torch's
mixed_pool* and stochastic_pool*."""
import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

from . import _ops, _spec
from ._ffi import call

__all__ = ["max_pool", "avg_pool", "lp_pool", "stochastic_pool", "mixed_pool", "adaptive_max_pool",
           "adaptive_avg_pool", "global_max_pool", "global_avg_pool", "fractional_max_pool", "max_unpool"]


def _with_batch(x, rank, f):
    """flax.linen pools an input without a batch axis as a batch of one."""
    if x.ndim == rank + 1:
        return jax.tree.map(lambda y: y[0], f(x[None]))
    return f(x)


def _require_x64():
    if not jax.config.jax_enable_x64:
        raise ValueError("poolkit: return_indices: PyTorch's flat indices are int64, which JAX holds only with "
                         "jax_enable_x64 (jax.config.update('jax_enable_x64', True) or jax.enable_x64())")


def _max(x, spec, return_indices):
    """Max pooling's result, with PyTorch's int64 flat indices in the (n, c) input plane when asked."""
    if not return_indices:
        return _ops.max_pool(x, spec)
    _require_x64()
    return _ops.max_with_argmax(x, spec, True)


def max_pool(inputs, window_shape, strides=None, padding="VALID", *, channels_first=False, return_indices=False):
    """Max over each window (flax.linen.max_pool): strides default to 1, padding 'VALID', 'SAME' or one
    (low, high) pair per window axis; padded cells never win. Floating and integer inputs (uint8 ... int64).
    return_indices: also PyTorch's int64 flat indices (for max_unpool)."""
    return _with_batch(inputs, len(window_shape), lambda x: _max(
        x, _spec.window(x, window_shape, strides, padding, channels_first, integers=_spec.INTEGERS),
        return_indices))


def avg_pool(inputs, window_shape, strides=None, padding="VALID", count_include_pad=True, *, channels_first=False):
    """Mean over each window (flax.linen.avg_pool); count_include_pad=False divides by the cells inside the input.
    Integer inputs (uint8 ... int64) as flax.linen's: the window sum in the input's type (wrapping around, as
    lax.reduce_window adds), divided in JAX's default float type (float64 with jax_enable_x64, else float32)."""
    def f(x):
        spec = _spec.window(x, window_shape, strides, padding, channels_first,
                            [("count_include_pad", bool(count_include_pad))], integers=_spec.INTEGERS)
        if jnp.issubdtype(x.dtype, jnp.floating):
            return _ops.avg_pool(x, spec)
        return _integer_mean(x, spec, count_include_pad)
    return _with_batch(inputs, len(window_shape), f)


def _integer_mean(x, spec, count_include_pad):
    """flax.linen's average of integers: no gradient, as JAX gives integer inputs none."""
    real = jnp.result_type(float)
    total = call("poolkit_int_sum_forward", spec.out(), x, **spec.attrs()).astype(real)
    if count_include_pad:
        return total / jnp.asarray(np.prod(dict(spec.params)["kernel"]), real)
    # the cells inside the input per window: the sum of a plane of ones over the same windows
    ones = jnp.ones([s if a in spec.spatial_axes() else 1 for a, s in enumerate(x.shape)], real)
    counts = dataclasses.replace(spec, in_shape=ones.shape, dtype=str(ones.dtype),
                                 options=(("count_include_pad", True), ("divisor_override", 1)))
    return total / call("poolkit_avg_forward", counts.out(), ones, **counts.attrs())


def lp_pool(inputs, norm_type, window_shape, strides=None, padding="VALID", *, convention="torch",
            channels_first=False):
    """Power-average pooling: (sum of x^p over the window)^(1/p) as torch.nn.functional.lp_pool*d computes it
    (convention 'torch'), or ONNX's LpPool (sum of |x|^p)^(1/p) (convention 'onnx')."""
    if convention not in ("torch", "onnx"):
        raise ValueError(f"poolkit: convention: must be 'torch' or 'onnx' (got {convention!r})")
    opts = [("norm_type", float(norm_type)), ("onnx_convention", convention == "onnx")]
    return _with_batch(inputs, len(window_shape), lambda x: _ops.lp_pool(
        x, _spec.window(x, window_shape, strides, padding, channels_first, opts)))


def stochastic_pool(inputs, window_shape, strides=None, padding="VALID", *, seed=0, training=True,
                    channels_first=False):
    """Stochastic pooling (Zeiler & Fergus): in training one cell per window, drawn with probability proportional
    to max(x, 0) from `seed`; otherwise the probability-weighted mean."""
    opts = [("training", bool(training)), ("seed", int(seed))]
    return _with_batch(inputs, len(window_shape), lambda x: _ops.stochastic_pool(
        x, _spec.window(x, window_shape, strides, padding, channels_first, opts)))


def mixed_pool(inputs, window_shape, strides=None, padding="VALID", lambda_=0.5, count_include_pad=True, *,
               channels_first=False):
    """lambda_ * max + (1 - lambda_) * average over each window; lambda_ (a number or a scalar array) is
    differentiable."""
    return _with_batch(inputs, len(window_shape), lambda x: _ops.mixed_pool(x, _lambda(x, lambda_), _spec.window(
        x, window_shape, strides, padding, channels_first, [("count_include_pad", bool(count_include_pad))])))


def _lambda(x, lambda_):
    """Mixed pooling's lambda_ as the 0-d (or vmapped) array the custom call differentiates: float64 for float64
    inputs, float32 otherwise."""
    return jnp.asarray(lambda_, jnp.float64 if x.dtype == jnp.float64 else jnp.float32)


def adaptive_max_pool(inputs, output_size, *, channels_first=False, return_indices=False):
    """PyTorch's adaptive max pooling bins over (batch..., spatial..., features) inputs."""
    return _max(inputs, _spec.adaptive(inputs, output_size, channels_first, integers=_spec.INTEGERS),
                return_indices)


def adaptive_avg_pool(inputs, output_size, *, channels_first=False):
    """PyTorch's adaptive average pooling bins over (batch..., spatial..., features) inputs."""
    return _ops.avg_pool(inputs, _spec.adaptive(inputs, output_size, channels_first, [("count_include_pad", False)]))


def _global(op, inputs, keepdims, channels_first, options=(), integers=()):
    spec = _spec.global_(inputs, channels_first, options, integers)
    squeeze = lambda y: y if keepdims else y.reshape(  # noqa: E731
        [s for a, s in enumerate(y.shape) if a not in spec.spatial_axes()])
    return jax.tree.map(squeeze, op(inputs, spec))


def global_max_pool(inputs, keepdims=False, *, channels_first=False, return_indices=False):
    """Max over every spatial axis of a (batch, spatial..., features) input."""
    return _global(lambda x, spec: _max(x, spec, return_indices), inputs, keepdims, channels_first,
                   integers=_spec.INTEGERS)


def global_avg_pool(inputs, keepdims=False, *, channels_first=False):
    """Mean over every spatial axis of a (batch, spatial..., features) input."""
    return _global(_ops.avg_pool, inputs, keepdims, channels_first, [("count_include_pad", False)])


def _samples(x, spec, samples, key):
    """Fractional pooling's samples (batch..., C, rank) in [0, 1): given, or drawn from `key`."""
    if samples is not None:
        return jnp.asarray(samples)
    if key is None:
        raise ValueError("poolkit: key: fractional max pooling draws its windows at random and JAX has no global "
                         "random state: pass key=jax.random.key(...) or the samples")
    c = x.shape[-1] if spec.channels_last else x.shape[-spec.rank - 1]
    lead = x.shape[:-spec.rank - 1]
    return jax.random.uniform(key, (*lead, c, spec.rank), jnp.float64 if x.dtype == jnp.float64 else jnp.float32)


def fractional_max_pool(inputs, window_shape, output_size=None, output_ratio=None, *, key=None, samples=None,
                        channels_first=False, return_indices=False):
    """Fractional max pooling (Graham; PyTorch's windows): window_shape-sized windows at pseudo-random starts
    giving output_size (or int(in * output_ratio)) per axis. The starts come from `samples` (batch..., C, rank) in
    [0, 1), in PyTorch's axis order (1-D W; 2-D W, H; 3-D T, H, W), or are drawn from the random `key`."""
    rank = len(_spec._ints(window_shape, "window_shape"))

    def f(x):
        spec = _spec.fractional(x, rank, window_shape, output_size, output_ratio, channels_first)
        s = _samples(x, spec, samples, key)
        if return_indices:
            _require_x64()
        return _ops.fractional_max_pool(x, s, spec, bool(return_indices))
    if samples is not None and inputs.ndim == rank + 1:
        samples = jnp.asarray(samples)[None]
    return _with_batch(inputs, rank, f)


def max_unpool(inputs, indices, output_size, *, channels_first=False):
    """The inverse of max pooling with return_indices: each input value put at its int64 index in its (n, c)
    output plane of spatial size output_size, zeros elsewhere (PyTorch's max_unpool)."""
    sizes = _spec._ints(output_size, "output_size")
    rank = len(sizes)

    def f(x):
        _spec._check_input(x, rank, integers=_spec.INTEGERS)
        spec = _spec.Spec(tuple(x.shape), str(x.dtype), rank, not channels_first, "global")
        out = list(x.shape)
        for a, s in zip(spec.spatial_axes(), sizes):
            out[a] = s
        idx = jnp.asarray(indices)
        if idx.dtype != jnp.int64 or idx.shape[-rank - 1:] != x.shape[-rank - 1:]:
            raise TypeError(f"poolkit: indices: must be int64 (PyTorch's flat indices) shaped like inputs "
                            f"{tuple(x.shape)} (got {idx.dtype} {tuple(idx.shape)})")
        return _ops.max_unpool(x, idx[None] if idx.ndim == x.ndim - 1 else idx,
                               dataclasses.replace(spec, in_shape=tuple(out)), tuple(x.shape))
    return _with_batch(inputs, rank, f)


from ._torch_names import *  # noqa: E402,F401,F403  PyTorch-named variants over (N, C, spatial...)
from ._torch_names import __all__ as _torch_all  # noqa: E402

__all__ += _torch_all
