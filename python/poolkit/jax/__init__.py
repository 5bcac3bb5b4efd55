"""poolkit's operators for JAX, as XLA FFI calls on the CPU, with flax.linen's signatures and layout: inputs are
(batch..., window dims..., features) (a missing batch axis is added and removed), or with channels_first=True
(batch..., features, window dims...). Differentiable (jax.custom_vjp over poolkit's backward), and usable under
jit, vmap, grad, jax.checkpoint and shard_map."""
from . import _ops, _spec

__all__ = ["max_pool", "avg_pool", "lp_pool", "stochastic_pool", "adaptive_max_pool", "adaptive_avg_pool",
           "global_max_pool", "global_avg_pool"]


def _with_batch(x, rank, f):
    """flax.linen pools an input without a batch axis as a batch of one."""
    if x.ndim == rank + 1:
        return f(x[None])[0]
    return f(x)


def max_pool(inputs, window_shape, strides=None, padding="VALID", *, channels_first=False):
    """Max over each window (flax.linen.max_pool): strides default to 1, padding 'VALID', 'SAME' or one
    (low, high) pair per window axis; padded cells never win."""
    return _with_batch(inputs, len(window_shape), lambda x: _ops.max_pool(
        x, _spec.window(x, window_shape, strides, padding, channels_first)))


def avg_pool(inputs, window_shape, strides=None, padding="VALID", count_include_pad=True, *, channels_first=False):
    """Mean over each window (flax.linen.avg_pool); count_include_pad=False divides by the cells inside the input."""
    return _with_batch(inputs, len(window_shape), lambda x: _ops.avg_pool(
        x, _spec.window(x, window_shape, strides, padding, channels_first,
                        [("count_include_pad", bool(count_include_pad))])))


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


def adaptive_max_pool(inputs, output_size, *, channels_first=False):
    """PyTorch's adaptive max pooling bins over (batch..., spatial..., features) inputs."""
    return _ops.max_pool(inputs, _spec.adaptive(inputs, output_size, channels_first))


def adaptive_avg_pool(inputs, output_size, *, channels_first=False):
    """PyTorch's adaptive average pooling bins over (batch..., spatial..., features) inputs."""
    return _ops.avg_pool(inputs, _spec.adaptive(inputs, output_size, channels_first, [("count_include_pad", False)]))


def _global(op, inputs, keepdims, channels_first, options=()):
    spec = _spec.global_(inputs, channels_first, options)
    y = op(inputs, spec)
    return y if keepdims else y.reshape([s for a, s in enumerate(y.shape) if a not in spec.spatial_axes()])


def global_max_pool(inputs, keepdims=False, *, channels_first=False):
    """Max over every spatial axis of a (batch, spatial..., features) input."""
    return _global(_ops.max_pool, inputs, keepdims, channels_first)


def global_avg_pool(inputs, keepdims=False, *, channels_first=False):
    """Mean over every spatial axis of a (batch, spatial..., features) input."""
    return _global(_ops.avg_pool, inputs, keepdims, channels_first, [("count_include_pad", False)])
