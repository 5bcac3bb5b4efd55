"""poolkit for torch.Tensor: torch.nn.functional's names, argument order and defaults, differentiable through
autograd (poolkit's own backward), zero-copy for channels-first and channels-last tensors. poolkit.torch.nn has
the modules. The extra keywords of poolkit.functional (padding forms, data_format, convention) work here too."""
import torch
from torch import Tensor

from .. import _core
from .._layout import batched, from_data_format, require_nonempty, to_data_format, unbatch
from .._params import (GLOBAL_RECIPE, adaptive_recipe, check_avg_pool3d_input, check_convention, fractional_recipe,
                       int_list, spatial_size, sum_pool_dilation, window_recipe)
from ..functional import _avg_divisor, _avg_include_default, _lp_infinite_sign, onnx_unpool
from . import _autograd

# The operators: registered with torch.library where this PyTorch can (torch.compile, torch.export, double
# backward), else plain autograd Functions.
if hasattr(torch.library, "custom_op") and hasattr(torch.library, "register_autograd"):
    from . import _ops as A
else:
    A = _autograd

__all__ = []


def _takes_scalar_ratio_2d():
    """Whether the installed PyTorch's fractional_max_pool2d takes a single number as output_ratio (2.x calls
    len() on it); poolkit.torch refuses what it refuses."""
    try:
        torch.nn.functional.fractional_max_pool2d(torch.zeros(1, 1, 2, 2), 1, output_ratio=0.5,
                                                  _random_samples=torch.zeros(1, 1, 2))
        return True
    except TypeError:
        return False


_SCALAR_RATIO = {1: True, 2: _takes_scalar_ratio_2d(), 3: True}
# PyTorch computes the fractional window sequence in float32 for these input types, in float64 otherwise
_FLOAT32_SEQUENCE = (torch.float32, torch.float16, torch.bfloat16)


def _check_tensor(x, name="input"):
    if not isinstance(x, Tensor):
        raise TypeError(f"poolkit: {name}: must be a torch.Tensor (got {type(x).__name__})")
    if x.is_cpu:  # (first: each step costs microseconds once a large kernel has left the caches cold)
        return x
    if x.device.type not in ("cpu", "cuda"):
        raise TypeError(f"poolkit: {name}: must be a CPU or CUDA tensor (got device {x.device})")
    if x.is_cuda and not _core.with_cuda:
        raise TypeError(f"poolkit: {name}: is a CUDA tensor, and this poolkit was built without CUDA (build it "
                        "from source where the CUDA toolkit is installed)")
    return x


class _In:
    def __init__(self, x, rank, data_format="channels_first", name="input", empty_channels=False):
        x = _check_tensor(x, name)
        x, self.added = batched(x, rank, name)
        self.data_format = data_format
        self.x = from_data_format(x, data_format)
        if not empty_channels:
            require_nonempty(self.x, name)

    def other(self, a, name):
        a = _check_tensor(a, name)
        return from_data_format(a[None] if self.added else a, self.data_format)

    def out(self, y):
        return unbatch(to_data_format(y, self.data_format), self.added)


def _export(fn, name):
    fn.__name__ = fn.__qualname__ = name
    if A is not _autograd:  # under torch.compile, bad arguments raise eager's error from the compiled graph
        fn = A.refusing_in_graph(fn, _returns_pair(fn))
    globals()[name] = fn
    __all__.append(name)


def _returns_pair(fn):
    """Whether a call of fn returns (output, indices): its return_indices argument, by keyword or position."""
    names = fn.__code__.co_varnames[:fn.__code__.co_argcount]
    at = names.index("return_indices") if "return_indices" in names else None
    return lambda args, kwargs: at is not None and bool(kwargs.get("return_indices", args[at] if len(args) > at
                                                                    else False))


def _max_result(a, res, return_indices):
    if return_indices:
        y, idx = res
        return a.out(y), a.out(idx)
    return a.out(res)


