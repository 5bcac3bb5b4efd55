"""Kind-generic forward and backward passes on (N, C, spatial...) arrays: allocate the outputs in the input's
layout with the array's own library, then call the C++ operator (which writes them in place)."""
from . import _core
from ._layout import is_channels_last
from ._types import check_dtype


def out_shape(g, x):
    return [int(x.shape[0]), int(x.shape[1])] + list(g.output_size())


def _alloc_like_output(kind, g, x, dtype=None):
    return kind.empty(out_shape(g, x), x.dtype if dtype is None else dtype, is_channels_last(x), x)


def _grad_input(kind, x_shape, dtype, channels_last, like):
    return kind.empty(x_shape, dtype, channels_last, like)


def _run(kind, like, op, *args):
    """The core's op on arrays on like's device (kind.prepare: the other arrays on it too, a CUDA tensor's device
    and stream; the arrays as the core takes them quickest)."""
    return op(*kind.prepare(like, args))


def index_buffer(kind, g, x, form):
    """form: None (no indices), 'int64' (PyTorch's flat indices) or 'compact' (window-local, narrowest type)."""
    if form is None:
        return None
    dtype = kind.int64 if form == "int64" else kind.compact[g.local_argmax_dtype()]
    return _alloc_like_output(kind, g, x, dtype)


def max_pool(kind, g, x, form):
    check_dtype("max_pool", input=x)
    y = _alloc_like_output(kind, g, x)
    am = index_buffer(kind, g, x, form)
    _run(kind, x, _core.max_pool_forward, g, x, y, am)
    return y, am


def max_pool_backward(kind, g, dy, am, x, x_shape=None, channels_last=None):
    check_dtype("max_pool", grad_output=dy, input=x)
    ref = x if x is not None else dy
    shape = list(x.shape) if x is not None else x_shape
    cl = is_channels_last(ref) if channels_last is None else channels_last
    dx = _grad_input(kind, shape, dy.dtype, cl, dy)
    _run(kind, dy, _core.max_pool_backward, g, dy, am, x, dx)
    return dx


def avg_pool(kind, g, x, count_include_pad, divisor_override):
    check_dtype("avg_pool", input=x)
    y = _alloc_like_output(kind, g, x)
    _run(kind, x, _core.avg_pool_forward, g, bool(count_include_pad), divisor_override, x, y)
    return y


def avg_pool_backward(kind, g, dy, x_shape, channels_last, count_include_pad, divisor_override):
    check_dtype("avg_pool", grad_output=dy)
    dx = _grad_input(kind, x_shape, dy.dtype, channels_last, dy)
    _run(kind, dy, _core.avg_pool_backward, g, bool(count_include_pad), divisor_override, dy, dx)
    return dx


def lp_pool(kind, g, x, norm_type, convention):
    check_dtype("lp_pool", input=x)
    y = _alloc_like_output(kind, g, x)
    _run(kind, x, _core.lp_pool_forward, g, float(norm_type), convention, x, y)
    return y


def lp_pool_backward(kind, g, dy, x, norm_type, convention):
    check_dtype("lp_pool", grad_output=dy, input=x)
    dx = _grad_input(kind, list(x.shape), dy.dtype, is_channels_last(x), dy)
    _run(kind, dy, _core.lp_pool_backward, g, float(norm_type), convention, dy, x, dx)
    return dx


def mixed_pool(kind, g, x, lambda_, count_include_pad, divisor_override):
    check_dtype("mixed_pool", input=x)
    y = _alloc_like_output(kind, g, x)
    _run(kind, x, _core.mixed_pool_forward, g, float(lambda_), bool(count_include_pad), divisor_override, x, y)
    return y


def mixed_pool_backward(kind, g, dy, x, lambda_, count_include_pad, divisor_override):
    check_dtype("mixed_pool", grad_output=dy, input=x)
    dx = _grad_input(kind, list(x.shape), dy.dtype, is_channels_last(x), dy)
    dlambda = _run(kind, dy, _core.mixed_pool_backward, g, float(lambda_), bool(count_include_pad),
                   divisor_override, dy, x, dx)
    return dx, dlambda


def stochastic_pool(kind, g, x, training, seed):
    check_dtype("stochastic_pool", input=x)
    y = _alloc_like_output(kind, g, x)
    _run(kind, x, _core.stochastic_pool_forward, g, bool(training), int(seed), x, y)
    return y


def stochastic_pool_backward(kind, g, dy, x, training, seed):
    check_dtype("stochastic_pool", grad_output=dy, input=x)
    dx = _grad_input(kind, list(x.shape), dy.dtype, is_channels_last(x), dy)
    _run(kind, dy, _core.stochastic_pool_backward, g, bool(training), int(seed), dy, x, dx)
    return dx


def fractional_max_pool(kind, g, samples, x, form):
    check_dtype("fractional_max_pool", input=x)
    y = _alloc_like_output(kind, g, x)
    am = index_buffer(kind, g, x, form)
    _run(kind, x, _core.fractional_max_pool_forward, g, kind.host(samples), x, y, am)
    return y, am


def fractional_max_pool_backward(kind, g, samples, dy, am, x, x_shape=None, channels_last=None):
    check_dtype("fractional_max_pool", grad_output=dy, input=x)
    shape = list(x.shape) if x is not None else x_shape
    cl = is_channels_last(x if x is not None else dy) if channels_last is None else channels_last
    dx = _grad_input(kind, shape, dy.dtype, cl, dy)
    _run(kind, dy, _core.fractional_max_pool_backward, g, kind.host(samples), dy, am, x, dx)
    return dx


def max_unpool(kind, x, indices, out_spatial):
    check_dtype("max_unpool", input=x)
    y = kind.empty([int(x.shape[0]), int(x.shape[1])] + list(out_spatial), x.dtype, is_channels_last(x), x)
    if 0 not in out_spatial:  # an output size of 0: an empty output, as PyTorch (whose indices are then not read)
        _run(kind, x, _core.max_unpool_forward, x, indices, y)
    return y


def max_unpool_backward(kind, dy, indices):
    check_dtype("max_unpool", grad_output=dy)
    dx = kind.empty(list(indices.shape), dy.dtype, is_channels_last(dy), dy)
    if any(int(d) == 0 for d in dy.shape[2:]):
        dx[...] = 0  # the empty output depends on no input
    else:
        _run(kind, dy, _core.max_unpool_backward, dy, indices, dx)
    return dx
