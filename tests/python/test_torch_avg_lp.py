"""Average, adaptive average and Lp pooling against PyTorch: bit-identical (average pooling's outputs and gradients,
Lp outputs for p = 1, 2, 3) but for the cases in known_differences.py, equal up to rounding (a few ulps of the
summed terms) elsewhere; refusals must match."""
import math

import pytest
import torch
import torch.nn.functional as F

import poolkit
import poolkit.torch as pt
from known_differences import check_bits
from oracle import (DEVICE, DTYPES, Refused, as_torch, bits_equal, call, close, leaf_and_view, logical_grad,
                    maybe_tuple, new_rng, oracle_leaf_and_view, random_layout, unbatched_shape, values)


def _finite_max(t):
    t = t.detach()
    f = t[torch.isfinite(t)]
    return float(f.abs().max()) if f.numel() else 0.0


def check_sum_pair(tally, op, rng, base, dtype, layout, torch_fn, pk_fn, np_fn, np_backward, cells, grads=True,
                   exact=None, exact_grads=True):
    """cells: the most input cells one output sums (scales the rounding allowance). exact: the case's key
    (test, r, case) when its output (and, with exact_grads, its gradient) must be bit-identical."""
    t_leaf, t_view = oracle_leaf_and_view(base, layout)
    p_leaf, p_view = leaf_and_view(base, layout)
    ref = call(torch_fn, t_view)
    got = call(pk_fn, p_view)
    if isinstance(ref, Refused):
        assert isinstance(got, Refused), f"PyTorch refused ({ref.args[0]}) but poolkit accepted"
        tally(op, cases=1, refused_by_both=1)
        return
    assert not isinstance(got, Refused), f"poolkit refused what PyTorch accepts: {got.args[0]}"
    scale = _finite_max(base) * cells
    assert close(ref, got, scale), f"outputs differ beyond rounding\n{ref}\n{got}"
    counts = dict(cases=1, bit_identical_outputs=int(bits_equal(ref, got)))
    # The bit-for-bit list is the CPU backend's: CUDA's sums (contracted multiply-adds, the device's pow and sqrt)
    # agree with PyTorch up to rounding, as PyTorch CUDA's own do; `close` above holds them to that.
    exact = exact if DEVICE == "cpu" else None
    if exact:
        check_bits(bits_equal(ref, got), *exact, "output")
    x_np = p_view.detach().cpu().numpy()
    assert close(ref, as_torch(np_fn(x_np)), scale)
    if grads:
        dy = values(rng, tuple(ref.shape), dtype, False)
        ref.backward(dy.to(ref.device))
        got.backward(dy)
        gscale = _finite_max(dy) * cells + _finite_max(t_leaf.grad)
        assert close(t_leaf.grad, p_leaf.grad, gscale, ulps=32), f"gradients differ\n{t_leaf.grad}\n{p_leaf.grad}"
        assert close(logical_grad(t_leaf, layout), as_torch(np_backward(dy.cpu().numpy(), x_np)), gscale, ulps=32)
        counts["grads_compared"] = 1
        counts["bit_identical_grads"] = int(bits_equal(t_leaf.grad, p_leaf.grad))
        if exact and exact_grads:
            check_bits(bits_equal(t_leaf.grad, p_leaf.grad), *exact, "grad")
    tally(op, **counts)