def _make(r):
    def max_pool(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False, *,
                 data_format="channels_first"):
        a = _In(input, r, data_format)
        g = window_recipe(r, kernel_size, stride, padding, dilation, ceil_mode)
        return _max_result(a, A.max_pool(a.x, g, return_indices), return_indices)

    def avg_impl(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, dilation,
                 convention, data_format):
        a = _In(input, r, data_format)
        d = sum_pool_dilation(dilation, convention, f"avg_pool{r}d")
        if r == 3 and convention == "torch":
            check_avg_pool3d_input(a.x, kernel_size)
        g = window_recipe(r, kernel_size, stride, padding, d, ceil_mode)
        cip, div = _avg_divisor(kernel_size, r, padding, count_include_pad, divisor_override, convention)
        return a.out(A.avg_pool(a.x, g, cip, div))

    if r == 1:
        def avg_pool(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=None, *,
                     divisor_override=None, dilation=1, convention="torch", data_format="channels_first"):
            return avg_impl(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override,
                            dilation, convention, data_format)
    else:
        def avg_pool(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=None,
                     divisor_override=None, *, dilation=1, convention="torch", data_format="channels_first"):
            return avg_impl(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override,
                            dilation, convention, data_format)

    def lp_pool(input, norm_type, kernel_size, stride=None, ceil_mode=False, *, padding=0, dilation=1,
                convention="torch", data_format="channels_first"):
        sign = _lp_infinite_sign(norm_type, convention)
        if sign is not None:
            return sign * max_pool(sign * input.abs(), kernel_size, stride, padding, dilation, ceil_mode,
                                   data_format=data_format)
        a = _In(input, r, data_format)
        g = window_recipe(r, kernel_size, stride, padding, sum_pool_dilation(dilation, convention, f"lp_pool{r}d"),
                          ceil_mode)
        return a.out(A.lp_pool(a.x, g, norm_type, convention))

    def adaptive_max_pool(input, output_size, return_indices=False):
        a = _In(input, r)
        g = adaptive_recipe(output_size, spatial_size(a.x))
        return _max_result(a, A.max_pool(a.x, g, return_indices), return_indices)

    def adaptive_avg_pool(input, output_size):
        a = _In(input, r, empty_channels=r <= 2)
        return a.out(A.avg_pool(a.x, adaptive_recipe(output_size, spatial_size(a.x)), False, None))

    def fractional_max_pool(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                            _random_samples=None):
        a = _In(input, r)
        g = fractional_recipe(kernel_size, output_size, output_ratio, spatial_size(a.x), a.x.dtype in _FLOAT32_SEQUENCE,
                              _SCALAR_RATIO[r])
        if _random_samples is None:
            sdt = a.x.dtype if a.x.is_floating_point() else torch.float64  # (integer inputs: float64 samples)
            _random_samples = torch.rand(a.x.shape[0], a.x.shape[1], r, dtype=sdt)
        _check_tensor(_random_samples, "_random_samples")
        res = A.fractional_max_pool(a.x, g, _random_samples, return_indices)
        return _max_result(a, res, return_indices)

    def max_unpool(input, indices, kernel_size, stride=None, padding=0, output_size=None, *, convention="torch"):
        check_convention(convention)
        a = _In(input, r)
        idx = a.other(indices, "indices")
        if convention == "onnx":  # ONNX's whole-tensor indices, remapped on the host (eager only)
            local, out = onnx_unpool(a.x, idx.cpu().numpy(), kernel_size, stride, padding, output_size)
            return a.out(_autograd.MaxUnpool.apply(a.x, torch.from_numpy(local).to(idx.device), out))
        req = None if output_size is None else int_list(output_size, "output_size")
        return a.out(A.max_unpool(a.x, idx, int_list(kernel_size, "kernel_size"),
                                  int_list(stride, "stride", allow_none=True), int_list(padding, "padding"), req))

    def mixed_pool(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=None,
                   divisor_override=None, lambda_=0.5, *, data_format="channels_first"):
        a = _In(input, r, data_format)
        g = window_recipe(r, kernel_size, stride, padding, 1, ceil_mode)
        cip = _avg_include_default(count_include_pad, padding)
        return a.out(A.mixed_pool(a.x, lambda_, g, cip, divisor_override))

    def stochastic_pool(input, kernel_size, stride=None, padding=0, ceil_mode=False, training=True, seed=0, *,
                        data_format="channels_first"):
        a = _In(input, r, data_format)
        g = window_recipe(r, kernel_size, stride, padding, 1, ceil_mode)
        return a.out(A.stochastic_pool(a.x, g, training, seed))

    for fn, base in ((max_pool, "max_pool"), (avg_pool, "avg_pool"), (lp_pool, "lp_pool"),
                     (adaptive_max_pool, "adaptive_max_pool"), (adaptive_avg_pool, "adaptive_avg_pool"),
                     (fractional_max_pool, "fractional_max_pool"), (max_unpool, "max_unpool"),
                     (mixed_pool, "mixed_pool"), (stochastic_pool, "stochastic_pool")):
        _export(fn, f"{base}{r}d")


for _r in (1, 2, 3):
    _make(_r)


def _global_in(input, data_format):
    x = from_data_format(_check_tensor(input), data_format)
    if x.dim() < 3 or x.dim() > 5:
        raise ValueError(f"poolkit: input: must be (N, C, 1 to 3 spatial dims) (got shape {tuple(x.shape)})")
    return x


def global_max_pool(input, return_indices=False, *, data_format="channels_first"):
    x = _global_in(input, data_format)
    res = A.max_pool(x, GLOBAL_RECIPE, return_indices)
    if return_indices:
        return to_data_format(res[0], data_format), to_data_format(res[1], data_format)
    return to_data_format(res, data_format)


def global_avg_pool(input, *, data_format="channels_first"):
    x = _global_in(input, data_format)
    return to_data_format(A.avg_pool(x, GLOBAL_RECIPE, False, None), data_format)


def global_lp_pool(input, norm_type=2, *, data_format="channels_first"):
    x = _global_in(input, data_format)
    return to_data_format(A.lp_pool(x, GLOBAL_RECIPE, norm_type, "onnx"), data_format)


for _f in (global_max_pool, global_avg_pool, global_lp_pool):
    _export(_f, _f.__name__)
