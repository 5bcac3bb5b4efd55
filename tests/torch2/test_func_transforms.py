"""torch.func's transforms over poolkit.torch (grad, vjp through jacrev, vmap of grad, grad of grad; forward mode:
jvp, jacfwd, hessian, and torch.autograd.forward_ad's dual tensors), and vmap in one call per operator. The oracle:
PyTorch's pools' derivatives under the same transforms; for poolkit's own pools, autograd's gradients of the same
call, or the same pool written with PyTorch's max and average pooling. (torch 2.15 refuses torch.func.grad over
operators whose backward comes from torch.library.register_autograd, and such operators have no forward
derivative: poolkit.torch._ops._autograd routes those calls through an autograd.Function.)"""
import pytest
import torch
import torch.autograd.forward_ad as fwAD
import torch.nn.functional as F

import poolkit.torch as pt


def _x(*shape):
    return torch.rand(*shape, generator=torch.Generator().manual_seed(3), dtype=torch.float64)


_SAMPLES = torch.rand(2, 3, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(4))

LIKE_TORCH = {  # poolkit.torch's call and PyTorch's
    "max_pool2d": (lambda m, t: m.max_pool2d(t, 3, 2, 1)),
    "max_pool2d indices": (lambda m, t: m.max_pool2d(t, 2, return_indices=True)[0]),
    "max_pool3d": (lambda m, t: m.max_pool3d(t.reshape(*t.shape[:2], 9, 2, 4), 2)),
    "avg_pool2d": (lambda m, t: m.avg_pool2d(t, 3, 2, 1)),
    "adaptive_avg_pool2d": (lambda m, t: m.adaptive_avg_pool2d(t, 3)),
    "adaptive_max_pool2d": (lambda m, t: m.adaptive_max_pool2d(t, 3)),
    "lp_pool2d": (lambda m, t: m.lp_pool2d(t, 2, 2)),
    "max_unpool2d": (lambda m, t: m.max_unpool2d(*m.max_pool2d(t, 2, return_indices=True), 2)),
    "fractional_max_pool2d": (lambda m, t: m.fractional_max_pool2d(t, 2, output_size=4, _random_samples=_SAMPLES)),
}
POOLKIT_ONLY = {
    "mixed_pool2d": lambda t: pt.mixed_pool2d(t, 2, lambda_=0.3),
    "stochastic_pool2d": lambda t: pt.stochastic_pool2d(t, 2, seed=5),
}


def _loss(f):
    return lambda t: f(t).pow(2).sum()


@pytest.mark.parametrize("name", LIKE_TORCH)
def test_grad_like_pytorch(name):
    call, x = LIKE_TORCH[name], _x(2, 3, 9, 8)
    got = torch.func.grad(_loss(lambda t: call(pt, t)))(x)
    torch.testing.assert_close(got, torch.func.grad(_loss(lambda t: call(F, t)))(x))


@pytest.mark.parametrize("name", POOLKIT_ONLY)
def test_grad_like_autograd(name):
    f, x = POOLKIT_ONLY[name], _x(2, 3, 9, 8)
    xr = x.clone().requires_grad_()
    (want,) = torch.autograd.grad(_loss(f)(xr), xr)
    torch.testing.assert_close(torch.func.grad(_loss(f))(x), want)


# vmap's fallback (the calls one by one) warns: an error here, as the operators' rule calls each once
# (poolkit.torch._ops._fold_vmap)
ONE_CALL = pytest.mark.filterwarnings("error:There is a performance drop because we have not yet implemented the "
                                      "batching rule for poolkit")


@ONE_CALL
@pytest.mark.parametrize("name", ["max_pool2d", "avg_pool2d", "lp_pool2d", "max_unpool2d"])
def test_per_sample_gradients(name):
    call, x = LIKE_TORCH[name], _x(4, 3, 9, 8)

    def per_sample(m):
        return torch.func.vmap(torch.func.grad(_loss(lambda t: call(m, t[None]))))(x)
    torch.testing.assert_close(per_sample(pt), per_sample(F))


