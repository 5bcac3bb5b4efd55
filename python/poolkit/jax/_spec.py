"""What one pooling call asks for, as the FFI attributes and the core geometry (poolkit's builders give the sizes)."""
import dataclasses
import operator

import jax
import numpy as np

from .. import _core
from . import _ffi


@dataclasses.dataclass(frozen=True)
class Spec:
    """A hashable description of a pooling call on inputs of shape `in_shape` (batch..., spatial..., C) or, with
    channels_last False, (batch..., C, spatial...). `options` are (name, value) pairs for the operator."""
    in_shape: tuple
    dtype: str
    rank: int
    channels_last: bool
    geometry: str                # 'window', 'adaptive' or 'global'
    kernel: tuple = ()
    strides: tuple = ()
    pads: tuple = ()             # begins, then ends
    auto_pad: str = "NOTSET"
    output_size: tuple = ()
    options: tuple = ()

    def spatial_axes(self):
        n = len(self.in_shape)
        return list(range(n - self.rank - 1, n - 1)) if self.channels_last else list(range(n - self.rank, n))

    def core_geometry(self):
        in_size = [self.in_shape[a] for a in self.spatial_axes()]
        if self.geometry == "window":
            return _core.onnx_geometry(in_size, list(self.kernel), list(self.strides), [], list(self.pads),
                                       self.auto_pad, False)
        if self.geometry == "adaptive":
            return _core.adaptive_geometry(in_size, list(self.output_size))
        return _core.global_geometry(in_size)

    def out_shape(self):
        shape = list(self.in_shape)
        for a, s in zip(self.spatial_axes(), self.core_geometry().output_size()):
            shape[a] = s
        return tuple(shape)

    def out(self, dtype=None):
        return jax.ShapeDtypeStruct(self.out_shape(), np.dtype(dtype or self.dtype))

    def argmax(self):
        """The compact window-local argmax: the narrowest integer type the geometry needs."""
        return self.out(self.core_geometry().local_argmax_dtype())

    def like_input(self):
        return jax.ShapeDtypeStruct(self.in_shape, np.dtype(self.dtype))

    def attrs(self):
        a = dict(rank=self.rank, channels_last=self.channels_last, geometry=self.geometry)
        if self.geometry == "window":
            a.update(kernel=self.kernel, strides=self.strides, pads=self.pads, auto_pad=self.auto_pad, ceil_mode=0)
        elif self.geometry == "adaptive":
            a.update(output_size=self.output_size)
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


def _check_input(x, rank):
    if x.ndim < rank + 2:
        raise ValueError(f"poolkit: inputs: needs a batch axis, {rank} spatial axes and a feature axis "
                         f"(got shape {tuple(x.shape)})")
    if not jax.numpy.issubdtype(x.dtype, jax.numpy.floating):
        raise TypeError(f"poolkit: inputs: dtype must be float32, float64, bfloat16 or float16 (got {x.dtype})")


_PADDING_RULE = "poolkit: padding: must be 'VALID', 'SAME' or one (low, high) pair per window axis ({}) (got {!r})"


def window(x, window_shape, strides, padding, channels_first, options=()):
    """flax.linen's window arguments: strides default to 1; padding 'VALID', 'SAME' or (low, high) pairs."""
    k = _ints(window_shape, "window_shape")
    rank = len(k)
    s = (1,) * rank if strides is None else _ints(strides, "strides", rank)
    _check_input(x, rank)
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
    return Spec(tuple(x.shape), str(x.dtype), rank, not channels_first, "window", k, s, pads, auto,
                options=tuple(options))


def adaptive(x, output_size, channels_first, options=()):
    rank = len(output_size) if not isinstance(output_size, int) else x.ndim - 2
    out = _ints(output_size, "output_size", rank)
    _check_input(x, rank)
    return Spec(tuple(x.shape), str(x.dtype), rank, not channels_first, "adaptive", output_size=out,
                options=tuple(options))


def global_(x, channels_first, options=()):
    _check_input(x, 1)
    return Spec(tuple(x.shape), str(x.dtype), x.ndim - 2, not channels_first, "global", options=tuple(options))
