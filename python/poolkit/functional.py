"""NumPy-level pooling with torch.nn.functional's names, argument order, defaults and return conventions.

Inputs are NumPy arrays (or anything with __dlpack__, read without a copy; torch tensors are handed to
poolkit.torch and come back as tensors). Outputs are allocated in the input's layout (channels-last in,
channels-last out). Extra keywords: padding='valid'|'same' (Keras), 'SAME_UPPER'|'SAME_LOWER'|'VALID' (ONNX
auto_pad) or ((begin, end), ...) per axis (ONNX pads); data_format='channels_first'|'channels_last'.
Each operator has a *_backward giving the gradient with respect to its input."""
import numpy as np

from . import _core, _engine
from ._layout import NUMPY, batched, from_data_format, is_channels_last, require_nonempty, to_data_format, unbatch
from ._params import (build_geometry, check_avg_pool3d_input, check_convention, fractional_recipe, int_list,
                      kernel_cells, output_size_list, spatial_size, sum_pool_dilation, unpool_pads, window_geometry)
from ._types import as_array, check_dtype

__all__ = []


def _is_torch(x):
    t = type(x)
    return t.__module__.startswith("torch") and t.__name__ in ("Tensor", "Parameter")


def _as_numpy(x, name="input"):
    return as_array(x, name)


def _torch_twin(name):
    from . import torch as pk_torch
    return getattr(pk_torch, name)


class _In:
    """An input brought to (N, C, spatial...) form; .out() undoes it on a result."""

    def __init__(self, x, rank, data_format="channels_first", name="input", allow_unbatched=True,
                 empty_channels=False):
        x = _as_numpy(x, name)
        x, self.added = batched(x, rank, name, allow_unbatched)
        self.data_format = data_format
        self.x = from_data_format(x, data_format)
        if not empty_channels:
            require_nonempty(self.x, name)

    def other(self, a, name):
        a = _as_numpy(a, name)
        if self.added:
            a = a[None]
        return from_data_format(a, self.data_format)

    def out(self, y):
        return unbatch(to_data_format(y, self.data_format), self.added)


def _export(fn, name):
    fn.__name__ = fn.__qualname__ = name
    globals()[name] = fn
    __all__.append(name)
    return fn


def _twin_if_torch(name, input, args, kwargs):
    if _is_torch(input):
        return True, _torch_twin(name)(input, *args, **kwargs)
    return False, None


def _avg_include_default(count_include_pad, padding):
    """None: PyTorch's True for numeric padding; False for Keras/ONNX padding forms (their default)."""
    if count_include_pad is not None:
        return bool(count_include_pad)
    if isinstance(padding, str):
        return False
    # isinstance, not try/except: torch.compile traces this
    return not (isinstance(padding, (tuple, list)) and any(isinstance(e, (tuple, list)) for e in padding))


def _avg_divisor(kernel_size, rank, padding, count_include_pad, divisor_override, convention):
    """(count_include_pad, divisor_override) for the core. convention='onnx': count_include_pad defaults to False,
    and True divides every window by all its taps, those past the end of the padding in ceil_mode included (ONNX's
    reference pads the input out to the last window with zeros and averages them all; ONNX Runtime agrees), where
    PyTorch's counts the taps up to the end of the padding only."""
    if convention == "torch":
        return _avg_include_default(count_include_pad, padding), divisor_override
    if divisor_override is not None:
        raise ValueError("poolkit: divisor_override: ONNX's AveragePool has none; it needs convention='torch'")
    if count_include_pad:
        return True, kernel_cells(kernel_size, rank)  # every tap of the kernel
    return False, None


def _make_max_pool(r):
    name = f"max_pool{r}d"

    def f(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False, *,
          data_format="channels_first"):
        done, res = _twin_if_torch(name, input, (kernel_size, stride, padding, dilation, ceil_mode, return_indices),
                                   {"data_format": data_format})
        if done:
            return res
        a = _In(input, r, data_format)
        g = window_geometry(a.x, kernel_size, stride, padding, dilation, ceil_mode)
        y, idx = _engine.max_pool(NUMPY, g, a.x, "int64" if return_indices else None)
        return (a.out(y), a.out(idx)) if return_indices else a.out(y)

    def b(grad_output, input, indices, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, *,
          data_format="channels_first"):
        """Gradient of max_pool w.r.t. input. indices: int64 from return_indices=True, or None to recompute."""
        a = _In(input, r, data_format)
        g = window_geometry(a.x, kernel_size, stride, padding, dilation, ceil_mode)
        idx = None if indices is None else a.other(indices, "indices")
        return a.out(_engine.max_pool_backward(NUMPY, g, a.other(grad_output, "grad_output"), idx, a.x))

    _export(f, name)
    _export(b, name + "_backward")