@ONE_CALL
@pytest.mark.parametrize("name", ["max_pool2d", "avg_pool2d", "adaptive_max_pool2d", "max_pool3d"])
def test_jacobian(name):
    call, x = LIKE_TORCH[name], _x(1, 2, 9, 8)
    torch.testing.assert_close(torch.func.jacrev(lambda t: call(pt, t))(x), torch.func.jacrev(lambda t: call(F, t))(x))


@pytest.mark.parametrize("name", ["max_pool2d", "avg_pool2d", "max_unpool2d", "lp_pool2d"])
def test_grad_of_grad(name):
    call, x = LIKE_TORCH[name], _x(2, 3, 9, 8)

    def second(m):
        inner = torch.func.grad(lambda t: call(m, t).pow(3).sum())
        return torch.func.grad(lambda t: inner(t).pow(2).sum())(x)
    torch.testing.assert_close(second(pt), second(F))


def test_no_second_derivative_raises():
    inner = torch.func.grad(lambda t: pt.mixed_pool2d(t, 2).pow(3).sum())
    with pytest.raises(RuntimeError, match="mixed_pool_backward has no derivative"):
        torch.func.grad(lambda t: inner(t).sum())(_x(2, 3, 9, 8))


def test_compiled_grad():
    """torch.compile over torch.func.grad: the transform's region runs eagerly (a graph break; with fullgraph=True
    torch 2.15 itself refuses registered operators there)."""
    x = _x(2, 3, 9, 8)
    got = torch.compile(torch.func.grad(_loss(lambda t: pt.max_pool2d(t, 3, 2, 1))))(x)
    torch.testing.assert_close(got, torch.func.grad(_loss(lambda t: F.max_pool2d(t, 3, 2, 1)))(x))


# ---- forward mode -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", LIKE_TORCH)
@pytest.mark.parametrize("layout", ["nchw", "nhwc"])
def test_jvp_like_pytorch(name, layout):
    call, x, t = LIKE_TORCH[name], _x(2, 3, 9, 8), _x(2, 3, 9, 8).flip(0)
    if layout == "nhwc":
        x, t = (v.contiguous(memory_format=torch.channels_last) for v in (x, t))
    got = torch.func.jvp(lambda u: call(pt, u), (x,), (t,))[1]
    torch.testing.assert_close(got, torch.func.jvp(lambda u: call(F, u), (x,), (t,))[1])


@pytest.mark.parametrize("name", LIKE_TORCH)
@pytest.mark.parametrize("requires_grad", [False, True])
def test_dual_tensors_like_pytorch(name, requires_grad):
    """Eager forward-mode AD: a dual tensor's tangent reaches the output (also on the calls that otherwise skip the
    registered operator, _ops._runs_plain)."""
    call, x, t = LIKE_TORCH[name], _x(2, 3, 9, 8), _x(2, 3, 9, 8).flip(0)
    with fwAD.dual_level():
        got, want = (fwAD.unpack_dual(call(m, fwAD.make_dual(x.clone().requires_grad_(requires_grad), t))).tangent
                     for m in (pt, F))
    assert got is not None
    torch.testing.assert_close(got, want)


@ONE_CALL
@pytest.mark.parametrize("name", ["max_pool2d", "avg_pool2d", "adaptive_max_pool2d", "lp_pool2d"])
def test_jacfwd(name):
    call, x = LIKE_TORCH[name], _x(1, 2, 9, 8)
    torch.testing.assert_close(torch.func.jacfwd(lambda t: call(pt, t))(x), torch.func.jacfwd(lambda t: call(F, t))(x))


