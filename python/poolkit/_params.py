"""Argument checks and the choice of the C++ geometry builder for each way of stating padding."""
import operator
from itertools import chain

from . import _core


def int_list(v, name, allow_none=False):
    """An int or a sequence of ints as a list (the C++ builders expand one value to every axis)."""
    if v is None:
        if allow_none:
            return []
        raise TypeError(f"poolkit: {name}: must be an int or a sequence of ints (got None)")
    if isinstance(v, bool):
        raise TypeError(f"poolkit: {name}: must be an int or a sequence of ints (got bool)")
    if isinstance(v, (tuple, list)):  # checked first: torch.compile traces this, try/except trips it
        items = v
    else:
        try:
            return [operator.index(v)]
        except TypeError:
            pass
        try:
            items = list(v)
        except TypeError:
            raise TypeError(f"poolkit: {name}: must be an int or a sequence of ints "
                            f"(got {type(v).__name__})") from None
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
    return list(map(int, x.shape[2:]))  # (map, not a comprehension: no frame of its own on every call)


_ONNX_AUTO_PAD = ("SAME_UPPER", "SAME_LOWER", "VALID", "NOTSET")


def window_geometry(x, kernel_size, stride, padding, dilation, ceil_mode):
    """The geometry of a sliding-window pool of (N, C, spatial...) x; see window_recipe for padding's forms."""
    in_size = spatial_size(x)
    return build_geometry(window_recipe(len(in_size), kernel_size, stride, padding, dilation, ceil_mode), in_size)


def window_recipe(rank, kernel_size, stride, padding, dilation, ceil_mode):
    """How to build the geometry of a sliding-window pool over `rank` spatial axes (see build_geometry); pure
    Python, so that torch.compile can trace it. padding may be:
    an int or one int per axis (PyTorch: symmetric, at most half the kernel);
    'valid' or 'same' (Keras; 'same' puts the odd cell at the end);
    'SAME_UPPER', 'SAME_LOWER', 'VALID' (ONNX auto_pad, dilation allowed);
    one (begin, end) pair per axis (explicit per-side padding, as ONNX pads)."""
    k = int_list(kernel_size, "kernel_size")
    s = int_list(stride, "stride", allow_none=True)
    d = int_list(dilation, "dilation")
    if isinstance(padding, str):
        if padding in ("valid", "same"):
            if any(v != 1 for v in d):
                raise ValueError("poolkit: dilation: must be 1 with padding='valid' or 'same' (use 'SAME_UPPER')")
            if ceil_mode:
                raise ValueError("poolkit: ceil_mode: must be False with padding='valid' or 'same'")
            return ("keras", (k, s), (), padding, False)
        if padding in _ONNX_AUTO_PAD:
            return ("onnx", (_per_axis(k, rank, "kernel_size"), s or k, d, []), (), padding, bool(ceil_mode))
        raise ValueError(f"poolkit: padding: must be an int, per-axis ints, (begin, end) pairs, 'valid', 'same', "
                         f"'SAME_UPPER', 'SAME_LOWER' or 'VALID' (got {padding!r})")
    pairs = _pairs(padding)
    if pairs is not None:
        if len(pairs) != rank:
            raise ValueError(f"poolkit: padding: needs one (begin, end) pair per spatial axis ({rank}), "
                             f"got {len(pairs)}")
        pads = [p[0] for p in pairs] + [p[1] for p in pairs]
        return ("onnx", (_per_axis(k, rank, "kernel_size"), s or k, d, pads), (), "NOTSET", bool(ceil_mode))
    return ("torch", (k, s, int_list(padding, "padding"), d), (), "", bool(ceil_mode))


def adaptive_recipe(output_size, in_size):
    return ("adaptive", (output_size_list(output_size, in_size),), (), "", False)


GLOBAL_RECIPE = ("global", (), (), "", False)


def fractional_recipe(kernel_size, output_size, output_ratio, in_size, in_float, scalar_ratio=True):
    """in_float: the input is not float64 (PyTorch computes the window sequence in the input's type).
    scalar_ratio: a single number is taken as output_ratio (else one per axis is required)."""
    k = int_list(kernel_size, "kernel_size")
    if output_size is None and output_ratio is None:
        raise ValueError("poolkit: output_size: fractional max pooling needs output_size or output_ratio")
    if output_size is not None:
        return ("fractional", (output_size_list(output_size, in_size), k), (), "", bool(in_float))
    if isinstance(output_ratio, (tuple, list)):
        ratio = [float(v) for v in output_ratio]
    elif not scalar_ratio and not hasattr(output_ratio, "__len__"):
        raise TypeError("poolkit: output_ratio: must have one entry per spatial axis (this PyTorch's "
                        "fractional_max_pool2d takes no single number)")
    else:
        try:
            ratio = [float(output_ratio)]
        except TypeError:
            ratio = [float(v) for v in output_ratio]
    return ("fractional", ([], k), ratio, "", bool(in_float))


def flat_recipe(recipe):
    """A recipe (builder, int lists, floats, text, flag) flattened: builder, ints (the lists end to end), lens
    (their lengths), reals, text, flag; as torch operators' schemas carry it and the C++ builder takes it."""
    builder, lists, reals, text, flag = recipe
    return builder, list(chain.from_iterable(lists)), list(map(len, lists)), list(map(float, reals)), text, bool(flag)


def build_geometry(recipe, in_size):
    """The C++ geometry a recipe (builder, int lists, floats, text, flag) describes, for spatial size in_size."""
    return _core.recipe_geometry(*flat_recipe(recipe), in_size)


def kernel_cells(kernel_size, rank):
    """The number of taps of a window of kernel_size (an int or one per axis) over rank axes."""
    n = 1
    for k in _per_axis(int_list(kernel_size, "kernel_size"), rank, "kernel_size"):
        n *= k
    return n


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
    if not isinstance(padding, (tuple, list)):  # isinstance, not try/except: torch.compile traces this
        return None
    items = list(padding)
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
    if not isinstance(output_size, (tuple, list)):
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