def _make_avg_pool(r):
    name = f"avg_pool{r}d"

    def setup(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, dilation,
              convention, data_format):
        a = _In(input, r, data_format)
        d = sum_pool_dilation(dilation, convention, name)
        if r == 3 and convention == "torch":
            check_avg_pool3d_input(a.x, kernel_size)
        g = window_geometry(a.x, kernel_size, stride, padding, d, ceil_mode)
        return a, g, _avg_divisor(kernel_size, r, padding, count_include_pad, divisor_override, convention)

    def impl(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, dilation,
             convention, data_format):
        a, g, (cip, div) = setup(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                                 divisor_override, dilation, convention, data_format)
        return a.out(_engine.avg_pool(NUMPY, g, a.x, cip, div))

    def twin_or_impl(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, dilation,
                     convention, data_format):
        done, res = _twin_if_torch(name, input, (kernel_size, stride, padding, ceil_mode, count_include_pad),
                                   {"divisor_override": divisor_override, "dilation": dilation,
                                    "convention": convention, "data_format": data_format})
        if done:
            return res
        return impl(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, dilation,
                    convention, data_format)

    if r == 1:
        def f(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=None, *,
              divisor_override=None, dilation=1, convention="torch", data_format="channels_first"):
            """dilation (ONNX's dilations) needs convention='onnx', which also takes ONNX's divisor rules."""
            return twin_or_impl(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override,
                                dilation, convention, data_format)
    else:
        def f(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=None,
              divisor_override=None, *, dilation=1, convention="torch", data_format="channels_first"):
            """dilation (ONNX's dilations) needs convention='onnx', which also takes ONNX's divisor rules."""
            return twin_or_impl(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override,
                                dilation, convention, data_format)

    def b(grad_output, input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=None,
          divisor_override=None, *, dilation=1, convention="torch", data_format="channels_first"):
        """Gradient of avg_pool w.r.t. input (input gives the shape and layout)."""
        a, g, (cip, div) = setup(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                                 divisor_override, dilation, convention, data_format)
        dy = a.other(grad_output, "grad_output")
        return a.out(_engine.avg_pool_backward(NUMPY, g, dy, list(a.x.shape), is_channels_last(a.x), cip, div))

    _export(f, name)
    _export(b, name + "_backward")


def _lp_infinite_sign(norm_type, convention):
    """+1 or -1 where PyTorch's lp_pool takes norm_type = +-inf as max pooling of |x| (-inf: minus the max of -|x|,
    so the min of |x|), in the torch convention; else None (the core's formula, which refuses them)."""
    if convention == "torch" and isinstance(norm_type, (int, float)) and abs(norm_type) == float("inf"):
        return 1 if norm_type > 0 else -1
    return None


def _make_lp_pool(r):
    name = f"lp_pool{r}d"

    def f(input, norm_type, kernel_size, stride=None, ceil_mode=False, *, padding=0, dilation=1, convention="torch",
          data_format="channels_first"):
        """convention='torch': PyTorch's avg-based formula; 'onnx': (sum |x|^p)^(1/p) as ONNX LpPool, which also
        takes a dilation (ONNX's dilations)."""
        done, res = _twin_if_torch(name, input, (norm_type, kernel_size, stride, ceil_mode),
                                   {"padding": padding, "dilation": dilation, "convention": convention,
                                    "data_format": data_format})
        if done:
            return res
        sign = _lp_infinite_sign(norm_type, convention)
        if sign is not None:
            m = globals()[f"max_pool{r}d"]
            x = np.asarray(input)
            return sign * m(sign * np.abs(x), kernel_size, stride, padding, dilation, ceil_mode, data_format=data_format)
        a = _In(input, r, data_format)
        g = window_geometry(a.x, kernel_size, stride, padding, sum_pool_dilation(dilation, convention, name),
                            ceil_mode)
        return a.out(_engine.lp_pool(NUMPY, g, a.x, norm_type, convention))

    def b(grad_output, input, norm_type, kernel_size, stride=None, ceil_mode=False, *, padding=0, dilation=1,
          convention="torch", data_format="channels_first"):
        sign = _lp_infinite_sign(norm_type, convention)
        if sign is not None:  # d|x|/dx = sign(x), 0 at 0, as PyTorch's abs
            mb = globals()[f"max_pool{r}d_backward"]
            x, dy = np.asarray(input), np.asarray(grad_output)
            return np.sign(x) * mb(dy, sign * np.abs(x), None, kernel_size, stride, padding, dilation, ceil_mode,
                                   data_format=data_format)
        a = _In(input, r, data_format)
        g = window_geometry(a.x, kernel_size, stride, padding, sum_pool_dilation(dilation, convention, name),
                            ceil_mode)
        dy = a.other(grad_output, "grad_output")
        return a.out(_engine.lp_pool_backward(NUMPY, g, dy, a.x, norm_type, convention))

    _export(f, name)
    _export(b, name + "_backward")