@pytest.mark.parametrize("name", LIKE_TORCH)
def test_hessian_like_pytorch(name):
    """jacfwd over jacrev: forward mode through each backward operator too."""
    call, x = LIKE_TORCH[name], _x(2, 3, 9, 8)
    want = torch.func.hessian(lambda t: call(F, t).pow(3).sum())(x)
    torch.testing.assert_close(torch.func.hessian(lambda t: call(pt, t).pow(3).sum())(x), want)


def test_mixed_pool_jvp():
    """Mixed pooling's tangent in x and lambda_ against lambda_ * max + (1 - lambda_) * average written with PyTorch's
    pools; lambda_'s tangent alone on a dual tensor too."""
    x, t = _x(2, 3, 9, 8), _x(2, 3, 9, 8).flip(0)
    lam, dlam = torch.tensor(0.3, dtype=torch.float64), torch.tensor(-1.5, dtype=torch.float64)

    def mixed(u, lam_):
        return lam_ * F.max_pool2d(u, 3, 2, 1) + (1 - lam_) * F.avg_pool2d(u, 3, 2, 1)

    got = torch.func.jvp(lambda u, l: pt.mixed_pool2d(u, 3, 2, 1, lambda_=l), (x, lam), (t, dlam))[1]
    torch.testing.assert_close(got, torch.func.jvp(mixed, (x, lam), (t, dlam))[1])
    with fwAD.dual_level():
        got = fwAD.unpack_dual(pt.mixed_pool2d(x, 3, 2, 1, lambda_=fwAD.make_dual(lam, dlam))).tangent
    torch.testing.assert_close(got, dlam * (F.max_pool2d(x, 3, 2, 1) - F.avg_pool2d(x, 3, 2, 1)))


def test_no_forward_derivative_raises():
    """Stochastic pooling has no forward derivative; mixed and stochastic pooling no second one (hessian)."""
    x = _x(2, 3, 9, 8)
    with pytest.raises(RuntimeError, match="stochastic_pool has no forward-mode derivative"):
        torch.func.jvp(lambda u: pt.stochastic_pool2d(u, 2, seed=5), (x,), (x,))
    with fwAD.dual_level(), pytest.raises(RuntimeError, match="stochastic_pool has no forward-mode derivative"):
        pt.stochastic_pool2d(fwAD.make_dual(x, x), 2, seed=5)
    with pytest.raises(RuntimeError, match="mixed_pool_backward has no derivative"):
        torch.func.hessian(lambda u: pt.mixed_pool2d(u, 2).pow(3).sum())(x[:1, :1])


@pytest.mark.parametrize("fullgraph", [False, True])
def test_compiled_forward_mode(fullgraph):
    """torch.compile over torch.func.jvp and over dual tensors: PyTorch's tangents (torch 2.15 drops a registered
    operator's forward tangents under torch.compile; poolkit's calls run the transform eagerly there)."""
    x, t = _x(2, 3, 9, 8), _x(2, 3, 9, 8).flip(0)

    def jvp(m):
        return lambda u, v: torch.func.jvp(lambda w: m.max_pool2d(w, 3, 2, 1), (u,), (v,))[1]

    def dual(u, v):
        with fwAD.dual_level():
            return fwAD.unpack_dual(pt.avg_pool2d(fwAD.make_dual(u, v), 2)).tangent
    torch.testing.assert_close(torch.compile(jvp(pt), fullgraph=fullgraph)(x, t), jvp(F)(x, t))
    torch.testing.assert_close(torch.compile(dual)(x, t), F.avg_pool2d(t, 2))


def test_compiled_vmap_is_one_graph():
    """torch.compile over vmap traces the operators' vmap rule into one graph (forward mode alone runs eagerly)."""
    x = _x(4, 3, 9, 8)

    def per_image(m):
        return lambda a: torch.func.vmap(lambda u: m.max_pool2d(u[None], 3, 2, 1)[0])(a)
    torch.testing.assert_close(torch.compile(per_image(pt), fullgraph=True)(x), per_image(F)(x))
