"""Which array types each operator family takes, checked before the C++ layer so that a wrong type gets a
TypeError naming the argument, the type it got and the types it takes. One table for NumPy arrays and torch
tensors alike; outputs always have the input's dtype (nothing is converted)."""
import numpy as np

FLOATING = ("float32", "float64", "float16", "bfloat16")
INTEGER = ("uint8", "int8", "int16", "int32", "int64")

# Operator family (the function of poolkit._engine) -> the dtypes its data arguments (input, grad_output) take.
# Integers: max pooling and max-unpooling (as PyTorch 2 and ONNX), int64 average pooling over fixed windows (as
# PyTorch's avg_pool*d; the core refuses adaptive/global int64 averages). The core refuses integer gradients.
ACCEPTED = {
    "max_pool": FLOATING + INTEGER,
    "avg_pool": FLOATING + ("int64",),
    "lp_pool": FLOATING,
    "mixed_pool": FLOATING,
    "stochastic_pool": FLOATING,
    "fractional_max_pool": FLOATING + INTEGER,
    "max_unpool": FLOATING + INTEGER,
}


def _dtype_name(a):
    """'float32', 'bool', 'complex64', 'object', ... for a NumPy array or a torch tensor."""
    d = a.dtype
    if isinstance(d, np.dtype):
        return d.name
    return str(d).rpartition(".")[2]  # torch.float32 -> float32


def _listed(names):
    return ", ".join(names[:-1]) + " or " + names[-1]


def check_dtype(family, **arrays):
    """Raises TypeError unless each array (NumPy or torch; None: absent), named by its keyword, has a dtype the
    family takes, in native byte order."""
    accepted = ACCEPTED[family]
    for name, a in arrays.items():
        if a is None:
            continue
        got = _dtype_name(a)
        if isinstance(a.dtype, np.dtype) and not a.dtype.isnative:
            raise TypeError(f"poolkit: {name}: must be in native byte order ({_listed(accepted)}); got {got} stored "
                            f"byte-swapped ({a.dtype.str}): convert with .astype({got!r})")
        if got not in accepted:
            raise TypeError(f"poolkit: {name}: {family} takes {_listed(accepted)} (got {got})")


def as_array(x, name):
    """x as a NumPy array without a copy: an ndarray, or anything with __dlpack__. Lists, scalars, strings and None
    are refused rather than converted (np.asarray would pick a dtype the caller did not choose)."""
    if isinstance(x, np.ndarray):
        return x
    if hasattr(x, "__dlpack__"):
        return np.from_dlpack(x)
    raise TypeError(f"poolkit: {name}: must be a NumPy array (numpy.ndarray) or an array with __dlpack__ "
                    f"(got {type(x).__name__})")