def _make_adaptive(r):
    mname, aname = f"adaptive_max_pool{r}d", f"adaptive_avg_pool{r}d"

    def fmax(input, output_size, return_indices=False):
        done, res = _twin_if_torch(mname, input, (output_size, return_indices), {})
        if done:
            return res
        a = _In(input, r)
        g = _core.adaptive_geometry(spatial_size(a.x), output_size_list(output_size, spatial_size(a.x)))
        y, idx = _engine.max_pool(NUMPY, g, a.x, "int64" if return_indices else None)
        return (a.out(y), a.out(idx)) if return_indices else a.out(y)

    def bmax(grad_output, input, indices):
        """Gradient of adaptive max pooling; indices int64 from return_indices=True, or None to recompute."""
        a = _In(input, r)
        dy = a.other(grad_output, "grad_output")
        g = _core.adaptive_geometry(spatial_size(a.x), spatial_size(dy))
        idx = None if indices is None else a.other(indices, "indices")
        return a.out(_engine.max_pool_backward(NUMPY, g, dy, idx, a.x))

    def favg(input, output_size):
        done, res = _twin_if_torch(aname, input, (output_size,), {})
        if done:
            return res
        a = _In(input, r, empty_channels=r <= 2)
        g = _core.adaptive_geometry(spatial_size(a.x), output_size_list(output_size, spatial_size(a.x)))
        return a.out(_engine.avg_pool(NUMPY, g, a.x, False, None))

    def bavg(grad_output, input):
        a = _In(input, r, empty_channels=r <= 2)
        dy = a.other(grad_output, "grad_output")
        g = _core.adaptive_geometry(spatial_size(a.x), spatial_size(dy))
        return a.out(_engine.avg_pool_backward(NUMPY, g, dy, list(a.x.shape), is_channels_last(a.x), False, None))

    _export(fmax, mname)
    _export(bmax, mname + "_backward")
    _export(favg, aname)
    _export(bavg, aname + "_backward")


def fractional_geometry(x, kernel_size, output_size, output_ratio):
    """The geometry of fractional max pooling of (N, C, spatial...) x."""
    check_dtype("fractional_max_pool", input=x)  # before the samples are drawn in x's dtype
    in_size = spatial_size(x)
    # PyTorch computes the sequence in the input's type: float32 for the narrower floats, double otherwise
    in_float = str(x.dtype).split('.')[-1] in ('float32', 'float16', 'bfloat16')
    return build_geometry(fractional_recipe(kernel_size, output_size, output_ratio, in_size, in_float), in_size)


def _make_fractional(r):
    name = f"fractional_max_pool{r}d"

    def f(input, kernel_size, output_size=None, output_ratio=None, return_indices=False, _random_samples=None):
        done, res = _twin_if_torch(name, input, (kernel_size, output_size, output_ratio, return_indices,
                                                 _random_samples), {})
        if done:
            return res
        a = _In(input, r)
        g = fractional_geometry(a.x, kernel_size, output_size, output_ratio)
        if _random_samples is None:
            sdt = a.x.dtype if a.x.dtype.kind == 'f' else np.float64  # (integer inputs: float64 samples)
            samples = np.random.default_rng().random((a.x.shape[0], a.x.shape[1], r)).astype(sdt)
        else:
            samples = _as_numpy(_random_samples, "_random_samples")
        y, idx = _engine.fractional_max_pool(NUMPY, g, samples, a.x, "int64" if return_indices else None)
        return (a.out(y), a.out(idx)) if return_indices else a.out(y)

    def b(grad_output, input, indices, kernel_size, output_size, _random_samples):
        """Gradient of fractional max pooling; indices int64, or None to recompute from input and the samples."""
        a = _In(input, r)
        g = fractional_geometry(a.x, kernel_size, output_size, None)
        idx = None if indices is None else a.other(indices, "indices")
        samples = _as_numpy(_random_samples, "_random_samples")
        return a.out(_engine.fractional_max_pool_backward(NUMPY, g, samples, a.other(grad_output, "grad_output"),
                                                          idx, a.x))

    _export(f, name)
    _export(b, name + "_backward")