@pytest.mark.parametrize("case", range(300))
@pytest.mark.parametrize("r", [1, 2, 3])
def test_avg_pool(r, case, tally):
    rng = new_rng("avg_pool", r, case)
    k = [rng.randint(1, 4) for _ in range(r)]
    p = [rng.randint(0, kk // 2) for kk in k]
    if rng.random() < 0.05:
        p[0] += 1
    s = None if rng.random() < 0.3 else [rng.randint(1, 3) for _ in range(r)]
    kw = dict(kernel_size=maybe_tuple(rng, k), stride=None if s is None else maybe_tuple(rng, s),
              padding=maybe_tuple(rng, p), ceil_mode=rng.random() < 0.5, count_include_pad=rng.random() < 0.5)
    if r > 1 and rng.random() < 0.3:
        kw["divisor_override"] = rng.randint(1, 10)
    # avg_pool3d refuses inputs smaller than the kernel: mostly stay above it there
    sizes = [rng.randint(kk if r == 3 and rng.random() < 0.9 else 1, 9 if r < 3 else 6) for kk in k]
    shape = unbatched_shape([rng.randint(1, 2), rng.randint(1, 3)] + sizes, rng)
    dtype = rng.choice(DTYPES)
    layout = random_layout(rng) if len(shape) == r + 2 else "channels_first"
    base = values(rng, shape, dtype, rng.random() < 0.2)
    tf, pf = getattr(F, f"avg_pool{r}d"), getattr(pt, f"avg_pool{r}d")
    nf, nb = getattr(poolkit, f"avg_pool{r}d"), getattr(poolkit, f"avg_pool{r}d_backward")
    div = kw.get("divisor_override") or 1
    check_sum_pair(tally, f"avg_pool{r}d", rng, base, dtype, layout, lambda x: tf(x, **kw), lambda x: pf(x, **kw),
                   lambda x: nf(x, **kw), lambda dy, x: nb(dy, x, **kw), math.prod(k) / div,
                   exact=("avg_pool", r, case))


@pytest.mark.parametrize("case", range(150))
@pytest.mark.parametrize("r", [1, 2, 3])
def test_adaptive_avg_pool(r, case, tally):
    rng = new_rng("adaptive_avg_pool", r, case)
    sizes = [rng.randint(1, 10 if r < 3 else 6) for _ in range(r)]
    out = [rng.randint(1, 2 * s + 1) for s in sizes]
    shape = unbatched_shape([rng.randint(1, 2), rng.randint(1, 3)] + sizes, rng)
    dtype = rng.choice(DTYPES)
    layout = random_layout(rng) if len(shape) == r + 2 else "channels_first"
    base = values(rng, shape, dtype, rng.random() < 0.2)
    osz = out[0] if r == 1 else tuple(out)
    tf, pf = getattr(F, f"adaptive_avg_pool{r}d"), getattr(pt, f"adaptive_avg_pool{r}d")
    nf, nb = getattr(poolkit, f"adaptive_avg_pool{r}d"), getattr(poolkit, f"adaptive_avg_pool{r}d_backward")
    check_sum_pair(tally, f"adaptive_avg_pool{r}d", rng, base, dtype, layout, lambda x: tf(x, osz),
                   lambda x: pf(x, osz), lambda x: nf(x, osz), lambda dy, x: nb(dy, x), math.prod(sizes),
                   exact=("adaptive_avg_pool", r, case))


def _torch_lp3d(x, p, k, s, ceil):
    """PyTorch's lp_pool formula (torch/nn/functional.py) in 3-D, which PyTorch 1.13 lacks."""
    kk = k if isinstance(k, tuple) else (k,) * 3
    out = F.avg_pool3d(x.pow(p), k, s, 0, ceil)
    return (torch.sign(out) * F.relu(torch.abs(out))).mul(math.prod(kk)).pow(1.0 / p)


@pytest.mark.parametrize("case", range(150))
@pytest.mark.parametrize("r", [1, 2, 3])
def test_lp_pool(r, case, tally):
    rng = new_rng("lp_pool", r, case)
    norm = rng.choice([1, 2, 3, 1.5, 4])
    k = [rng.randint(1, 3) for _ in range(r)]
    s = None if rng.random() < 0.3 else [rng.randint(1, 3) for _ in range(r)]
    ks = k[0] if r == 1 else maybe_tuple(rng, k)  # PyTorch 1.13's lp_pool1d breaks on a tuple kernel_size
    ss = None if s is None else maybe_tuple(rng, s)
    ceil = rng.random() < 0.5
    # the 3-D oracle goes through avg_pool3d, which refuses inputs smaller than the kernel
    sizes = [rng.randint(kk if r == 3 else 1, 8 if r < 3 else 5) for kk in k]
    shape = unbatched_shape([rng.randint(1, 2), rng.randint(1, 3)] + sizes, rng, allow=r < 3)
    dtype = rng.choice(DTYPES)
    layout = random_layout(rng) if len(shape) == r + 2 else "channels_first"
    specials = rng.random() < 0.2
    positive = not specials and rng.random() < 0.7  # gradients of x^p are compared where x > 0
    base = values(rng, shape, dtype, specials)
    if positive:
        base = base.abs() + 0.25
    if r < 3:
        tf = getattr(F, f"lp_pool{r}d")
        torch_fn = lambda x: tf(x, norm, ks, ss, ceil)  # noqa: E731
    else:
        torch_fn = lambda x: _torch_lp3d(x, norm, ks, ss, ceil)  # noqa: E731
    pf = getattr(pt, f"lp_pool{r}d")
    nf, nb = getattr(poolkit, f"lp_pool{r}d"), getattr(poolkit, f"lp_pool{r}d_backward")
    cells = math.prod(k) * (_finite_max(base) ** (norm - 1) if _finite_max(base) > 1 else 1)
    check_sum_pair(tally, f"lp_pool{r}d", rng, base, dtype, layout, torch_fn,
                   lambda x: pf(x, norm, ks, ss, ceil), lambda x: nf(x, norm, ks, ss, ceil),
                   lambda dy, x: nb(dy, x, norm, ks, ss, ceil), cells, grads=positive,
                   exact=("lp_pool", r, case) if norm in (1, 2, 3) else None, exact_grads=False)
