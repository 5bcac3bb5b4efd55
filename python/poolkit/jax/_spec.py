"""What one pooling call asks for, as the FFI attributes and the core geometry (poolkit's builders give the sizes)."""
import dataclasses
import operator

import jax
import numpy as np

from .. import _core
from .._types import _listed
from . import _ffi


@dataclasses.dataclass(frozen=True)
class Spec:
    """A hashable description of a pooling call on inputs of shape `in_shape` (batch..., spatial..., C) or, with
    channels_last False, (batch..., C, spatial...). `geometry` names the core's builder ('window': ONNX-style,
    'torch', 'adaptive', 'global', 'fractional') and `params` its (name, value) arguments; `options` are
    (name, value) pairs for the operator."""
    in_shape: tuple
    dtype: str
    rank: int
    channels_last: bool
    geometry: str
    params: tuple = ()
    options: tuple = ()

    def spatial_axes(self):
        n = len(self.in_shape)
        return list(range(n - self.rank - 1, n - 1)) if self.channels_last else list(range(n - self.rank, n))

    def core_geometry(self):
        in_size = [self.in_shape[a] for a in self.spatial_axes()]
        p = {k: list(v) if isinstance(v, tuple) else v for k, v in self.params}
        if self.geometry == "window":
            return _core.onnx_geometry(in_size, p["kernel"], p["strides"], [], p["pads"], p["auto_pad"], False)
        if self.geometry == "torch":
            return _core.torch_geometry(in_size, p["kernel"], p["strides"], p["pads"], p["dilation"],
                                        bool(p["ceil_mode"]))
        if self.geometry == "adaptive":
            return _core.adaptive_geometry(in_size, p["output_size"])
        if self.geometry == "fractional":
            return _core.fractional_geometry(in_size, p["output_size"], p["kernel"], bool(p["in_float"]))
        return _core.global_geometry(in_size)

    def out_shape(self):
        shape = list(self.in_shape)
        for a, s in zip(self.spatial_axes(), self.core_geometry().output_size()):
            shape[a] = s
        return tuple(shape)

    def out(self, dtype=None):
        return jax.ShapeDtypeStruct(self.out_shape(), np.dtype(dtype or self.dtype))

    def argmax(self, int64_indices=False):
        """The compact window-local argmax (the narrowest integer type the geometry needs), or with int64_indices
        PyTorch's flat index in the (n, c) input plane."""
        return self.out("int64" if int64_indices else self.core_geometry().local_argmax_dtype())

    def like_input(self):
        return jax.ShapeDtypeStruct(self.in_shape, np.dtype(self.dtype))

    def attrs(self):
        a = dict(rank=self.rank, channels_last=self.channels_last, geometry=self.geometry, ceil_mode=0)
        a.update(self.params)
        a.update(self.options)
        return {k: _ffi.attr(v) for k, v in a.items()}


def _ints(v, name, rank=None):
    if isinstance(v, (bool, np.bool_)):
        raise TypeError(f"poolkit: {name}: must be ints (got bool)")
    try:
        t = (operator.index(v),) * (rank or 1)
    except TypeError:
        try:
            t = tuple(operator.index(e) for e in v)
        except TypeError:
            raise TypeError(f"poolkit: {name}: must be an int or a sequence of ints (got {v!r})") from None
    if rank is not None and len(t) != rank:
        raise ValueError(f"poolkit: {name}: must have {rank} entries, one per window axis (got {len(t)})")
    return t


FLOATS = ("float32", "float64", "bfloat16", "float16")
INTEGERS = tuple(np.dtype(t) for t in ("uint8", "int8", "int16", "int32", "int64"))  # as reduce_window's max
INT64 = (np.dtype("int64"),)  # PyTorch's avg_pool*d: int64 alone, divided with truncation
_FLOAT32_SEQUENCE = tuple(np.dtype(t) for t in ("float32", "float16", jax.numpy.bfloat16))


def _check_input(x, rank, integers=()):
    """integers: the integer types the operator takes besides the floating ones."""
    if x.ndim < rank + 2:
        raise ValueError(f"poolkit: inputs: needs a batch axis, {rank} spatial axes and a feature axis "
                         f"(got shape {tuple(x.shape)})")
    if jax.numpy.issubdtype(x.dtype, jax.numpy.floating) or x.dtype in integers:
        return
    hint = "" if integers else ("; of the integer types max pooling, max-unpooling and avg_pool take uint8 ... "
                                "int64, the PyTorch-named avg_pool1d/2d/3d int64")
    raise TypeError(f"poolkit: inputs: dtype must be {_listed(FLOATS + tuple(map(str, integers)))} "
                    f"(got {x.dtype}){hint}")