def unpool_size(x, kernel_size, stride, padding, output_size):
    """The spatial output size of max unpooling of (N, C, spatial...) x (shared with poolkit.torch)."""
    req = None if output_size is None else int_list(output_size, "output_size")
    return _core.unpool_output_size(spatial_size(x), int_list(kernel_size, "kernel_size"),
                                    int_list(stride, "stride", allow_none=True), int_list(padding, "padding"), req)


def onnx_unpool(x, indices, kernel_size, stride, padding, output_size):
    """ONNX's MaxUnpool conventions as poolkit's: (per-plane indices into the output plane, output spatial size).
    ONNX reads the indices as flat positions over the whole (N, C, spatial) tensor of the unpooled shape that kernel,
    strides and pads give (as ONNX MaxPool's Indices count them, storage_order 0), and a larger output_shape only
    pads that result with zeros at the end of each axis. x, indices: NumPy arrays in (N, C, spatial) form."""
    size = spatial_size(x)
    pairs = unpool_pads(padding, len(size))
    base = _core.unpool_output_size(size, int_list(kernel_size, "kernel_size"),
                                    int_list(stride, "stride", allow_none=True), [0], None)
    inner = [b - lo - hi for b, (lo, hi) in zip(base, pairs)]
    if any(v < 1 for v in inner):
        raise ValueError(f"poolkit: padding: leaves an unpooled size below 1 (got {tuple(inner)})")
    out = inner if output_size is None else int_list(output_size, "output_size")
    if len(out) == len(size) + 2:
        if out[:2] != [int(v) for v in x.shape[:2]]:
            raise ValueError(f"poolkit: output_size: N and C must be the input's {tuple(x.shape[:2])} "
                             f"(got {tuple(out[:2])})")
        out = out[2:]
    if len(out) != len(size) or any(o < i for o, i in zip(out, inner)):
        raise ValueError(f"poolkit: output_size: ONNX's output_shape must cover the unpooled size {tuple(inner)} "
                         f"on every spatial axis (got {tuple(out)})")
    if indices.dtype != np.int64:
        raise TypeError(f"poolkit: indices: must be int64 (got {indices.dtype})")
    plane = int(np.prod(inner))
    first = (np.arange(x.shape[0])[:, None] * x.shape[1] + np.arange(x.shape[1])[None, :]) * plane
    local = indices - first.reshape(first.shape + (1,) * len(size))
    bad = (local < 0) | (local >= plane)
    if bad.any():
        at = tuple(int(v[0]) for v in np.nonzero(bad))
        raise IndexError(f"poolkit: indices: with convention='onnx' an index counts over the whole (N, C, spatial) "
                         f"tensor of the unpooled shape and must lie in its own (n, c) plane "
                         f"[{int(first[at[:2]])}, {int(first[at[:2]]) + plane}) (got {int(indices[at])} at {at})")
    if out != inner:
        local = np.ravel_multi_index(np.unravel_index(local, inner), out)
    return local, out


def _make_unpool(r):
    name = f"max_unpool{r}d"

    def f(input, indices, kernel_size, stride=None, padding=0, output_size=None, *, convention="torch"):
        """convention='torch': indices flat in each (n, c) plane of the output, as PyTorch's; 'onnx': as ONNX's
        MaxUnpool (see onnx_unpool)."""
        done, res = _twin_if_torch(name, input, (indices, kernel_size, stride, padding, output_size),
                                   {"convention": convention})
        if done:
            return res
        check_convention(convention)
        a = _In(input, r)
        idx = a.other(indices, "indices")
        if convention == "onnx":
            idx, out = onnx_unpool(a.x, idx, kernel_size, stride, padding, output_size)
        else:
            out = unpool_size(a.x, kernel_size, stride, padding, output_size)
        return a.out(_engine.max_unpool(NUMPY, a.x, idx, out))

    def b(grad_output, indices):
        """Gradient of max unpooling w.r.t. its input: grad_output gathered at indices (PyTorch's form)."""
        a = _In(grad_output, r, name="grad_output")
        return a.out(_engine.max_unpool_backward(NUMPY, a.x, a.other(indices, "indices")))

    _export(f, name)
    _export(b, name + "_backward")


