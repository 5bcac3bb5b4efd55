"""poolkit: pooling operators with PyTorch-identical results.

The functions here take NumPy arrays (see poolkit.functional); poolkit.torch has the torch.Tensor versions with
autograd and poolkit.torch.nn the modules."""
from . import _core
from .functional import *  # noqa: F401,F403
from .functional import __all__ as _functional_all
from ._version import __version__  # noqa: F401


def set_cache_limit(nbytes):
    """Bytes of freed output memory poolkit keeps for reuse (default 1 GiB, or POOLKIT_CACHE_MB); 0 turns the
    cache off and frees what it holds."""
    if int(nbytes) < 0:
        raise ValueError(f"poolkit: nbytes: must be >= 0 (got {nbytes})")
    _core.set_cache_limit(int(nbytes))


def cache_limit():
    return _core.cache_limit()


def cached_bytes():
    """Bytes of freed output memory held for reuse now."""
    return _core.cached_bytes()


__all__ = list(_functional_all) + ["set_cache_limit", "cache_limit", "cached_bytes"]
