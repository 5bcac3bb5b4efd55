"""poolkit's operators registered with torch.library (namespace poolkit), for a PyTorch that has
torch.library.custom_op: each with a fake kernel (shape, dtype, memory format, without running the kernel) and its
autograd registered through the library, so that torch.compile, torch.export and opcheck see them. The geometry
travels as its recipe (see poolkit._params.build_geometry), flattened into schema types; the C++ geometry is
built inside the kernels. Second derivatives: max, fractional max, average, Lp and unpooling (not mixed and
stochastic pooling); forward derivatives (torch.func.jvp, forward_ad): all but stochastic pooling. poolkit::refuse
carries bad arguments found while torch.compile traces into the compiled graph, which raises eager's error when it
runs. Max and average pooling also have a 'nograd' overload without the
autograd layer, with C++ kernels on host tensors where pip built them (_nograd_overload, _load_cpu_kernels)."""
import ctypes
import functools
import math
import os
import warnings
from typing import Optional

import torch
from torch import Tensor
from torch._subclasses.fake_tensor import UnsupportedOperatorException

from .. import _core, _engine
from .._layout import TORCH, is_channels_last, layout_strides
from .._params import build_geometry, flat_recipe, spatial_size
from ..functional import unpool_size
from ._autograd import index_form, needs_grad

_op = torch.library.custom_op


def _geometry(x, builder, ints, lens, reals, text, flag):
    return _core.recipe_geometry(builder, ints, lens, reals, text, flag, spatial_size(x))


def _fake_empty(shape, dtype, channels_last, like):
    """An output as TORCH.empty lays it out (same strides, like's device), for fake kernels."""
    shape = tuple(int(s) for s in shape)
    return torch.empty_strided(shape, layout_strides(shape, channels_last), dtype=dtype, device=like.device)


def _fake_out(g, x, dtype=None):
    return _fake_empty(_engine.out_shape(g, x), x.dtype if dtype is None else dtype, is_channels_last(x), x)


def _argmax_out(g, x, int64_indices, am, for_grad):
    """A max op's second output: am (fake: None), or an empty argmax where index_form asks for none."""
    if index_form(x, int64_indices, for_grad) is None:
        return x.new_empty(0, dtype=TORCH.compact[g.local_argmax_dtype()])
    if am is None:
        am = _fake_out(g, x, torch.int64 if int64_indices else TORCH.compact[g.local_argmax_dtype()])
    return am


def _fake_grad_input(dy, x):
    return _fake_empty(x.shape, dy.dtype, is_channels_last(x), dy)


def _gather(v, idx):
    """v (N, C, in...) at the flat per-plane indices idx (N, C, out...): the adjoint of scattering to idx."""
    return v.flatten(2).gather(2, idx.flatten(2)).reshape(idx.shape)


def _scatter(v, idx, like):
    """v (N, C, out...) put at the flat per-plane indices idx into zeros shaped like `like` (N, C, in...)."""
    z = v.new_zeros(tuple(like.shape[:2]) + (math.prod(like.shape[2:]),))
    return z.scatter(2, idx.flatten(2), v.flatten(2)).reshape(like.shape)


def _int64_argmax(am, recompute):
    """A max operator's argmax as PyTorch's int64 flat indices: am where it holds those, else recompute()'s (am is a
    compact argmax, or none was kept)."""
    if am.dtype == torch.int64:
        return am
    with torch.no_grad():
        return recompute()


_NONE8 = (None,) * 8


# Bound once: an eager call after a large kernel finds the caches cold, where each attribute looked up costs
# microseconds (bench/torch_small_calls.py).
_is_compiling = torch.compiler.is_compiling
_forward_levels = torch.autograd.forward_ad
_dispatch_modes, _function_mode, _functorch, _tracing_state, _profiling = (
    torch._C._len_torch_dispatch_stack, torch._C._is_torch_function_mode_enabled,
    torch._C._are_functorch_transforms_active, torch._C._get_tracing_state, torch._C._autograd._profiler_enabled)


def _forward_ad():
    """Whether forward-mode AD is on (a torch.autograd.forward_ad.dual_level open): tensors may carry tangents."""
    return _forward_levels._current_level >= 0


def _runs_plain(x):
    """Whether an operator on x may call its kernel without the dispatcher: an eager call that autograd does not
    record, on a plain tensor, with nothing that watches operators (torch.compile, a dispatch or function mode, a
    functorch transform, forward-mode AD, the JIT tracer, the profiler). The operator's layers then add nothing but
    their cost: 0.1-0.3 ms once a large kernel has left the caches cold (bench/RESULTS.md, session 23)."""
    return not (_is_compiling() or type(x) is not Tensor or x.requires_grad or _dispatch_modes()
                or _function_mode() or _functorch() or _forward_levels._current_level >= 0
                or _tracing_state() is not None or _profiling())


