"""Argument checks and the choice of the C++ geometry builder for each way of stating padding."""
import operator

from . import _core


def int_list(v, name, allow_none=False):
    """An int or a sequence of ints as a list (the C++ builders expand one value to every axis)."""
    if v is None:
        if allow_none:
            return []
        raise TypeError(f"poolkit: {name}: must be an int or a sequence of ints (got None)")
    if isinstance(v, bool):
        raise TypeError(f"poolkit: {name}: must be an int or a sequence of ints (got bool)")
    try:
        return [operator.index(v)]
    except TypeError:
        pass
    try:
        items = list(v)
    except TypeError:
        raise TypeError(f"poolkit: {name}: must be an int or a sequence of ints (got {type(v).__name__})") from None
    out = []
    for e in items:
        if isinstance(e, bool):
            raise TypeError(f"poolkit: {name}: entries must be ints (got bool)")
        try:
            out.append(operator.index(e))
        except TypeError:
            raise TypeError(f"poolkit: {name}: entries must be ints (got {type(e).__name__})") from None
    return out


def spatial_size(x):
    return [int(s) for s in x.shape[2:]]


_ONNX_AUTO_PAD = ("SAME_UPPER", "SAME_LOWER", "VALID", "NOTSET")


def window_geometry(x, kernel_size, stride, padding, dilation, ceil_mode):
    """The geometry of a sliding-window pool. padding may be:
    an int or one int per axis (PyTorch: symmetric, at most half the effective kernel);
    'valid' or 'same' (Keras; 'same' puts the odd cell at the end);
    'SAME_UPPER', 'SAME_LOWER', 'VALID' (ONNX auto_pad, dilation allowed);
    one (begin, end) pair per axis (explicit per-side padding, as ONNX pads)."""
    in_size = spatial_size(x)
    rank = len(in_size)
    k = int_list(kernel_size, "kernel_size")
    s = int_list(stride, "stride", allow_none=True)
    d = int_list(dilation, "dilation")
    if isinstance(padding, str):
        if padding in ("valid", "same"):
            if any(v != 1 for v in d):
                raise ValueError("poolkit: dilation: must be 1 with padding='valid' or 'same' (use 'SAME_UPPER')")
            if ceil_mode:
                raise ValueError("poolkit: ceil_mode: must be False with padding='valid' or 'same'")
            return _core.keras_geometry(in_size, k, s, padding)
        if padding in _ONNX_AUTO_PAD:
            return _core.onnx_geometry(in_size, _per_axis(k, rank, "kernel_size"), s or k, d, [], padding,
                                       bool(ceil_mode))
        raise ValueError(f"poolkit: padding: must be an int, per-axis ints, (begin, end) pairs, 'valid', 'same', "
                         f"'SAME_UPPER', 'SAME_LOWER' or 'VALID' (got {padding!r})")
    pairs = _pairs(padding)
    if pairs is not None:
        if len(pairs) != rank:
            raise ValueError(f"poolkit: padding: needs one (begin, end) pair per spatial axis ({rank}), "
                             f"got {len(pairs)}")
        pads = [p[0] for p in pairs] + [p[1] for p in pairs]
        return _core.onnx_geometry(in_size, _per_axis(k, rank, "kernel_size"), s or k, d, pads, "NOTSET",
                                   bool(ceil_mode))
    return _core.torch_geometry(in_size, k, s, int_list(padding, "padding"), d, bool(ceil_mode))


def check_convention(convention):
    if convention not in ("torch", "onnx"):
        raise ValueError(f"poolkit: convention: must be 'torch' or 'onnx' (got {convention!r})")


def sum_pool_dilation(dilation, convention, op):
    """Average and Lp pooling take a dilation under ONNX's conventions only: PyTorch's avg_pool and lp_pool have
    none, so the torch convention keeps refusing it."""
    check_convention(convention)
    d = int_list(dilation, "dilation")
    if convention != "onnx" and any(v != 1 for v in d):
        raise ValueError(f"poolkit: dilation: {op} takes a dilation only with convention='onnx' (PyTorch's has "
                         f"none) (got {dilation!r})")
    return d


def unpool_pads(padding, rank):
    """ONNX MaxUnpool's pads as one (begin, end) pair per axis, from pairs or (symmetric) ints."""
    pairs = _pairs(padding)
    if pairs is None:
        if isinstance(padding, str):
            raise ValueError(f"poolkit: padding: max_unpool takes ints or (begin, end) pairs (got {padding!r})")
        pairs = [(p, p) for p in _per_axis(int_list(padding, "padding"), rank, "padding")]
    if len(pairs) != rank or any(v < 0 for pair in pairs for v in pair):
        raise ValueError(f"poolkit: padding: needs {rank} (begin, end) pairs of values >= 0 (got {padding!r})")
    return pairs


def _per_axis(v, rank, name):
    if len(v) == 1:
        return v * rank
    if len(v) != rank:
        raise ValueError(f"poolkit: {name}: must have 1 or {rank} entries (got {len(v)})")
    return v


def _pairs(padding):
    """padding as a list of (begin, end) pairs, or None when it is not given that way."""
    if isinstance(padding, (str, bytes)):
        return None
    try:
        items = list(padding)
    except TypeError:
        return None
    if not items or not all(isinstance(e, (tuple, list)) for e in items):
        return None
    out = []
    for e in items:
        if len(e) != 2:
            raise ValueError(f"poolkit: padding: per-side padding takes (begin, end) pairs (got {tuple(e)})")
        out.append(int_list(list(e), "padding"))
    return [(p[0], p[1]) for p in out]


def output_size_list(output_size, in_size, name="output_size"):
    """Adaptive output size: an int or per-axis entries, None meaning 'as the input' (as PyTorch)."""
    rank = len(in_size)
    if output_size is None:
        raise TypeError(f"poolkit: {name}: must be given")
    try:
        return [operator.index(output_size)] * rank
    except TypeError:
        pass
    items = list(output_size)
    if len(items) != rank:
        raise ValueError(f"poolkit: {name}: must have {rank} entries (got {len(items)})")
    return [in_size[i] if e is None else operator.index(e) for i, e in enumerate(items)]


def check_avg_pool3d_input(x, kernel_size):
    """PyTorch's avg_pool3d (unlike every other pool) refuses an input smaller than the kernel on any axis, padding
    or not; poolkit's avg_pool3d follows it."""
    k = int_list(kernel_size, "kernel_size")
    k = k * 3 if len(k) == 1 else k
    size = spatial_size(x)
    if len(k) == 3 and any(s < kk for s, kk in zip(size, k)):
        raise ValueError(f"poolkit: input: avg_pool3d needs every spatial size >= kernel_size {tuple(k)} "
                         f"(got {tuple(size)})")
