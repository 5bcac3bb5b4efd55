"""Registers poolkit's XLA FFI handlers (poolkit._jax_ffi) with JAX for the CPU, and calls them."""
import jax
import numpy as np

try:
    from .. import _jax_ffi
except ImportError as e:  # built only where jax's FFI headers were found at configure time
    raise ImportError("poolkit.jax: this poolkit was built without poolkit._jax_ffi (jax was not importable by "
                      "the Python that built it); reinstall poolkit with jax installed") from e

for _name, _capsule in _jax_ffi.registrations().items():
    jax.ffi.register_ffi_target(_name, _capsule, platform="cpu")


def call(target, results, *args, **attrs):
    """One FFI call. vmap folds the mapped axis into the batch: every argument gets it ('broadcast_all') and the
    handlers treat all leading axes as one N. Inside shard_map the results vary over the manual axes as the first
    argument does."""
    a = jax.typeof(args[0])
    if not a.manual_axis_type.empty:
        s = jax.sharding.NamedSharding(a.sharding.mesh, jax.sharding.PartitionSpec())
        one = isinstance(results, jax.ShapeDtypeStruct)
        results = [jax.ShapeDtypeStruct(r.shape, r.dtype, sharding=s, manual_axis_type=a.manual_axis_type)
                   for r in ([results] if one else results)]
        results = results[0] if one else tuple(results)
    return jax.ffi.ffi_call(target, results, vmap_method="broadcast_all")(*args, **attrs)


def attr(v):
    """A Python value as the FFI attribute type the handlers read: int64, float64, int64 arrays, strings."""
    if isinstance(v, str):
        return v
    if isinstance(v, (bool, int, np.integer)):
        return np.int64(v)
    if isinstance(v, float):
        return np.float64(v)
    return np.asarray(v, dtype=np.int64)