_PADDING_RULE = "poolkit: padding: must be 'VALID', 'SAME' or one (low, high) pair per window axis ({}) (got {!r})"


def _spec(x, rank, channels_first, geometry, params, options, integers):
    _check_input(x, rank, integers)
    return Spec(tuple(x.shape), str(x.dtype), rank, not channels_first, geometry, tuple(params), tuple(options))


def window(x, window_shape, strides, padding, channels_first, options=(), integers=()):
    """flax.linen's window arguments: strides default to 1; padding 'VALID', 'SAME' or (low, high) pairs."""
    k = _ints(window_shape, "window_shape")
    rank = len(k)
    s = (1,) * rank if strides is None else _ints(strides, "strides", rank)
    if isinstance(padding, str):
        auto = {"VALID": "VALID", "SAME": "SAME_UPPER"}.get(padding.upper())
        if auto is None:
            raise ValueError(_PADDING_RULE.format(rank, padding))
        pads = (0,) * (2 * rank)
    else:
        pairs = [tuple(_ints(p, "padding")) for p in padding]
        if len(pairs) != rank or any(len(p) != 2 for p in pairs):
            raise ValueError(_PADDING_RULE.format(rank, padding))
        auto, pads = "NOTSET", tuple(p[0] for p in pairs) + tuple(p[1] for p in pairs)
    return _spec(x, rank, channels_first, "window", [("kernel", k), ("strides", s), ("pads", pads),
                                                     ("auto_pad", auto)], options, integers)


def torch_window(x, rank, kernel_size, stride, padding, dilation, ceil_mode, options=(), integers=()):
    """PyTorch's window arguments over (N, C, spatial...): stride defaults to kernel_size, symmetric padding."""
    k = _ints(kernel_size, "kernel_size", rank)
    s = k if stride is None or (not isinstance(stride, int) and len(stride) == 0) else _ints(stride, "stride", rank)
    return _spec(x, rank, True, "torch", [("kernel", k), ("strides", s), ("pads", _ints(padding, "padding", rank)),
                                          ("dilation", _ints(dilation, "dilation", rank)),
                                          ("ceil_mode", bool(ceil_mode))], options, integers)


def _output_size(output_size, rank, in_size):
    """PyTorch's adaptive output_size: an int or one entry per axis, None meaning 'as the input'."""
    if isinstance(output_size, (tuple, list)):
        if len(output_size) != rank:
            raise ValueError(f"poolkit: output_size: must have {rank} entries (got {len(output_size)})")
        output_size = [s if o is None else o for o, s in zip(output_size, in_size)]
    return _ints(output_size, "output_size", rank)


def adaptive(x, output_size, channels_first, options=(), integers=(), rank=None):
    rank = rank or (len(output_size) if not isinstance(output_size, int) else x.ndim - 2)
    in_size = x.shape[-rank:] if channels_first else x.shape[-rank - 1:-1]
    return _spec(x, rank, channels_first, "adaptive", [("output_size", _output_size(output_size, rank, in_size))],
                 options, integers)


def global_(x, channels_first, options=(), integers=()):
    _check_input(x, 1, integers)  # at least one spatial axis
    return _spec(x, x.ndim - 2, channels_first, "global", [], options, integers)


def fractional(x, rank, kernel, output_size, output_ratio, channels_first):
    """Fractional max pooling: output_size, or output_ratio (int(in * ratio) per axis). PyTorch computes the
    window sequence in float32 for float32/float16/bfloat16 inputs, in float64 for the others (integers too)."""
    _check_input(x, rank, INTEGERS)  # before the sizes are read
    in_size = list(x.shape[-rank:] if channels_first else x.shape[-rank - 1:-1])
    k = _ints(kernel, "kernel_size", rank)
    if (output_size is None) == (output_ratio is None):
        raise ValueError("poolkit: output_size: fractional max pooling needs output_size or output_ratio (one)")
    if output_size is None:
        ratio = [float(r) for r in (output_ratio if hasattr(output_ratio, "__len__") else [output_ratio] * rank)]
        output_size = _core.fractional_output_size(in_size, ratio, list(k))
    out = _output_size(output_size, rank, in_size)
    return _spec(x, rank, channels_first, "fractional", [("output_size", out), ("kernel", k),
                                                         ("in_float", x.dtype in _FLOAT32_SEQUENCE)], (), INTEGERS)
