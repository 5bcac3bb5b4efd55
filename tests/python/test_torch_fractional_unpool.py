"""Fractional max pooling (given samples) and max unpooling against PyTorch, bit for bit, refusals included."""
import math
import numpy as np
import pytest
import torch
import torch.nn.functional as F

import poolkit
import poolkit.torch as pt
import poolkit.torch.nn  # noqa: F401  (the modules, as pt.nn)
from max_pair import check_max_pair
from oracle import (DEVICE, DTYPES, Refused, as_torch, bits_equal, call, leaf_and_view, logical_grad, new_rng,
                    oracle_leaf_and_view, random_layout, unbatched_shape, values)


@pytest.mark.parametrize("case", range(250))
@pytest.mark.parametrize("r", [2, 3])
def test_fractional_max_pool(r, case, tally):
    rng = new_rng("fractional_max_pool", r, case)
    sizes = [rng.randint(2 if r == 2 else 4, 12 if r == 2 else 8) for _ in range(r)]
    k = [rng.randint(1, 3) for _ in range(r)]
    use_ratio = rng.random() < 0.3
    if use_ratio:
        ratio = round(rng.uniform(0.3, 0.95), 2)
        out_kw = dict(output_ratio=ratio)
    else:
        room = 0 if r == 2 else 1  # PyTorch: out + k - 1 <= in in 2-D, < in in 3-D
        out = [rng.randint(1, max(1, s - kk + 1 - room) + (1 if rng.random() < 0.1 else 0))
               for s, kk in zip(sizes, k)]
        out_kw = dict(output_size=tuple(out))
    shape = unbatched_shape([rng.randint(1, 2), rng.randint(1, 3)] + sizes, rng)
    dtype = rng.choice(DTYPES)
    layout = random_layout(rng) if len(shape) == r + 2 else "channels_first"
    base = values(rng, shape, dtype, rng.random() < 0.3)
    n_batch = 1 if len(shape) == r + 1 else shape[0]
    samples = torch.rand(n_batch, shape[-r - 1], r, dtype=dtype, generator=torch.Generator(DEVICE).manual_seed(case))
    kk = k[0] if rng.random() < 0.5 and len(set(k)) == 1 else tuple(k)
    tf, pf = getattr(F, f"fractional_max_pool{r}d"), getattr(pt, f"fractional_max_pool{r}d")
    nf, nb = getattr(poolkit, f"fractional_max_pool{r}d"), getattr(poolkit, f"fractional_max_pool{r}d_backward")
    check_max_pair(tally, f"fractional_max_pool{r}d", rng, base, dtype, layout,
                   lambda x: tf(x, kk, return_indices=True, _random_samples=samples.to(x.device), **out_kw),
                   lambda x: pf(x, kk, return_indices=True, _random_samples=samples, **out_kw),
                   lambda x: nf(x, kk, return_indices=True, _random_samples=samples.cpu().numpy(), **out_kw),
                   lambda dy, x, i: nb(dy, x, i, kk, tuple(dy.shape[-r:]), samples.cpu().numpy()))


@pytest.mark.parametrize("ratio", [0.0, 1.0, 0.999, 1.05, 1.5, -0.1, -0.2])
@pytest.mark.parametrize("k", [1, 2])
@pytest.mark.parametrize("r", [2, 3])
def test_fractional_ratio_bounds(r, k, ratio):
    """The functional form takes the ratios the installed PyTorch takes (it truncates input size x ratio toward 0:
    0 and -0.1 give empty outputs, 1 and 1.05 with kernel 1 the input's size in 2-D) and refuses the others; the modules refuse outside (0, 1) at construction, as torch.nn's."""
    x = torch.randn((1, 2) + (6,) * r, generator=torch.Generator(DEVICE).manual_seed(k))
    samples = torch.rand(1, 2, r, generator=torch.Generator(DEVICE).manual_seed(r))
    kw = dict(output_ratio=(ratio,) * r, return_indices=True, _random_samples=samples)
    want = call(getattr(F, f"fractional_max_pool{r}d"), x, k, **kw)
    got = call(getattr(pt, f"fractional_max_pool{r}d"), x, k, **kw)
    assert isinstance(got, Refused) == isinstance(want, Refused), (want, got)
    if not isinstance(want, Refused):
        assert bits_equal(got[0], want[0]) and bits_equal(got[1], want[1])
    name = f"FractionalMaxPool{r}d"
    want = call(getattr(torch.nn, name), k, output_ratio=ratio)
    got = call(getattr(pt.nn, name), k, output_ratio=ratio)
    assert isinstance(got, Refused) == isinstance(want, Refused), (want, got)


