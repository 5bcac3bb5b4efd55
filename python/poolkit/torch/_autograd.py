"""torch.autograd.Functions over poolkit's forward and backward operators, for a PyTorch without
torch.library.custom_op (first-order gradients only). Inputs arrive as (N, C, spatial...) tensors; the callers in
poolkit.torch handle unbatched inputs and data_format. The functions at the end are the interface poolkit.torch
calls (the same as _ops')."""
import torch

from .. import _engine
from .._layout import TORCH, is_channels_last
from .._params import build_geometry, spatial_size
from ..functional import unpool_size


def index_form(x, return_indices, for_grad):
    """PyTorch's int64 indices when asked for, else the compact argmax a gradient needs: none where no gradient
    will be asked for (for_grad false: no grad mode, or x does not require grad; integer inputs never have one)."""
    return "int64" if return_indices else "compact" if for_grad and x.is_floating_point() else None


def needs_grad(x):
    """Whether autograd will record an operator on x: the forward then keeps what its backward needs."""
    return torch.is_grad_enabled() and x.requires_grad


class MaxPool(torch.autograd.Function):
    """Max, adaptive max and global max pooling. Saves the compact window-local argmax (see index_form) unless the
    caller asked for PyTorch's int64 indices (then those, which it returns too)."""

    @staticmethod
    def forward(ctx, x, g, return_indices, for_grad):
        x = x.detach()
        y, am = _engine.max_pool(TORCH, g, x, index_form(x, return_indices, for_grad))
        ctx.g, ctx.x_shape, ctx.cl = g, list(x.shape), is_channels_last(x)
        ctx.save_for_backward(am)
        if return_indices:
            ctx.mark_non_differentiable(am)
            return y, am
        return y

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, dy, *unused):
        (am,) = ctx.saved_tensors
        return _engine.max_pool_backward(TORCH, ctx.g, dy, am, None, ctx.x_shape, ctx.cl), None, None, None


class FractionalMaxPool(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, g, samples, return_indices, for_grad):
        x, samples = x.detach(), samples.detach()
        y, am = _engine.fractional_max_pool(TORCH, g, samples, x, index_form(x, return_indices, for_grad))
        ctx.g, ctx.x_shape, ctx.cl = g, list(x.shape), is_channels_last(x)
        ctx.save_for_backward(am, samples)
        if return_indices:
            ctx.mark_non_differentiable(am)
            return y, am
        return y

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, dy, *unused):
        am, samples = ctx.saved_tensors
        dx = _engine.fractional_max_pool_backward(TORCH, ctx.g, samples, dy, am, None, ctx.x_shape, ctx.cl)
        return dx, None, None, None, None


class AvgPool(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, g, count_include_pad, divisor_override):
        x = x.detach()
        ctx.g, ctx.x_shape, ctx.cl = g, list(x.shape), is_channels_last(x)
        ctx.opts = (count_include_pad, divisor_override)
        return _engine.avg_pool(TORCH, g, x, count_include_pad, divisor_override)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, dy):
        dx = _engine.avg_pool_backward(TORCH, ctx.g, dy, ctx.x_shape, ctx.cl, *ctx.opts)
        return dx, None, None, None


def _saving_input(run, run_backward):
    """An autograd Function over run(kind, g, x, *opts) whose backward is run_backward(kind, g, dy, x, *opts)."""
    class Pool(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, g, *opts):
            x = x.detach()
            ctx.g, ctx.opts = g, opts
            ctx.save_for_backward(x)
            return run(TORCH, g, x, *opts)

        @staticmethod
        @torch.autograd.function.once_differentiable
        def backward(ctx, dy):
            (x,) = ctx.saved_tensors
            return (run_backward(TORCH, ctx.g, dy, x, *ctx.opts), None) + (None,) * len(ctx.opts)
    return Pool


LpPool = _saving_input(_engine.lp_pool, _engine.lp_pool_backward)  # opts: norm_type, convention
StochasticPool = _saving_input(_engine.stochastic_pool, _engine.stochastic_pool_backward)  # opts: training, seed


class MixedPool(torch.autograd.Function):
    """lambda_ may be a float or a 0-d tensor (then it gets a gradient too)."""

    @staticmethod
    def forward(ctx, x, lambda_, g, count_include_pad, divisor_override):
        x = x.detach()
        lam = float(lambda_)
        ctx.g, ctx.opts = g, (lam, count_include_pad, divisor_override)
        ctx.lambda_is_tensor = isinstance(lambda_, torch.Tensor)
        ctx.save_for_backward(x)
        return _engine.mixed_pool(TORCH, g, x, lam, count_include_pad, divisor_override)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, dy):
        (x,) = ctx.saved_tensors
        dx, dl = _engine.mixed_pool_backward(TORCH, ctx.g, dy, x, *ctx.opts)
        dlam = torch.tensor(dl, dtype=x.dtype, device=x.device) if ctx.lambda_is_tensor else None
        return dx, dlam, None, None, None


class MaxUnpool(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, indices, out_spatial):
        x, indices = x.detach(), indices.detach()
        ctx.save_for_backward(indices)
        return _engine.max_unpool(TORCH, x, indices, out_spatial)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, dy):
        (indices,) = ctx.saved_tensors
        return _engine.max_unpool_backward(TORCH, dy, indices), None, None


def _g(x, recipe):
    return build_geometry(recipe, spatial_size(x))


def max_pool(x, recipe, return_indices):
    return MaxPool.apply(x, _g(x, recipe), bool(return_indices), needs_grad(x))


def fractional_max_pool(x, recipe, samples, return_indices):
    return FractionalMaxPool.apply(x, _g(x, recipe), samples, bool(return_indices), needs_grad(x))


def avg_pool(x, recipe, count_include_pad, divisor_override):
    return AvgPool.apply(x, _g(x, recipe), count_include_pad, divisor_override)


def lp_pool(x, recipe, norm_type, convention):
    return LpPool.apply(x, _g(x, recipe), float(norm_type), convention)


def stochastic_pool(x, recipe, training, seed):
    return StochasticPool.apply(x, _g(x, recipe), bool(training), int(seed))


def mixed_pool(x, lambda_, recipe, count_include_pad, divisor_override):
    return MixedPool.apply(x, lambda_, _g(x, recipe), count_include_pad, divisor_override)


def max_unpool(x, indices, kernel_size, stride, padding, output_size):
    return MaxUnpool.apply(x, indices, unpool_size(x, kernel_size, stride, padding, output_size))
