"""torch.nn.functional's names, argument order and defaults over (N, C, spatial...) JAX arrays (an input without
the batch axis is pooled as a batch of one), and poolkit.torch's for mixed and stochastic pooling: thin wrappers
over the same custom calls as poolkit.jax's flax-style functions, with PyTorch's geometry (stride defaults to
kernel_size, symmetric padding, dilation, ceil_mode)."""
import jax

from ..functional import _lp_infinite_sign, unpool_size
from . import _ops, _spec

__all__ = []


def _batched(input, rank, f):
    if input.ndim == rank + 1:
        return jax.tree.map(lambda y: y[0], f(input[None]))
    if input.ndim != rank + 2:
        raise ValueError(f"poolkit: input: must be (N, C) or (C) followed by {rank} spatial axes "
                         f"(got shape {tuple(input.shape)})")
    return f(input)


def _avg_options(count_include_pad, divisor_override):
    opts = [("count_include_pad", bool(count_include_pad))]
    if divisor_override is not None:
        opts.append(("divisor_override", _spec._ints(divisor_override, "divisor_override")[0]))
    return opts


def _make(r):
    from . import _lambda, _max, fractional_max_pool as _fractional, max_unpool as _unpool

    def max_pool(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
        return _batched(input, r, lambda x: _max(
            x, _spec.torch_window(x, r, kernel_size, stride, padding, dilation, ceil_mode,
                                  integers=_spec.INTEGERS),
            return_indices))

    def avg_pool(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        opts = _avg_options(count_include_pad, divisor_override)
        return _batched(input, r, lambda x: _ops.avg_pool(
            x, _spec.torch_window(x, r, kernel_size, stride, padding, 1, ceil_mode, opts, integers=_spec.INT64)))

    def lp_pool(input, norm_type, kernel_size, stride=None, ceil_mode=False):
        sign = _lp_infinite_sign(norm_type, "torch")
        if sign is not None:
            return sign * max_pool(sign * jax.numpy.abs(input), kernel_size, stride, 0, 1, ceil_mode)
        opts = [("norm_type", float(norm_type)), ("onnx_convention", False)]
        return _batched(input, r, lambda x: _ops.lp_pool(
            x, _spec.torch_window(x, r, kernel_size, stride, 0, 1, ceil_mode, opts)))

    def adaptive_max_pool(input, output_size, return_indices=False):
        return _batched(input, r, lambda x: _max(
            x, _spec.adaptive(x, output_size, True, integers=_spec.INTEGERS, rank=r), return_indices))

    def adaptive_avg_pool(input, output_size):
        return _batched(input, r, lambda x: _ops.avg_pool(
            x, _spec.adaptive(x, output_size, True, [("count_include_pad", False)], rank=r)))

    def fractional_max_pool(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                            _random_samples=None, *, key=None):
        k = _spec._ints(kernel_size, "kernel_size", r)
        return _fractional(input, k, output_size, output_ratio, key=key, samples=_random_samples,
                           channels_first=True, return_indices=return_indices)

    def max_unpool(input, indices, kernel_size, stride=None, padding=0, output_size=None):
        x = input if input.ndim == r + 2 else input[None]
        req = None if output_size is None else list(output_size)[-r:] if not isinstance(output_size, int) else \
            output_size
        return _unpool(input, indices, unpool_size(x, kernel_size, stride, padding, req), channels_first=True)

    def mixed_pool(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                   divisor_override=None, lambda_=0.5):
        opts = _avg_options(count_include_pad, divisor_override)
        return _batched(input, r, lambda x: _ops.mixed_pool(
            x, _lambda(x, lambda_), _spec.torch_window(x, r, kernel_size, stride, padding, 1, ceil_mode, opts)))

    def stochastic_pool(input, kernel_size, stride=None, padding=0, ceil_mode=False, training=True, seed=0):
        opts = [("training", bool(training)), ("seed", int(seed))]
        return _batched(input, r, lambda x: _ops.stochastic_pool(
            x, _spec.torch_window(x, r, kernel_size, stride, padding, 1, ceil_mode, opts)))

    for fn in (max_pool, avg_pool, lp_pool, adaptive_max_pool, adaptive_avg_pool, max_unpool):
        fn.__doc__ = f"torch.nn.functional's same-named function over (N, C, {r} spatial axes) JAX arrays."
    fractional_max_pool.__doc__ = ("torch.nn.functional's fractional_max_pool over (N, C, spatial) JAX arrays; JAX "
                                   "has no global random state: pass _random_samples (N, C, rank) or key=.")
    lp_pool.__doc__ += " norm_type: non-zero; +-inf are max pooling of |x| (-inf: the min of |x|), as in PyTorch 2."
    for fn in (mixed_pool, stochastic_pool):
        fn.__doc__ = (f"poolkit.torch's same-named function (no torch.nn.functional peer) over (N, C, {r} spatial "
                      "axes) JAX arrays.")
    for fn, base in ((max_pool, "max_pool"), (avg_pool, "avg_pool"), (lp_pool, "lp_pool"),
                     (adaptive_max_pool, "adaptive_max_pool"), (adaptive_avg_pool, "adaptive_avg_pool"),
                     (fractional_max_pool, "fractional_max_pool"), (max_unpool, "max_unpool"),
                     (mixed_pool, "mixed_pool"), (stochastic_pool, "stochastic_pool")):
        fn.__name__ = fn.__qualname__ = f"{base}{r}d"
        fn.__module__ = "poolkit.jax"  # documented and shown as poolkit.jax's own
        globals()[fn.__name__] = fn
        __all__.append(fn.__name__)


for _r in (1, 2, 3):
    _make(_r)