def _zero_sizes(r):
    """Output sizes with a 0 on some axes, given as output_size or as an output_ratio that truncates to 0."""
    out = [dict(output_size=(0,) * r), dict(output_size=(0,) + (2,) * (r - 1)),
           dict(output_size=(2,) * (r - 1) + (0,)), dict(output_ratio=(0.1,) * r)]
    return out + [dict(output_ratio=(0.5,) * (r - 1) + (0.1,))]


@pytest.mark.parametrize("layout", ["channels_first", "channels_last"])
@pytest.mark.parametrize("r, kw", [(r, kw) for r in (2, 3) for kw in _zero_sizes(r)], ids=str)
def test_fractional_output_size_zero(r, kw, layout, tally):
    """An output size of 0: an empty output and empty indices, as the installed PyTorch returns, and a zero
    gradient of the input's shape (through the int64 indices and through the saved compact argmax)."""
    base = torch.arange(2 * 3 * 6 ** r, dtype=torch.float32).reshape((2, 3) + (6,) * r)
    samples = torch.rand(2, 3, r, generator=torch.Generator(DEVICE).manual_seed(r))
    tf, pf = getattr(F, f"fractional_max_pool{r}d"), getattr(pt, f"fractional_max_pool{r}d")
    t_leaf, t_view = oracle_leaf_and_view(base, layout)
    y, idx = tf(t_view, 2, return_indices=True, _random_samples=samples.cpu(), **kw)
    assert y.numel() == 0  # the case is what it says
    y.sum().backward()
    for return_indices in (True, False):
        p_leaf, p_view = leaf_and_view(base, layout)
        got = pf(p_view, 2, return_indices=return_indices, _random_samples=samples, **kw)
        gy = got[0] if return_indices else got
        assert bits_equal(gy, y)
        if return_indices:
            assert bits_equal(got[1], idx)
        gy.sum().backward()
        assert bits_equal(p_leaf.grad, t_leaf.grad)
    ny, ni = getattr(poolkit, f"fractional_max_pool{r}d")(t_view.detach().cpu().numpy(), 2, return_indices=True,
                                                           _random_samples=samples.cpu().numpy(), **kw)
    assert ny.shape == tuple(y.shape) and ni.shape == tuple(idx.shape) and ni.dtype == np.int64
    tally(f"fractional_max_pool{r}d", cases=1, empty_outputs=1)


