"""The linear maps of poolkit's pools as JAX primitives, in pairs, each the other's transpose: a tangent goes
through the map itself (forward mode: jvp, jacfwd), a cotangent through its transpose (reverse mode, poolkit's
backward kernels), and a second derivative through the pair again (hessian, grad of grad); vmap joins the mapped
axis to the leading batch axis, as the FFI calls do. Each map is linear in its first operand; the others (indices)
carry no derivative. A custom_vjp could not be differentiated in forward mode, nor transposed."""
import dataclasses

import jax
from jax.extend.core import Primitive
from jax.interpreters import ad, batching, mlir

from ._spec import Spec


def _with_batch(param, size):
    """A shape parameter (a Spec, or a shape tuple) with a leading batch axis of `size` more."""
    if isinstance(param, Spec):
        return dataclasses.replace(param, in_shape=(size,) + param.in_shape)
    return (size,) + tuple(param)


def _primitive(name, impl, result):
    """impl(t, *rest, **params): the map's value; result(**params): its ShapeDtypeStruct."""
    p = Primitive(name)
    p.def_impl(impl)

    def abstract_eval(t, *rest, **params):
        r = result(**params)
        return t.update(shape=r.shape, dtype=r.dtype)  # (t's sharding and manual axes kept: shard_map)
    p.def_abstract_eval(abstract_eval)
    mlir.register_lowering(p, mlir.lower_fun(impl, multiple_results=False))

    def jvp(primals, tangents, **params):
        out = p.bind(*primals, **params)
        if type(tangents[0]) is ad.Zero or tangents[0].dtype == jax.dtypes.float0:  # (an integer input)
            return out, ad.Zero(jax.typeof(out).to_tangent_aval())
        return out, p.bind(tangents[0], *primals[1:], **params)
    ad.primitive_jvps[p] = jvp

    def batch(args, dims, **params):
        size = next(a.shape[d] for a, d in zip(args, dims) if d is not None)
        args = [batching.bdim_at_front(a, d, size) for a, d in zip(args, dims)]
        return p.bind(*args, **{k: _with_batch(v, size) for k, v in params.items()}), 0
    batching.primitive_batchers[p] = batch
    return p


def linear_pair(name, forward, backward):
    """Two primitives, name and name + '_transpose', from (impl, result) pairs: forward maps a tangent of the
    pool's input to one of its output (or the other way round), backward is its transpose."""
    p, q = _primitive(name, *forward), _primitive(name + "_transpose", *backward)
    for a, b in ((p, q), (q, p)):
        def transpose(ct, t, *rest, _b=b, **params):
            return [None if type(ct) is ad.Zero else _b.bind(ct, *rest, **params)] + [None] * len(rest)
        ad.primitive_transposes[a] = transpose
    return p, q
