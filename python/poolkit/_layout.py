"""Array kinds (NumPy, torch) and layouts: allocation in the input's memory format, unbatched inputs,
channels-last data_format. Nothing here computes an output size."""
import functools
import math

import numpy as np


def _strides_in_elements(x):
    if isinstance(x, np.ndarray):
        return [s // x.itemsize for s in x.strides]
    return list(x.stride())


def is_channels_last(x):
    """True when the channel axis (logical axis 1) is the innermost one, as PyTorch's suggested memory format."""
    shape, st = list(x.shape), _strides_in_elements(x)
    if len(shape) < 3 or shape[1] <= 1:
        return False
    spatial = [abs(st[i]) for i in range(2, len(shape)) if shape[i] > 1]
    if not spatial:
        return False
    return abs(st[1]) < min(spatial)


# Outputs this large come from poolkit's memory cache (see poolkit/memory.hpp): freed, they are reused for the
# next call of the same size instead of going back to the system and faulting in again.
CACHED_BYTES = 256 << 10


def _physical(shape, channels_last):
    """The shape in memory order: channels innermost when channels_last."""
    if channels_last and len(shape) >= 3:
        return (shape[0],) + shape[2:] + (shape[1],)
    return shape


def layout_strides(shape, channels_last):
    """Element strides of shape laid out contiguously in _physical's order."""
    return _layout_strides(tuple(shape), bool(channels_last))


@functools.lru_cache(maxsize=1024)  # (the same few shapes call after call: 1.5 us each, a small call's 6%)
def _layout_strides(shape, channels_last):
    phys = _physical(shape, channels_last)
    strides, step = [0] * len(phys), 1
    for i in reversed(range(len(phys))):
        strides[i], step = step, step * max(phys[i], 1)
    if channels_last and len(shape) >= 3:
        strides = [strides[0], strides[-1]] + strides[1:-1]
    return tuple(strides)


def _cached_bytes(count, itemsize):
    """Uninitialised bytes (a uint8 NumPy array) for count elements from the memory cache, or None when that is
    too small to be worth caching."""
    from . import _core
    nbytes = count * itemsize
    return _core.empty_bytes(nbytes) if nbytes >= CACHED_BYTES else None


class NumpyKind:
    name = "numpy"

    @staticmethod
    def empty(shape, dtype, channels_last, like=None):
        shape = tuple(int(s) for s in shape)
        phys = _physical(shape, channels_last)
        raw = _cached_bytes(int(np.prod(phys, dtype=np.int64)), np.dtype(dtype).itemsize)
        a = np.empty(phys, dtype=dtype) if raw is None else raw.view(dtype).reshape(phys)
        return np.moveaxis(a, -1, 1) if channels_last and len(shape) >= 3 else a

    @staticmethod
    def dtype(x):
        return x.dtype

    int64 = np.int64
    compact = {"uint8": np.uint8, "int16": np.int16, "int32": np.int32}

    @staticmethod
    def prepare(x, others=()):
        """Readies the core for an operator on x (host memory: nothing to do); the arguments as they are."""
        return others

    @staticmethod
    def host(x):
        return x


_DLPACK_TYPES = {}


def _dlpack_types():
    """torch dtype -> its DLPack (type code, bits)."""
    if not _DLPACK_TYPES:
        import torch
        _DLPACK_TYPES.update({torch.float32: (2, 32), torch.float64: (2, 64), torch.float16: (2, 16),
                              torch.bfloat16: (4, 16), torch.uint8: (1, 8), torch.int8: (0, 8),
                              torch.int16: (0, 16), torch.int32: (0, 32), torch.int64: (0, 64)})
    return _DLPACK_TYPES


class TorchKind:
    name = "torch"

    @staticmethod
    def empty(shape, dtype, channels_last, like=None):
        """On like's device (host memory when like is None); host outputs may come from the memory cache. A tensor
        of its own, not a view: autograd lets a caller modify an operator's output in place only then."""
        import torch
        shape = tuple(map(int, shape))
        strides = layout_strides(shape, channels_last)
        device = like.device if like is not None else torch.device("cpu")
        dlpack = _dlpack_types().get(dtype)
        if device.type == "cpu" and dlpack is not None and math.prod(shape) * dlpack[1] // 8 >= CACHED_BYTES:
            from . import _core
            return _core.empty_tensor(shape, strides, *dlpack)  # one call: it stays quick with cold caches
        return torch.empty_strided(shape, strides, dtype=dtype, device=device)

    @staticmethod
    def prepare(x, others=()):
        """Readies the core for an operator on x and gives back the arguments others: a CUDA tensor's kernels run on
        its device, on PyTorch's current stream there, ordered with the framework's own work. The other CUDA
        tensors of the call must be on that device (the core's views do not say which GPU holds them). Host
        tensors go as DLPack capsules: Tensor.__dlpack__, which the core would call, took 2.3 us a tensor, the
        capsule 0.25 (a 1x8x13x13 adaptive average: 31 -> 26 us a call)."""
        import torch
        if not x.is_cuda:
            from torch.utils.dlpack import to_dlpack
            return tuple(to_dlpack(a) if isinstance(a, torch.Tensor) else a for a in others)
        for t in others:
            if getattr(t, "is_cuda", False) and t.device != x.device:
                raise TypeError(f"poolkit: the tensors of one call must be on one device (got {x.device} and "
                                f"{t.device})")
        from . import _core
        _core.set_cuda_stream(x.device.index, torch.cuda.current_stream(x.device).cuda_stream)
        return others

    @staticmethod
    def host(x):
        """x in host memory (the core reads fractional pooling's samples on the host)."""
        return x.cpu()

    @staticmethod
    def dtype(x):
        return x.dtype

    @property
    def int64(self):
        import torch
        return torch.int64

    @property
    def compact(self):
        import torch
        return {"uint8": torch.uint8, "int16": torch.int16, "int32": torch.int32}


NUMPY = NumpyKind()
TORCH = TorchKind()


def batched(x, spatial_rank, name="input", allow_unbatched=True):
    """Returns (x as (N, C, spatial...), whether a batch axis was added). Unbatched (C, spatial...) inputs are
    accepted as PyTorch accepts them."""
    nd = x.ndim
    if nd == spatial_rank + 2:
        return x, False
    if allow_unbatched and nd == spatial_rank + 1:
        return x[None], True
    want = f"{spatial_rank + 1}-D (unbatched) or {spatial_rank + 2}-D (batched)" if allow_unbatched else \
        f"{spatial_rank + 2}-D (batched)"
    raise ValueError(f"poolkit: {name}: must be {want} for {spatial_rank}-d pooling (got shape {tuple(x.shape)})")


def require_nonempty(x, name="input"):
    """PyTorch's rule for pooling inputs: only the batch dimension may be 0 (adaptive average pooling in 1-D and
    2-D excepted, whose callers skip this)."""
    if 0 in x.shape[1:]:
        raise ValueError(f"poolkit: {name}: every dimension but the batch must be non-zero, as in PyTorch "
                         f"(got shape {tuple(x.shape)})")


def unbatch(y, added):
    return y[0] if added else y


def from_data_format(x, data_format):
    """A channels-first logical view of x given in data_format (no copy)."""
    if data_format == "channels_first":
        return x
    if data_format == "channels_last":
        return np.moveaxis(x, -1, 1) if isinstance(x, np.ndarray) else x.movedim(-1, 1)
    raise ValueError(f"poolkit: data_format: must be 'channels_first' or 'channels_last' (got {data_format!r})")


def to_data_format(y, data_format):
    if data_format == "channels_last":
        return np.moveaxis(y, 1, -1) if isinstance(y, np.ndarray) else y.movedim(1, -1)
    return y
