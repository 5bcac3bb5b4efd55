"""torch.library.opcheck on every registered poolkit operator (schema, fake kernel, autograd registration,
AOT dispatch), channels-first and channels-last. Inputs of the backward operators require grad where poolkit
gives a second derivative (not for stochastic and mixed pooling)."""
import pytest
import torch

import poolkit.torch  # noqa: F401  (registers the operators)
from poolkit._params import GLOBAL_RECIPE, adaptive_recipe, fractional_recipe, window_recipe
from poolkit._params import flat_recipe as _flat

from cases import DEVICE, inputs

OPS = torch.ops.poolkit


def _x(layout, r=2, dtype=torch.float64):
    return inputs(r, dtype)[layout].clone().requires_grad_(True)


def _samples():
    return torch.rand(2, 3, 2, dtype=torch.float64, generator=torch.Generator(DEVICE).manual_seed(1))


def _calls(layout):
    x = _x(layout)
    win = _flat(window_recipe(2, 3, 2, 1, 1, True))
    keras = _flat(window_recipe(2, 2, None, "same", 1, False))
    frac = _flat(fractional_recipe(2, None, (0.5, 0.6), [7, 6], False))
    dy = torch.randn(2, 3, 4, 4, dtype=torch.float64)
    dy_grad = dy.clone().requires_grad_(True)  # for the backward operators that are differentiable again
    am = OPS.max_pool(x.detach(), *win, False)[1]
    y, idx = OPS.max_pool(x.detach(), *_flat(window_recipe(2, 2, 2, 0, 1, False)), True)
    lam = torch.tensor(0.3, dtype=torch.float64, requires_grad=True)
    return [
        (OPS.max_pool, (x, *win, False)),
        (OPS.max_pool, (x, *_flat(adaptive_recipe(3, [7, 6])), True)),
        (OPS.max_pool, (x, *_flat(GLOBAL_RECIPE), False)),
        (OPS.max_pool, (x.detach(), *win, False, False)),  # for_grad false: no argmax kept
        (OPS.max_pool_backward, (dy_grad, am, x.detach(), *win)),
        (OPS.avg_pool, (x, *win, True, None)),
        (OPS.avg_pool, (x, *keras, False, 3)),
        (OPS.avg_pool_backward, (dy_grad, x.detach(), *win, False, None)),
        (OPS.lp_pool, (x, *win, 2.0, "torch")),
        (OPS.lp_pool_backward, (dy_grad, x.detach().requires_grad_(True), *win, 3.0, "onnx")),
        (OPS.lp_pool_backward, (dy_grad, x.detach().requires_grad_(True), *win, 2.0, "torch")),
        (OPS.stochastic_pool, (x, *win, True, 5)),
        (OPS.stochastic_pool_backward, (dy, x.detach(), *win, True, 5)),
        (OPS.mixed_pool, (x, lam, *win, True, None)),
        (OPS.mixed_pool_backward, (dy, x.detach(), lam.detach(), *win, True, None)),
        (OPS.fractional_max_pool, (x, _samples(), *frac, True)),
        (OPS.fractional_max_pool, (x.detach(), _samples(), *frac, False, False)),  # for_grad false
        (OPS.fractional_max_pool_backward,
         (torch.randn(2, 3, 3, 3, dtype=torch.float64, requires_grad=True), OPS.fractional_max_pool(x.detach(), _samples(), *frac, False)[1],
          _samples(), x.detach(), *frac)),
        (OPS.max_unpool, (y.detach().requires_grad_(True), idx, [2], [2], [0], None)),
        (OPS.max_unpool, (y.detach(), idx, [2], [2], [0], [7, 6])),
        (OPS.max_unpool_backward, (torch.randn(2, 3, 6, 6, dtype=torch.float64, requires_grad=True), idx)),
    ]


CALLS = [(layout, i) for layout in ("channels_first", "channels_last") for i in range(len(_calls(layout)))]


