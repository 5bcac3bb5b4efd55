"""poolkit: pooling operators with PyTorch-identical results.

The functions here take NumPy arrays (see poolkit.functional); poolkit.torch has the torch.Tensor versions with
autograd and poolkit.torch.nn the modules."""
from . import _core
from .functional import *  # noqa: F401,F403
from .functional import __all__ as _functional_all

__version__ = "0.1.0"
__all__ = list(_functional_all)