_LIB = torch.library.Library("poolkit", "FRAGMENT")


def _nograd_overload(op, fake):
    """op's overload 'nograd': the same schema and kernel without op's autograd layer, for the calls that autograd
    does not record in a compiled graph (_untracked) and plain eager calls (_cpp_plain); on host tensors its kernel
    is C++ where _cpu_kernels.so is loaded (bench/RESULTS.md, session 37). fake: op's fake kernel, its too."""
    schema = str(op._opoverload._schema)
    _LIB.define(f"{op._name}.nograd{schema[schema.index('('):]}")
    _LIB.impl(f"{op._name}.nograd", op._init_fn, "CompositeExplicitAutograd")
    torch.library.register_fake(f"poolkit::{op._name}.nograd", fake)
    return getattr(torch.ops.poolkit, op._name).nograd


def _untracked(x):
    """Whether a call on x takes the nograd overload: torch.compile traces it, autograd records nothing, and no
    functorch transform (torch.func.grad, vmap) sees it. Eager calls keep the default overload (modes and the
    profiler see the same operator as before)."""
    return _is_compiling() and not needs_grad(x) and not _functorch() and not _forward_ad()


def _load_cpu_kernels():
    """Registers the C++ kernels of the nograd overloads (python/src/torch_ops) where pip built them for this very
    PyTorch (their ABI is that version's), unless the environment's POOLKIT_TORCH_CPU_KERNELS is 0; True when
    loaded."""
    if os.environ.get("POOLKIT_TORCH_CPU_KERNELS", "1") == "0":
        return False
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_cpu_kernels.so")
    try:
        with open(os.path.join(os.path.dirname(path), "_cpu_kernels.torch_version")) as f:
            built_for = f.read().strip()
    except OSError:
        return False
    if built_for != torch.__version__:
        return False
    try:
        torch.ops.load_library(path)
    except OSError as e:
        warnings.warn(f"poolkit: {path} not loaded ({e}); compiled calls use the Python kernels")
        return False
    # their large outputs from _core's memory cache, the one poolkit.set_cache_limit governs
    use = ctypes.CDLL(path).poolkit_torch_use_allocator
    use.argtypes, use.restype = [ctypes.c_void_p, ctypes.c_void_p], None
    use(*_core.allocator_functions())
    return True


def _tracing_one_graph():
    """Whether torch.compile's tracer is at work on a graph that may not break (fullgraph=True)."""
    try:
        from torch._dynamo.symbolic_convert import tls
    except ImportError:
        return False
    tx = getattr(tls, "current_tx", None)
    return tx is not None and bool(getattr(tx, "one_graph", False) or getattr(tx, "error_on_graph_break", False))


def _fake_refusing_eagerly(op, placeholder):
    """Registers the decorated function as op's fake kernel. Where it finds the arguments refused, the caller must
    get poolkit's own error, exactly as in eager mode (dynamo would wrap it in its TorchRuntimeError). Under
    torch.compile's default the call is declared untraceable, so it runs eagerly (a graph break on bad input only)
    and raises there; where the graph may not break (fullgraph=True) the trace goes on with placeholder(*args) as
    the output and the operator's real kernel raises the same error when the compiled graph runs."""
    def register(fn):
        def fake(*args):
            try:
                return fn(*args)
            except (ValueError, TypeError, IndexError) as e:
                if _tracing_one_graph():
                    return placeholder(*args)
                raise UnsupportedOperatorException(op._opoverload) from e
        op.register_fake(fake)
        return fake
    return register


def _placeholder_pool(x, *rest):
    return torch.empty_like(x)


def _placeholder_max(x, *rest):
    return torch.empty_like(x), torch.empty_like(x, dtype=torch.int64)


# ---- refusals found while torch.compile traces poolkit.torch's Python --------------------------------------------

_ERRORS = {"ValueError": ValueError, "TypeError": TypeError, "IndexError": IndexError}


@_op("poolkit::refuse", mutates_args=())
def _refuse(x: Tensor, kind: str, message: str) -> Tensor:
    """Raises the error poolkit.torch found in a call's arguments while torch.compile traced it (see
    refusing_in_graph); x: any tensor of the call, for the output's placeholder."""
    raise _ERRORS[kind](message)


@_refuse.register_fake
def _(x, kind, message):
    return torch.empty_like(x)


