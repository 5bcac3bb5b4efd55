"""Random cases wide enough for the CPU's wide and special kernels (src/cpu), against PyTorch bit for bit.
The other random tests use planes of at most 9 cells a row, which the blocks-of-planes path takes (planes of at most
1,024 cells with fewer than 8 outputs a row: blocks_pay in plane_blocks.cpp). Here rows run past the vector sizes
(16 float32 / 8 float64 lanes) and several vectors: the row kernels along W (channels-first) or over (W, C)
(channels-last); kernel == stride without padding: the tiled backward; 3x3 windows of stride 2 with padding 0 or
1, W >= 32 and at least 16 outputs a row: the k3s2 forward, and with the one-byte argmax saved when no indices
are asked for, the k3s2 backward (k3s2_fits in backward_k3s2.cpp)."""
import pytest
import torch.nn.functional as F

import poolkit
import poolkit.torch as pt
from max_pair import check_max_pair
from oracle import DTYPES, bits_equal, leaf_and_view, new_rng, values

LAYOUTS = ("channels_first", "channels_last")


def wide_geometry(rng, kind):
    """(kernel, stride, padding, dilation, ceil_mode, H, W) of a 2-D case of the kind."""
    if kind == "k3s2":
        return 3, 2, rng.randint(0, 1), 1, rng.random() < 0.5, rng.randint(3, 16), rng.randint(32, 90)
    if kind == "tiled":
        k = rng.randint(2, 4)
        return k, k, 0, 1, False, k * rng.randint(1, 5), k * rng.randint(9, 30)
    k, d = rng.randint(1, 4), rng.choice([1, 1, 2])
    p = rng.randint(0, k // 2)  # (PyTorch's older rule, which some of its paths keep)
    span = d * (k - 1) + 1
    return k, rng.randint(1, 3), p, d, rng.random() < 0.5, rng.randint(span, span + 7), rng.randint(17, 80)


def case_input(rng, kind, specials):
    k, s, p, d, ceil, h, w = wide_geometry(rng, kind)
    shape = (rng.randint(1, 2), rng.randint(1, 3), h, w)
    dtype = rng.choice(DTYPES)
    return (k, s, p, d, ceil), values(rng, shape, dtype, specials and rng.random() < 0.3), dtype, rng.choice(LAYOUTS)


@pytest.mark.parametrize("case", range(25))
@pytest.mark.parametrize("kind", ["k3s2", "tiled", "rows"])
def test_max_pool2d_wide(kind, case, tally):
    rng = new_rng("wide max_pool2d", kind, case)
    (k, s, p, d, ceil), base, dtype, layout = case_input(rng, kind, True)
    kw = dict(kernel_size=k, stride=s, padding=p, dilation=d, ceil_mode=ceil)
    check_max_pair(tally, f"wide max_pool2d {kind}", rng, base, dtype, layout,
                   lambda x: F.max_pool2d(x, return_indices=True, **kw),
                   lambda x: pt.max_pool2d(x, return_indices=True, **kw),
                   lambda x: poolkit.max_pool2d(x, return_indices=True, **kw),
                   lambda dy, x, i: poolkit.max_pool2d_backward(dy, x, i, **kw),
                   pk_plain=lambda x: pt.max_pool2d(x, **kw))


@pytest.mark.parametrize("case", range(25))
@pytest.mark.parametrize("kind", ["k3s2", "tiled", "rows"])
def test_avg_pool2d_wide(kind, case, tally):
    rng = new_rng("wide avg_pool2d", kind, case)
    (k, s, p, _, ceil), base, dtype, layout = case_input(rng, kind, False)
    kw = dict(kernel_size=k, stride=s, padding=p, ceil_mode=ceil, count_include_pad=rng.random() < 0.5)
    t_leaf, t_view = leaf_and_view(base, layout)
    p_leaf, p_view = leaf_and_view(base, layout)
    want, got = F.avg_pool2d(t_view, **kw), pt.avg_pool2d(p_view, **kw)
    assert bits_equal(got, want)
    dy = values(rng, tuple(want.shape), dtype, False)
    want.backward(dy)
    got.backward(dy)
    assert bits_equal(p_leaf.grad, t_leaf.grad)
    tally(f"wide avg_pool2d {kind}", cases=1, bit_identical_outputs=1, bit_identical_grads=1)


@pytest.mark.parametrize("case", range(20))
def test_pool1d_and_3d_wide(case, tally):
    rng = new_rng("wide 1d 3d", case)
    r = rng.choice([1, 3])
    k, s = rng.randint(1, 4), rng.randint(1, 3)
    p = rng.randint(0, k // 2)
    spatial = [rng.randint(40, 300)] if r == 1 else [rng.randint(k, 4), rng.randint(k, 6), rng.randint(20, 70)]
    dtype = rng.choice(DTYPES)
    base = values(rng, (rng.randint(1, 2), rng.randint(1, 3), *spatial), dtype, False)
    layout = rng.choice(LAYOUTS)
    mx = dict(kernel_size=k, stride=s, padding=p, ceil_mode=rng.random() < 0.5)
    tf, pf = getattr(F, f"max_pool{r}d"), getattr(pt, f"max_pool{r}d")
    nf, nb = getattr(poolkit, f"max_pool{r}d"), getattr(poolkit, f"max_pool{r}d_backward")
    check_max_pair(tally, f"wide max_pool{r}d", rng, base, dtype, layout,
                   lambda x: tf(x, return_indices=True, **mx), lambda x: pf(x, return_indices=True, **mx),
                   lambda x: nf(x, return_indices=True, **mx), lambda dy, x, i: nb(dy, x, i, **mx),
                   pk_plain=lambda x: pf(x, **mx))
    t_leaf, t_view = leaf_and_view(base, layout)
    p_leaf, p_view = leaf_and_view(base, layout)
    want, got = getattr(F, f"avg_pool{r}d")(t_view, **mx), getattr(pt, f"avg_pool{r}d")(p_view, **mx)
    assert bits_equal(got, want)
    dy = values(rng, tuple(want.shape), dtype, False)
    want.backward(dy)
    got.backward(dy)
    assert bits_equal(p_leaf.grad, t_leaf.grad)
    tally(f"wide avg_pool{r}d", cases=1, bit_identical_outputs=1, bit_identical_grads=1)