@pytest.mark.parametrize("layout, i", CALLS)
def test_opcheck(layout, i):
    op, args = _calls(layout)[i]
    torch.library.opcheck(op.default, args)


def _nograd_calls(layout):
    """The calls of the operators with a nograd overload (compiled graphs' calls that autograd does not record; C++
    kernels on host tensors), on the same arguments without grad."""
    return [(op.nograd, tuple(a.detach() if isinstance(a, torch.Tensor) else a for a in args))
            for op, args in _calls(layout) if op in (OPS.max_pool, OPS.avg_pool)]


@pytest.mark.parametrize("layout, i", [(layout, i) for layout in ("channels_first", "channels_last")
                                       for i in range(len(_nograd_calls(layout)))])
def test_opcheck_nograd(layout, i):
    op, args = _nograd_calls(layout)[i]
    torch.library.opcheck(op, args)


def test_nograd_overloads_have_their_cpu_kernels():
    """pip built poolkit/torch/_cpu_kernels.so for this PyTorch and poolkit.torch loaded it."""
    from poolkit.torch import _ops
    assert _ops.CPU_KERNELS
    for op in (OPS.max_pool.nograd, OPS.avg_pool.nograd):
        assert torch._C._dispatch_has_kernel_for_dispatch_key(op.name(), "CPU")


def test_every_operator_is_checked():
    names = {str(op).split(".")[-1] for op, _ in _calls("channels_first")}
    registered = {n for n in dir(OPS) if not n.startswith("_") and isinstance(getattr(OPS, n), torch._ops.OpOverloadPacket)}
    assert registered == names | {"refuse"}  # refuse only raises (test_export_errors.py)


@pytest.mark.parametrize("kind", [ValueError, TypeError, IndexError])
def test_refuse_raises_its_error(kind):
    with pytest.raises(kind) as e:
        OPS.refuse(torch.zeros(2), kind.__name__, "poolkit: x: a message")
    assert str(e.value) == "poolkit: x: a message"


def test_nograd_cpu_kernels_keep_an_argmax_only_where_a_gradient_may_follow():
    """The C++ kernels' indices: int64 when asked for; else the compact argmax where for_grad is set and the input
    is floating; else none (an empty tensor of the compact dtype), as the Python kernel of the default overload."""
    win = _flat(window_recipe(2, 3, 2, 1, 1, False))
    for dtype in (torch.float32, torch.int32, torch.uint8):
        x = inputs(2)["channels_last"].mul(10).to(dtype)
        for int64_indices in (False, True):
            for for_grad in (False, True):
                y, am = OPS.max_pool.nograd(x, *win, int64_indices, for_grad)
                y0, am0 = OPS.max_pool.default(x, *win, int64_indices, for_grad)
                assert torch.equal(y, y0) and y.stride() == y0.stride()
                assert am.dtype == am0.dtype and am.shape == am0.shape and am.stride() == am0.stride()
                assert torch.equal(am, am0), (dtype, int64_indices, for_grad)
                assert am.numel() == (0 if not int64_indices and not (for_grad and dtype.is_floating_point)
                                      else y.numel())


@pytest.mark.parametrize("shape", [(4,), (4, 4), (1, 1, 1, 2, 2, 2, 2)], ids=["1 dim", "2 dims", "7 dims"])
def test_nograd_cpu_kernels_hand_other_ranks_to_the_python_kernel(shape):
    """A tensor the C++ kernels do not take (not N, C and 1 to 3 spatial axes) gets the Python kernel's error."""
    x, win = torch.zeros(shape), _flat(window_recipe(2, 2, 2, 0, 1, False))
    for op, args in ((OPS.max_pool, (False, False)), (OPS.avg_pool, (True, None))):
        with pytest.raises((ValueError, TypeError, IndexError)) as got:
            op.nograd(x, *win, *args)
        with pytest.raises(type(got.value)) as want:
            op.default(x, *win, *args)
        assert str(got.value) == str(want.value)