def refusing_in_graph(fn, returns_pair):
    """fn, whose argument errors reach the caller under torch.compile as in eager mode: dynamo reports an exception
    raised in traced code as its own error where the graph may not break (fullgraph=True), so a refused call traces
    to poolkit::refuse, which raises the same error when the compiled graph runs. returns_pair(args, kwargs): whether
    the call returns (output, indices)."""
    def call(*args, **kwargs):
        if not _is_compiling():
            return fn(*args, **kwargs)
        try:
            return fn(*args, **kwargs)
        except (ValueError, TypeError, IndexError) as e:
            x = args[0] if args and isinstance(args[0], Tensor) else torch.empty(0)
            y = _refuse(x, type(e).__name__, str(e))
            return (y, y) if returns_pair(args, kwargs) else y
    return functools.wraps(fn)(call)


def _fold_vmap(op):
    """Registers op's vmap rule: the mapped axis joins the leading (batch) axis of every tensor argument, each
    (N, C, ...) or empty, and leaves the outputs' again, so that vmap calls op once (pooling is per plane; without a
    rule torch.func.vmap calls it once per mapped index). An argument not mapped is expanded (a copy)."""
    def fold(t, d, b):
        if not isinstance(t, Tensor):
            return t
        t = t.expand(b, *t.shape) if d is None else t.movedim(d, 0)
        return t.reshape(t.shape[0] * t.shape[1], *t.shape[2:])

    def unfold(y, b):
        return y.reshape(b, y.shape[0] // b, *y.shape[1:])

    def rule(info, in_dims, *args):
        b = info.batch_size
        out = op(*(fold(a, d, b) for a, d in zip(args, in_dims)))
        if isinstance(out, tuple):
            return tuple(unfold(y, b) for y in out), (0,) * len(out)
        return unfold(out, b), 0
    op.register_vmap(rule)


class _Packed:
    """A list argument of an operator, one leaf to torch.func: the vmap rule it generates for an autograd.Function
    pairs forward-mode tangents (one per argument) with the arguments' flattened leaves (pytorch 2.15)."""
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


def _unpacked(args):
    return [a.value if type(a) is _Packed else a for a in args]


def _autograd(op, backward=None, setup_context=None, fold_vmap=True, jvp=None):
    """Registers op's backward with torch.library and returns op as poolkit calls it: under a torch.func transform
    (grad, vjp, jacrev, jvp, jacfwd, and vmap over them) or forward-mode AD (torch.autograd.forward_ad) through an
    autograd.Function of the same two functions, in the form those transforms take (they refuse the wrapper that
    torch 2.15's register_autograd generates, which defines no setup_context: pytorch/pytorch#168393, and that
    wrapper has no forward derivative); otherwise op itself (torch.compile, autograd and the dispatcher's tools keep
    seeing the registered operator). Without a backward (the backward of a pool that has no second derivative),
    differentiating op raises, under a transform as without; so does forward mode without jvp. jvp(args, outputs,
    tangents): op's outputs' tangents (None for integer outputs) from its arguments, outputs and the arguments'
    tangents (None where none); "linear": op is linear in its first argument and the others carry no derivative
    (indices, or a tensor read for its shape), so its tangent is op of that argument's. fold_vmap: register
    _fold_vmap's rule (not for pools whose arguments are not all per plane, or that draw random numbers)."""
    if backward:
        op.register_autograd(backward, setup_context=setup_context)
    if fold_vmap:
        _fold_vmap(op)
    no_derivative = f"poolkit::{op._name} has no derivative: the pool it serves has no second one"
    if jvp == "linear":
        def jvp(args, outputs, tangents):
            return None if tangents[0] is None else call(tangents[0], *args[1:])

    class Transformable(torch.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(*args):
            return op(*_unpacked(args))

        @staticmethod
        def setup_context(ctx, inputs, output):
            inputs = _unpacked(inputs)
            ctx.n_inputs = len(inputs)
            if setup_context:
                setup_context(ctx, inputs, output)
            if not _forward_ad():
                return
            # forward mode sees the arguments and outputs again; tensors only through save_for_forward
            ctx.args, ctx.tensor_at = list(inputs), [i for i, a in enumerate(inputs) if isinstance(a, Tensor)]
            for i in ctx.tensor_at:
                ctx.args[i] = None
            ctx.save_for_forward(*(inputs[i] for i in ctx.tensor_at), *(output if isinstance(output, tuple) else
                                                                         (output,)))

        @staticmethod
        def backward(ctx, *grads):
            if not backward:
                raise RuntimeError(no_derivative)
            return backward(ctx, *grads)[:ctx.n_inputs]  # (one per argument given; defaulted ones were not)

        @staticmethod
        def jvp(ctx, *tangents):
            if not jvp:
                raise RuntimeError(no_derivative if not backward else f"poolkit::{op._name} has no forward-mode "
                                   "derivative (torch.func.jvp, jacfwd, torch.autograd.forward_ad)")
            saved, args = ctx.saved_tensors, list(ctx.args)
            for k, i in enumerate(ctx.tensor_at):
                args[i] = saved[k]
            return jvp(args, saved[len(ctx.tensor_at):], tangents)

    def call(*args):
        # (the cheapest tests first: every call autograd records passes here)
        forward = _forward_levels._current_level >= 0  # (a dual level: forward_ad's, or torch.func.jvp's)
        if forward or _functorch():
            if _is_compiling():
                if not forward:
                    return op(*args)  # (vmap and grad: the operator's own rules trace into the graph)
                # torch.compile (2.15) drops the forward-mode tangents of registered operators and of an
                # autograd.Function's jvp without a word: forward mode runs eagerly (fullgraph=True refuses)
                torch._dynamo.graph_break()
            return Transformable.apply(*(_Packed(a) if type(a) is list else a for a in args))
        return op(*args)
    return call


# ---- max pooling (sliding, adaptive, global) ----------------------------------------------------------------------


@_op("poolkit::max_pool", mutates_args=())
def _max_pool(x: Tensor, builder: str, ints: list[int], lens: list[int], reals: list[float], text: str, flag: bool,
              int64_indices: bool, for_grad: bool = True) -> tuple[Tensor, Tensor]:
    """for_grad: keep the compact argmax for a backward (the wrapper passes False where autograd records nothing:
    no grad mode, or x does not require grad; the second output is then empty)."""
    g = _geometry(x, builder, ints, lens, reals, text, flag)
    y, am = _engine.max_pool(TORCH, g, x, index_form(x, int64_indices, for_grad))
    return y, _argmax_out(g, x, int64_indices, am, for_grad)


@_fake_refusing_eagerly(_max_pool, _placeholder_max)
def _max_pool_fake(x, builder, ints, lens, reals, text, flag, int64_indices, for_grad=True):
    g = _geometry(x, builder, ints, lens, reals, text, flag)
    return _fake_out(g, x), _argmax_out(g, x, int64_indices, None, for_grad)


_max_pool_nograd = _nograd_overload(_max_pool, _max_pool_fake)


@_op("poolkit::max_pool_backward", mutates_args=())
def _max_pool_backward(dy: Tensor, argmax: Tensor, x: Tensor, builder: str, ints: list[int], lens: list[int],
                       reals: list[float], text: str, flag: bool) -> Tensor:
    """x gives the shape and layout of the gradient (and the int64 indices for a double backward); not read."""
    g = _geometry(x, builder, ints, lens, reals, text, flag)
    return _engine.max_pool_backward(TORCH, g, dy, argmax, None, list(x.shape), is_channels_last(x))


@_max_pool_backward.register_fake
def _(dy, argmax, x, *geo):
    return _fake_grad_input(dy, x)


def _max_pool_setup(ctx, inputs, output):
    ctx.geo = inputs[1:7]
    ctx.save_for_backward(output[1], inputs[0])


def _max_pool_grad(ctx, dy, _):
    am, x = ctx.saved_tensors
    return (_max_pool_backward(dy, am, x, *ctx.geo),) + _NONE8[:8]


def _max_pool_jvp(args, outputs, tangents):
    x, geo = args[0], args[1:7]
    if tangents[0] is None:
        return None, None
    return _gather(tangents[0], _int64_argmax(outputs[1], lambda: _max_pool(x, *geo, True)[1])), None


_max_pool = _autograd(_max_pool, _max_pool_grad, _max_pool_setup, jvp=_max_pool_jvp)


def _max_pool_backward_setup(ctx, inputs, output):
    ctx.geo = inputs[3:]
    ctx.save_for_backward(inputs[1], inputs[2])


def _max_pool_backward_grad(ctx, ddx):
    am, x = ctx.saved_tensors
    return (_gather(ddx, _int64_argmax(am, lambda: _max_pool(x, *ctx.geo, True)[1])),) + _NONE8[:8]


_max_pool_backward = _autograd(_max_pool_backward, _max_pool_backward_grad, _max_pool_backward_setup, jvp="linear")


def _cpp_plain(x):
    """Whether a plain call (_runs_plain) on x goes to the C++ kernel of a nograd overload: a host tensor, where
    they are loaded (the dispatcher's hop to C++ costs less than the Python kernel: bench/RESULTS.md, session 37)."""
    return CPU_KERNELS and not x.is_cuda


def max_pool(x, recipe, return_indices):
    plain = _runs_plain(x)
    if plain and not _cpp_plain(x):
        g = build_geometry(recipe, spatial_size(x))
        y, am = _engine.max_pool(TORCH, g, x, index_form(x, return_indices, False))
    elif plain or _untracked(x):
        y, am = _max_pool_nograd(x, *flat_recipe(recipe), bool(return_indices), False)
    else:
        y, am = _max_pool(x, *flat_recipe(recipe), bool(return_indices), needs_grad(x))
    return (y, am) if return_indices else y


# ---- fractional max pooling ---------------------------------------------------------------------------------------


@_op("poolkit::fractional_max_pool", mutates_args=())
def _fractional(x: Tensor, samples: Tensor, builder: str, ints: list[int], lens: list[int], reals: list[float],
                text: str, flag: bool, int64_indices: bool, for_grad: bool = True) -> tuple[Tensor, Tensor]:
    """for_grad: as poolkit::max_pool's."""
    g = _geometry(x, builder, ints, lens, reals, text, flag)
    y, am = _engine.fractional_max_pool(TORCH, g, samples, x, index_form(x, int64_indices, for_grad))
    return y, _argmax_out(g, x, int64_indices, am, for_grad)


@_fake_refusing_eagerly(_fractional, _placeholder_max)
def _(x, samples, builder, ints, lens, reals, text, flag, int64_indices, for_grad=True):
    g = _geometry(x, builder, ints, lens, reals, text, flag)
    return _fake_out(g, x), _argmax_out(g, x, int64_indices, None, for_grad)


@_op("poolkit::fractional_max_pool_backward", mutates_args=())
def _fractional_backward(dy: Tensor, argmax: Tensor, samples: Tensor, x: Tensor, builder: str, ints: list[int],
                         lens: list[int], reals: list[float], text: str, flag: bool) -> Tensor:
    g = _geometry(x, builder, ints, lens, reals, text, flag)
    return _engine.fractional_max_pool_backward(TORCH, g, samples, dy, argmax, None, list(x.shape),
                                                is_channels_last(x))


@_fractional_backward.register_fake
def _(dy, argmax, samples, x, *geo):
    return _fake_grad_input(dy, x)


def _fractional_setup(ctx, inputs, output):
    ctx.geo = inputs[2:8]
    ctx.save_for_backward(output[1], inputs[1], inputs[0])


def _fractional_grad(ctx, dy, _):
    am, samples, x = ctx.saved_tensors
    return (_fractional_backward(dy, am, samples, x, *ctx.geo),) + _NONE8 + (None,)


def _fractional_jvp(args, outputs, tangents):
    x, samples, geo = args[0], args[1], args[2:8]
    if tangents[0] is None:
        return None, None
    return _gather(tangents[0], _int64_argmax(outputs[1], lambda: _fractional(x, samples, *geo, True)[1])), None


_fractional = _autograd(_fractional, _fractional_grad, _fractional_setup, jvp=_fractional_jvp)


def _fractional_backward_setup(ctx, inputs, output):
    ctx.geo = inputs[4:]
    ctx.save_for_backward(inputs[1], inputs[2], inputs[3])


def _fractional_backward_grad(ctx, ddx):
    am, samples, x = ctx.saved_tensors
    am = _int64_argmax(am, lambda: _fractional(x, samples, *ctx.geo, True)[1])
    return (_gather(ddx, am),) + _NONE8 + (None,)


_fractional_backward = _autograd(_fractional_backward, _fractional_backward_grad, _fractional_backward_setup,
                                 jvp="linear")


def fractional_max_pool(x, recipe, samples, return_indices):
    y, am = _fractional(x, samples, *flat_recipe(recipe), bool(return_indices), needs_grad(x))
    return (y, am) if return_indices else y


# ---- average pooling (sliding, adaptive, global) ------------------------------------------------------------------


@_op("poolkit::avg_pool", mutates_args=())
def _avg_pool(x: Tensor, builder: str, ints: list[int], lens: list[int], reals: list[float], text: str, flag: bool,
              count_include_pad: bool, divisor_override: Optional[int]) -> Tensor:
    g = _geometry(x, builder, ints, lens, reals, text, flag)
    return _engine.avg_pool(TORCH, g, x, count_include_pad, divisor_override)


@_fake_refusing_eagerly(_avg_pool, _placeholder_pool)
def _avg_pool_fake(x, builder, ints, lens, reals, text, flag, count_include_pad, divisor_override):
    return _fake_out(_geometry(x, builder, ints, lens, reals, text, flag), x)


_avg_pool_nograd = _nograd_overload(_avg_pool, _avg_pool_fake)


@_op("poolkit::avg_pool_backward", mutates_args=())
def _avg_pool_backward(dy: Tensor, x: Tensor, builder: str, ints: list[int], lens: list[int], reals: list[float],
                       text: str, flag: bool, count_include_pad: bool, divisor_override: Optional[int]) -> Tensor:
    """x gives the shape and layout of the gradient; not read."""
    g = _geometry(x, builder, ints, lens, reals, text, flag)
    return _engine.avg_pool_backward(TORCH, g, dy, list(x.shape), is_channels_last(x), count_include_pad,
                                     divisor_override)


@_avg_pool_backward.register_fake
def _(dy, x, *rest):
    return _fake_grad_input(dy, x)


def _avg_pool_setup(ctx, inputs, output):
    ctx.rest = inputs[1:]
    ctx.save_for_backward(inputs[0])


def _avg_pool_grad(ctx, dy):
    (x,) = ctx.saved_tensors
    return (_avg_pool_backward(dy, x, *ctx.rest),) + _NONE8


_avg_pool = _autograd(_avg_pool, _avg_pool_grad, _avg_pool_setup, jvp="linear")


def _avg_pool_backward_setup(ctx, inputs, output):
    ctx.rest = inputs[2:]


def _avg_pool_backward_grad(ctx, ddx):
    return (_avg_pool(ddx, *ctx.rest), None) + _NONE8  # the backward is linear in dy: its adjoint is the forward


_avg_pool_backward = _autograd(_avg_pool_backward, _avg_pool_backward_grad, _avg_pool_backward_setup, jvp="linear")


def avg_pool(x, recipe, count_include_pad, divisor_override):
    div = None if divisor_override is None else int(divisor_override)
    plain = _runs_plain(x)
    if plain and not _cpp_plain(x):
        return _engine.avg_pool(TORCH, build_geometry(recipe, spatial_size(x)), x, bool(count_include_pad), div)
    op = _avg_pool_nograd if plain or _untracked(x) else _avg_pool
    return op(x, *flat_recipe(recipe), bool(count_include_pad), div)


# ---- pools whose backward reads the input: Lp, stochastic -------------------------------------------------------


@_op("poolkit::lp_pool", mutates_args=())
def _lp_pool(x: Tensor, builder: str, ints: list[int], lens: list[int], reals: list[float], text: str, flag: bool,
             norm_type: float, convention: str) -> Tensor:
    g = _geometry(x, builder, ints, lens, reals, text, flag)
    return _engine.lp_pool(TORCH, g, x, norm_type, convention)


@_fake_refusing_eagerly(_lp_pool, _placeholder_pool)
def _(x, builder, ints, lens, reals, text, flag, norm_type, convention):
    return _fake_out(_geometry(x, builder, ints, lens, reals, text, flag), x)


@_op("poolkit::lp_pool_backward", mutates_args=())
def _lp_pool_backward(dy: Tensor, x: Tensor, builder: str, ints: list[int], lens: list[int], reals: list[float],
                      text: str, flag: bool, norm_type: float, convention: str) -> Tensor:
    g = _geometry(x, builder, ints, lens, reals, text, flag)
    return _engine.lp_pool_backward(TORCH, g, dy, x, norm_type, convention)


@_lp_pool_backward.register_fake
def _(dy, x, *rest):
    return _fake_grad_input(dy, x)


def _save_input_setup(ctx, inputs, output):
    ctx.rest = inputs[1:]
    ctx.save_for_backward(inputs[0])


def _lp_pool_grad(ctx, dy):
    (x,) = ctx.saved_tensors
    return (_lp_pool_backward(dy, x, *ctx.rest),) + _NONE8


def _lp_as_avg(x, geo, p, convention):
    """Lp pooling written with poolkit's average pooling (both directions twice differentiable), for its
    derivatives: y = S^(1/p) with S = c * avg(u(x)) the pooled power (torch: u = x^p, c = K the kernel's cell count,
    avg counting padding; onnx: u = |x|^p, c = 1, avg dividing by 1). Returns u'(x), c, avg's last two arguments and
    dy/dS = S^(1/p - 1) / p, taken as 0 where S = 0."""
    if convention == "onnx":
        u, du, c, avg = x.abs() ** p, p * x.abs() ** (p - 1) * x.sign(), 1, (True, 1)
    else:
        u, du, c, avg = x ** p, p * x ** (p - 1), _geometry(x, *geo).window_cells(), (True, None)
    s = c * _avg_pool(u, *geo, *avg)
    nonzero = s != 0
    return du, c, avg, torch.where(nonzero, torch.where(nonzero, s, 1) ** (1 / p - 1) / p, 0)


def _lp_pool_jvp(args, outputs, tangents):
    x, geo, (p, convention) = args[0], args[1:7], args[7:]
    if tangents[0] is None:
        return None
    du, c, avg, dy_ds = _lp_as_avg(x, geo, p, convention)
    return dy_ds * (c * _avg_pool(du * tangents[0], *geo, *avg))


def _lp_backward_as_avg(dy, x, geo, p, convention):
    """lp_pool_backward written with _lp_as_avg: dx = u'(x) * c * avg_backward(dy * dy/dS)."""
    du, c, avg, dy_ds = _lp_as_avg(x, geo, p, convention)
    return du * (c * _avg_pool_backward(dy * dy_ds, x, *geo, *avg))


_lp_pool = _autograd(_lp_pool, _lp_pool_grad, _save_input_setup, jvp=_lp_pool_jvp)


def _lp_pool_backward_setup(ctx, inputs, output):
    ctx.geo, (ctx.p, ctx.convention) = inputs[2:8], inputs[8:]
    ctx.save_for_backward(inputs[0], inputs[1])


def _lp_pool_backward_grad(ctx, ddx):
    dy, x = ctx.saved_tensors
    # (torch.func.vjp, not autograd.grad of inputs made to require grad: torch.func's transforms refuse that)
    _, vjp = torch.func.vjp(lambda dy_, x_: _lp_backward_as_avg(dy_, x_, ctx.geo, ctx.p, ctx.convention), dy, x)
    return vjp(ddx) + _NONE8


def _lp_pool_backward_jvp(args, outputs, tangents):
    dy, x, geo, (p, convention) = args[0], args[1], args[2:8], args[8:]
    tangents = [torch.zeros_like(a) if t is None else t for a, t in zip((dy, x), tangents)]
    return torch.func.jvp(lambda dy_, x_: _lp_backward_as_avg(dy_, x_, geo, p, convention), (dy, x), tuple(tangents))[1]


_lp_pool_backward = _autograd(_lp_pool_backward, _lp_pool_backward_grad, _lp_pool_backward_setup,
                              jvp=_lp_pool_backward_jvp)


def lp_pool(x, recipe, norm_type, convention):
    return _lp_pool(x, *flat_recipe(recipe), float(norm_type), str(convention))


@_op("poolkit::stochastic_pool", mutates_args=())
def _stochastic(x: Tensor, builder: str, ints: list[int], lens: list[int], reals: list[float], text: str,
                flag: bool, training: bool, seed: int) -> Tensor:
    g = _geometry(x, builder, ints, lens, reals, text, flag)
    return _engine.stochastic_pool(TORCH, g, x, training, seed)


@_fake_refusing_eagerly(_stochastic, _placeholder_pool)
def _(x, builder, ints, lens, reals, text, flag, training, seed):
    return _fake_out(_geometry(x, builder, ints, lens, reals, text, flag), x)


@_op("poolkit::stochastic_pool_backward", mutates_args=())
def _stochastic_backward(dy: Tensor, x: Tensor, builder: str, ints: list[int], lens: list[int], reals: list[float],
                         text: str, flag: bool, training: bool, seed: int) -> Tensor:
    g = _geometry(x, builder, ints, lens, reals, text, flag)
    return _engine.stochastic_pool_backward(TORCH, g, dy, x, training, seed)


@_stochastic_backward.register_fake
def _(dy, x, *rest):
    return _fake_grad_input(dy, x)


_stochastic_backward = _autograd(_stochastic_backward, fold_vmap=False)


def _stochastic_grad(ctx, dy):
    (x,) = ctx.saved_tensors
    return (_stochastic_backward(dy, x, *ctx.rest),) + _NONE8


_stochastic = _autograd(_stochastic, _stochastic_grad, _save_input_setup, fold_vmap=False)


def stochastic_pool(x, recipe, training, seed):
    return _stochastic(x, *flat_recipe(recipe), bool(training), int(seed))


# ---- mixed pooling: lambda_ is a 0-d tensor, differentiable -------------------------------------------------------


@_op("poolkit::mixed_pool", mutates_args=())
def _mixed(x: Tensor, lambda_: Tensor, builder: str, ints: list[int], lens: list[int], reals: list[float], text: str,
           flag: bool, count_include_pad: bool, divisor_override: Optional[int]) -> Tensor:
    g = _geometry(x, builder, ints, lens, reals, text, flag)
    return _engine.mixed_pool(TORCH, g, x, float(lambda_), count_include_pad, divisor_override)


@_fake_refusing_eagerly(_mixed, _placeholder_pool)
def _(x, lambda_, builder, ints, lens, reals, text, flag, count_include_pad, divisor_override):
    return _fake_out(_geometry(x, builder, ints, lens, reals, text, flag), x)


@_op("poolkit::mixed_pool_backward", mutates_args=())
def _mixed_backward(dy: Tensor, x: Tensor, lambda_: Tensor, builder: str, ints: list[int], lens: list[int],
                    reals: list[float], text: str, flag: bool, count_include_pad: bool,
                    divisor_override: Optional[int]) -> tuple[Tensor, Tensor]:
    g = _geometry(x, builder, ints, lens, reals, text, flag)
    dx, dl = _engine.mixed_pool_backward(TORCH, g, dy, x, float(lambda_), count_include_pad, divisor_override)
    return dx, torch.tensor(dl, dtype=lambda_.dtype, device=lambda_.device)


@_mixed_backward.register_fake
def _(dy, x, lambda_, *rest):
    return _fake_grad_input(dy, x), torch.empty((), dtype=lambda_.dtype, device=lambda_.device)


_mixed_backward = _autograd(_mixed_backward, fold_vmap=False)


def _mixed_setup(ctx, inputs, output):
    ctx.rest = inputs[2:]
    ctx.save_for_backward(inputs[0], inputs[1])


def _mixed_grad(ctx, dy):
    x, lam = ctx.saved_tensors
    dx, dl = _mixed_backward(dy, x, lam, *ctx.rest)
    return (dx, dl) + _NONE8


def _mixed_jvp(args, outputs, tangents):
    """y = lambda_ * max + (1 - lambda_) * average over the same windows."""
    x, lam, geo, avg = args[0], args[1], args[2:8], args[8:]
    tx, tl = tangents[:2]
    top, am = _max_pool(x, *geo, True)
    ty = None if tx is None else lam * _gather(tx, am) + (1 - lam) * _avg_pool(tx, *geo, *avg)
    if tl is not None:
        tl_y = tl * (top - _avg_pool(x, *geo, *avg))
        ty = tl_y if ty is None else ty + tl_y
    return ty


_mixed = _autograd(_mixed, _mixed_grad, _mixed_setup, fold_vmap=False, jvp=_mixed_jvp)


def mixed_pool(x, lambda_, recipe, count_include_pad, divisor_override):
    lam = lambda_ if isinstance(lambda_, Tensor) else torch.tensor(float(lambda_), dtype=torch.float64)
    div = None if divisor_override is None else int(divisor_override)
    return _mixed(x, lam, *flat_recipe(recipe), bool(count_include_pad), div)


# ---- max unpooling ------------------------------------------------------------------------------------------------


@_op("poolkit::max_unpool", mutates_args=())
def _max_unpool(x: Tensor, indices: Tensor, kernel_size: list[int], stride: list[int], padding: list[int],
                output_size: Optional[list[int]]) -> Tensor:
    return _engine.max_unpool(TORCH, x, indices, unpool_size(x, kernel_size, stride, padding, output_size))


@_fake_refusing_eagerly(_max_unpool, _placeholder_pool)
def _(x, indices, kernel_size, stride, padding, output_size):
    out = unpool_size(x, [int(v) for v in kernel_size], [int(v) for v in stride], [int(v) for v in padding],
                      None if output_size is None else [int(v) for v in output_size])
    return _fake_empty(list(x.shape[:2]) + list(out), x.dtype, is_channels_last(x), x)


@_op("poolkit::max_unpool_backward", mutates_args=())
def _max_unpool_backward(dy: Tensor, indices: Tensor) -> Tensor:
    return _engine.max_unpool_backward(TORCH, dy, indices)


@_max_unpool_backward.register_fake
def _(dy, indices):
    return _fake_empty(indices.shape, dy.dtype, is_channels_last(dy), dy)


def _unpool_setup(ctx, inputs, output):
    ctx.save_for_backward(inputs[1])


def _unpool_grad(ctx, dy):
    (idx,) = ctx.saved_tensors
    return _max_unpool_backward(dy, idx), None, None, None, None, None


_max_unpool = _autograd(_max_unpool, _unpool_grad, _unpool_setup, jvp="linear")


def _unpool_backward_setup(ctx, inputs, output):
    ctx.save_for_backward(inputs[1], inputs[0])


def _unpool_backward_grad(ctx, ddx):
    idx, dy = ctx.saved_tensors
    return _scatter(ddx, idx, dy), None


_max_unpool_backward = _autograd(_max_unpool_backward, _unpool_backward_grad, _unpool_backward_setup, jvp="linear")


max_unpool = _max_unpool


CPU_KERNELS = _load_cpu_kernels()  # after the overloads they serve are defined