def _make_mixed_stochastic(r):
    mname, sname = f"mixed_pool{r}d", f"stochastic_pool{r}d"

    def fm(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=None,
           divisor_override=None, lambda_=0.5, *, data_format="channels_first"):
        """lambda_ * max_pool + (1 - lambda_) * avg_pool over the same windows."""
        a = _In(input, r, data_format)
        g = window_geometry(a.x, kernel_size, stride, padding, 1, ceil_mode)
        cip = _avg_include_default(count_include_pad, padding)
        return a.out(_engine.mixed_pool(NUMPY, g, a.x, lambda_, cip, divisor_override))

    def bm(grad_output, input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=None,
           divisor_override=None, lambda_=0.5, *, data_format="channels_first"):
        """Returns (grad_input, grad_lambda)."""
        a = _In(input, r, data_format)
        g = window_geometry(a.x, kernel_size, stride, padding, 1, ceil_mode)
        cip = _avg_include_default(count_include_pad, padding)
        dx, dl = _engine.mixed_pool_backward(NUMPY, g, a.other(grad_output, "grad_output"), a.x, lambda_, cip,
                                             divisor_override)
        return a.out(dx), dl

    def fs(input, kernel_size, stride=None, padding=0, ceil_mode=False, training=True, seed=0, *,
           data_format="channels_first"):
        """Stochastic pooling: in training one cell per window drawn with probability proportional to max(x, 0)
        (reproducible from seed); otherwise the probability-weighted mean."""
        a = _In(input, r, data_format)
        g = window_geometry(a.x, kernel_size, stride, padding, 1, ceil_mode)
        return a.out(_engine.stochastic_pool(NUMPY, g, a.x, training, seed))

    def bs(grad_output, input, kernel_size, stride=None, padding=0, ceil_mode=False, training=True, seed=0, *,
           data_format="channels_first"):
        a = _In(input, r, data_format)
        g = window_geometry(a.x, kernel_size, stride, padding, 1, ceil_mode)
        return a.out(_engine.stochastic_pool_backward(NUMPY, g, a.other(grad_output, "grad_output"), a.x,
                                                      training, seed))

    _export(fm, mname)
    _export(bm, mname + "_backward")
    _export(fs, sname)
    _export(bs, sname + "_backward")


for _r in (1, 2, 3):
    _make_max_pool(_r)
    _make_avg_pool(_r)
    _make_lp_pool(_r)
    _make_adaptive(_r)
    _make_fractional(_r)
    _make_unpool(_r)
    _make_mixed_stochastic(_r)


def _global_in(input, data_format):
    x = from_data_format(_as_numpy(input), data_format)
    if x.ndim < 3 or x.ndim > 5:
        raise ValueError(f"poolkit: input: must be (N, C, 1 to 3 spatial dims) (got shape {tuple(x.shape)})")
    return x, _core.global_geometry(spatial_size(x))


def global_max_pool(input, return_indices=False, *, data_format="channels_first"):
    """Max over all spatial axes of (N, C, spatial...); the output keeps size-1 spatial axes."""
    x, g = _global_in(input, data_format)
    y, idx = _engine.max_pool(NUMPY, g, x, "int64" if return_indices else None)
    y = to_data_format(y, data_format)
    return (y, to_data_format(idx, data_format)) if return_indices else y


def global_avg_pool(input, *, data_format="channels_first"):
    x, g = _global_in(input, data_format)
    return to_data_format(_engine.avg_pool(NUMPY, g, x, False, None), data_format)


def global_lp_pool(input, norm_type=2, *, data_format="channels_first"):
    """ONNX GlobalLpPool: (sum over all spatial cells of |x|^p)^(1/p)."""
    x, g = _global_in(input, data_format)
    return to_data_format(_engine.lp_pool(NUMPY, g, x, norm_type, "onnx"), data_format)


def global_max_pool_backward(grad_output, input, indices=None, *, data_format="channels_first"):
    x, g = _global_in(input, data_format)
    dy = from_data_format(_as_numpy(grad_output, "grad_output"), data_format)
    idx = None if indices is None else from_data_format(_as_numpy(indices, "indices"), data_format)
    return to_data_format(_engine.max_pool_backward(NUMPY, g, dy, idx, x), data_format)


def global_avg_pool_backward(grad_output, input, *, data_format="channels_first"):
    x, g = _global_in(input, data_format)
    dy = from_data_format(_as_numpy(grad_output, "grad_output"), data_format)
    return to_data_format(_engine.avg_pool_backward(NUMPY, g, dy, list(x.shape), is_channels_last(x), False, None),
                          data_format)


def global_lp_pool_backward(grad_output, input, norm_type=2, *, data_format="channels_first"):
    x, g = _global_in(input, data_format)
    dy = from_data_format(_as_numpy(grad_output, "grad_output"), data_format)
    return to_data_format(_engine.lp_pool_backward(NUMPY, g, dy, x, norm_type, "onnx"), data_format)


__all__ += ["global_max_pool", "global_avg_pool", "global_lp_pool", "global_max_pool_backward",
            "global_avg_pool_backward", "global_lp_pool_backward"]