@pytest.mark.parametrize("case", range(200))
@pytest.mark.parametrize("r", [1, 2, 3])
def test_max_unpool(r, case, tally):
    rng = new_rng("max_unpool", r, case)
    k = [rng.randint(1, 3) for _ in range(r)]
    s = [rng.randint(1, 3) for _ in range(r)]  # stride < kernel: overlapping windows, repeated indices
    p = [rng.randint(0, kk // 2) for kk in k]
    sizes = [rng.randint(max(1, kk - 2 * pp), 8 if r < 3 else 5) for kk, pp in zip(k, p)]
    shape = unbatched_shape([rng.randint(1, 2), rng.randint(1, 3)] + sizes, rng)
    dtype = rng.choice(DTYPES)
    base = values(rng, shape, dtype, False)
    pool = getattr(F, f"max_pool{r}d")
    small, idx = pool(base, k, s, p, return_indices=True)
    default = [(i - 1) * st + kk - 2 * pp for i, st, kk, pp in zip(small.shape[-r:], s, k, p)]
    choice = rng.random()
    if choice < 0.3:
        osz = None
    else:  # within one stride of the default, sometimes just outside (refused), sometimes with N and C
        osz = [dflt + rng.randint(-st + (0 if rng.random() < 0.05 else 1), st - (0 if rng.random() < 0.05 else 1))
               for dflt, st in zip(default, s)]
        if rng.random() < 0.2:
            osz = list(small.shape[:-r]) + osz
    bad_index = rng.random() < 0.05
    if bad_index:
        idx = idx.clone()
        idx.view(-1)[0] = 10_000  # outside the output plane
    layout = random_layout(rng) if small.dim() == r + 2 else "channels_first"
    t_leaf, t_view = leaf_and_view(small.detach(), layout)
    p_leaf, p_view = leaf_and_view(small.detach(), layout)
    tf, pf = getattr(F, f"max_unpool{r}d"), getattr(pt, f"max_unpool{r}d")
    # PyTorch CUDA's unpool checks indices with a device-side assert, which ends the process's CUDA context: an index
    # outside the output plane (set above, or past a smaller output_size) goes to its CPU kernel, which raises.
    plane = math.prod((osz or default)[-r:])
    if idx.numel() and int(idx.max()) >= plane:
        bad_index = True
    ref = call(tf, t_view.cpu(), idx.cpu(), k, s, p, osz) if bad_index else call(tf, t_view, idx, k, s, p, osz)
    got = call(pf, p_view, idx, k, s, p, osz)
    op = f"max_unpool{r}d"
    if isinstance(ref, Refused):
        assert isinstance(got, Refused), f"PyTorch refused ({ref.args[0]}) but poolkit accepted"
        tally(op, cases=1, refused_by_both=1)
        return
    assert not isinstance(got, Refused), f"poolkit refused what PyTorch accepts: {got.args[0]}"
    if ref.numel() == 0:
        # An output size of 0: an empty output, as PyTorch's (whose backward then fails indexing it); poolkit's
        # gradient is zero, of the input's shape.
        assert got.shape == ref.shape and got.dtype == ref.dtype
        got.backward(torch.zeros_like(got))
        assert p_leaf.grad.shape == p_leaf.shape and not p_leaf.grad.any()
        assert getattr(poolkit, f"max_unpool{r}d")(p_view.detach().cpu().numpy(), idx.cpu().numpy(), k, s, p, osz).shape == \
            tuple(ref.shape)
        tally(op, cases=1, empty_outputs=1)
        return
    assert bits_equal(ref, got), f"outputs differ\n{ref}\n{got}"
    dy = values(rng, tuple(ref.shape), dtype, False)
    ref.backward(dy)
    got.backward(dy)
    assert bits_equal(t_leaf.grad, p_leaf.grad)
    nf, nb = getattr(poolkit, f"max_unpool{r}d"), getattr(poolkit, f"max_unpool{r}d_backward")
    x_np = p_view.detach().cpu().numpy()
    assert bits_equal(as_torch(nf(x_np, idx.cpu().numpy(), k, s, p, osz)), ref)
    assert bits_equal(as_torch(nb(dy.cpu().numpy(), idx.cpu().numpy())), logical_grad(t_leaf, layout))
    tally(op, cases=1, bit_identical_outputs=1, bit_identical_grads=1)


@pytest.mark.parametrize("kw", [dict(), dict(output_size=3, output_ratio=0.5)])
def test_fractional_module_needs_one_of_size_and_ratio(kw):
    """torch.nn refuses a fractional module given neither or both of output_size and output_ratio; so does poolkit."""
    assert isinstance(call(torch.nn.FractionalMaxPool2d, 2, **kw), Refused)
    got = call(pt.nn.FractionalMaxPool2d, 2, **kw)
    assert isinstance(got, Refused) and "output_size" in str(got.args[0])


@pytest.mark.parametrize("r", [2, 3])
def test_fractional_module_takes_one_ratio_for_every_axis(r):
    """torch.nn's fractional modules take a single output_ratio for every axis (their functional forms do not)."""
    x = torch.randn((2, 3) + (9,) * r, generator=torch.Generator(DEVICE).manual_seed(r))
    samples = torch.rand(2, 3, r, generator=torch.Generator(DEVICE).manual_seed(r + 1))
    want = getattr(torch.nn, f"FractionalMaxPool{r}d")(2, output_ratio=0.5, _random_samples=samples)(x)
    got = getattr(pt.nn, f"FractionalMaxPool{r}d")(2, output_ratio=0.5, _random_samples=samples)(x)
    assert bits_equal(got, want)
