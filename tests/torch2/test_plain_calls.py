"""The eager calls that skip the dispatcher (poolkit.torch._ops._runs_plain: max and average pooling on a plain
tensor that autograd does not record): they give torch.nn.functional's results, and every tool that watches
operators still sees poolkit's: dispatch and function modes, the profiler, the JIT tracer, functorch transforms,
autograd."""
import pytest
import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

import poolkit.torch as pt
from poolkit.torch import _ops


def _x(*shape):
    return torch.rand(*shape, generator=torch.Generator().manual_seed(3))


CALLS = [  # poolkit.torch's call, PyTorch's, the registered operator it stands for
    (lambda x: pt.max_pool2d(x, 3, 2, 1), lambda x: F.max_pool2d(x, 3, 2, 1), "max_pool"),
    (lambda x: pt.max_pool2d(x, 2, return_indices=True), lambda x: F.max_pool2d(x, 2, return_indices=True),
     "max_pool"),
    (lambda x: pt.adaptive_max_pool2d(x, 3), lambda x: F.adaptive_max_pool2d(x, 3), "max_pool"),
    (lambda x: pt.avg_pool2d(x, 3, 2, 1), lambda x: F.avg_pool2d(x, 3, 2, 1), "avg_pool"),
    (lambda x: pt.adaptive_avg_pool2d(x, 1), lambda x: F.adaptive_avg_pool2d(x, 1), "avg_pool"),
]


def _pair(out):
    return out if isinstance(out, tuple) else (out,)


def _same(a, b):
    """poolkit's outputs against PyTorch's: same layout; max equal, averages to float32's rounding (the sums'
    order differs)."""
    for u, v in zip(_pair(a), _pair(b)):
        assert u.shape == v.shape and u.stride() == v.stride() and u.dtype == v.dtype
        torch.testing.assert_close(u, v)


@pytest.mark.parametrize("call", CALLS, ids=lambda c: "")
@pytest.mark.parametrize("layout", ["nchw", "nhwc"])
def test_plain_call_runs_without_the_operator(call, layout, monkeypatch):
    pk, tf, name = call
    x = _x(2, 3, 9, 8)
    if layout == "nhwc":
        x = x.contiguous(memory_format=torch.channels_last)

    def refused(*args):
        raise AssertionError("the registered operator was called")
    monkeypatch.setattr(_ops, f"_{name}", refused)
    _same(pk(x), tf(x))
    with torch.no_grad():  # an input that requires grad, where autograd records nothing, still goes through it
        with pytest.raises(AssertionError, match="registered operator"):
            pk(x.clone().requires_grad_())


class _Recording:
    """A mode that notes each function it sees, then runs it."""

    def __init__(self):
        super().__init__()
        self.seen = []

    def _record(self, func, args, kwargs):
        self.seen.append(str(func))
        return func(*args, **(kwargs or {}))


class _Dispatched(_Recording, TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return self._record(func, args, kwargs)


class _Functions(_Recording, TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        return self._record(func, args, kwargs)


@pytest.fixture(params=["cpp", "python"])
def route(request, monkeypatch):
    """The plain call's two kernels: the nograd overload's C++ kernel through the dispatcher (host tensors, where
    _cpu_kernels.so is loaded) and the Python engine, called directly (every other tensor), which alone relies on
    _runs_plain to leave to the operator the calls that a tool watches."""
    if request.param == "python":
        monkeypatch.setattr(_ops, "_cpp_plain", lambda x: False)
    return request.param


@pytest.mark.parametrize("mode", [_Dispatched, _Functions])
@pytest.mark.parametrize("call", CALLS, ids=lambda c: "")
def test_modes_see_the_operator(call, mode, route):
    pk, tf, name = call
    x = _x(2, 3, 9, 8)
    with mode() as m:
        out = pk(x)
    assert f"poolkit.{name}.default" in m.seen
    _same(out, tf(x))


@pytest.mark.parametrize("call", CALLS, ids=lambda c: "")
def test_profiler_sees_the_operator(call, route):
    pk, _, name = call
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        pk(_x(2, 3, 9, 8))
    assert any(e.name == f"poolkit::{name}" for e in prof.events())


@pytest.mark.parametrize("call", CALLS, ids=lambda c: "")
def test_jit_trace_records_the_operator(call, route):
    pk, tf, name = call
    x = _x(2, 3, 9, 8)
    traced = torch.jit.trace(pk, x, check_trace=False)
    assert f"poolkit::{name}" in str(traced.graph)
    _same(traced(_x(2, 3, 9, 8) + 1), tf(_x(2, 3, 9, 8) + 1))


@pytest.mark.parametrize("call", CALLS, ids=lambda c: "")
def test_vmap_over_a_batch_of_batches(call, route):
    pk, tf, _ = call
    xs = _x(4, 2, 3, 9, 8)
    out = torch.func.vmap(pk)(xs)
    want = tf(xs.flatten(0, 1))
    for u, v in zip(_pair(out), _pair(want)):
        torch.testing.assert_close(u.flatten(0, 1), v)


@pytest.mark.parametrize("call", CALLS, ids=lambda c: "")
def test_grad_through_the_operator(call):
    pk, tf, _ = call
    x = _x(2, 3, 9, 8).requires_grad_()
    (g,) = torch.autograd.grad(_pair(pk(x))[0].sum(), x)
    (want,) = torch.autograd.grad(_pair(tf(x))[0].sum(), x)
    torch.testing.assert_close(g, want)


def test_plain_host_calls_go_to_the_cpu_kernels(monkeypatch):
    """With poolkit/torch/_cpu_kernels.so loaded, a plain eager max or average call on a host tensor calls its nograd
    overload (C++ kernel) rather than the Python engine."""
    calls = []
    for name in ("_max_pool_nograd", "_avg_pool_nograd"):
        op = getattr(_ops, name)
        monkeypatch.setattr(_ops, name, lambda *a, op=op, name=name: (calls.append(name), op(*a))[1])
    x = _x(2, 3, 9, 8)
    assert torch.equal(pt.max_pool2d(x, 3, 2, 1), F.max_pool2d(x, 3, 2, 1))
    assert torch.equal(pt.avg_pool2d(x, 3, 2, 1), F.avg_pool2d(x, 3, 2, 1))
    assert calls == ["_max_pool_nograd", "_avg_pool_nograd"]
