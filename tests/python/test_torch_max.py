"""Max pooling (regular, adaptive, global) against PyTorch: outputs, int64 indices and gradients bit for bit,
through poolkit.torch (autograd) and the NumPy-level functions with their *_backward."""
import pytest
import torch
import torch.nn.functional as F

import poolkit
import poolkit.torch as pt
from max_pair import check_max_pair
from oracle import DTYPES, maybe_tuple, new_rng, random_layout, unbatched_shape, values

CASES = 450


@pytest.mark.parametrize("case", range(CASES))
@pytest.mark.parametrize("r", [1, 2, 3])
def test_max_pool(r, case, tally):
    rng = new_rng("max_pool", r, case)
    k = [rng.randint(1, 4) for _ in range(r)]
    d = [1] * r if rng.random() < 0.6 else [rng.randint(1, 3) for _ in range(r)]
    p = [rng.randint(0, (di * (ki - 1) + 1) // 2) for ki, di in zip(k, d)]
    if rng.random() < 0.05:
        p[0] += 1  # beyond the rule: both must refuse
    s = None if rng.random() < 0.3 else [rng.randint(1, 3) for _ in range(r)]
    ceil = rng.random() < 0.5
    sizes = [rng.randint(1, 9 if r < 3 else 6) for _ in range(r)]
    shape = unbatched_shape([rng.randint(1, 2), rng.randint(1, 3)] + sizes, rng)
    dtype = rng.choice(DTYPES)
    layout = random_layout(rng) if len(shape) == r + 2 else "channels_first"
    base = values(rng, shape, dtype, rng.random() < 0.3)
    kw = dict(kernel_size=maybe_tuple(rng, k), stride=None if s is None else maybe_tuple(rng, s),
              padding=maybe_tuple(rng, p), dilation=maybe_tuple(rng, d), ceil_mode=ceil)
    tf = getattr(F, f"max_pool{r}d")
    pf = getattr(pt, f"max_pool{r}d")
    nf = getattr(poolkit, f"max_pool{r}d")
    nb = getattr(poolkit, f"max_pool{r}d_backward")
    check_max_pair(tally, f"max_pool{r}d", rng, base, dtype, layout,
                lambda x: tf(x, return_indices=True, **kw), lambda x: pf(x, return_indices=True, **kw),
                lambda x: nf(x, return_indices=True, **kw), lambda dy, x, i: nb(dy, x, i, **kw),
                pk_plain=lambda x: pf(x, **kw), key=("max_pool", r, case))


@pytest.mark.parametrize("case", range(200))
@pytest.mark.parametrize("r", [1, 2, 3])
def test_adaptive_max_pool(r, case, tally):
    rng = new_rng("adaptive_max_pool", r, case)
    sizes = [rng.randint(1, 10 if r < 3 else 6) for _ in range(r)]
    out = [rng.randint(1, 2 * s + 1) for s in sizes]  # smaller and larger than the input
    if r > 1 and rng.random() < 0.2:
        out[0] = None  # PyTorch: keep the input size
    shape = unbatched_shape([rng.randint(1, 2), rng.randint(1, 3)] + sizes, rng)
    dtype = rng.choice(DTYPES)
    layout = random_layout(rng) if len(shape) == r + 2 else "channels_first"
    base = values(rng, shape, dtype, rng.random() < 0.3)
    osz = out[0] if r == 1 else tuple(out)
    tf, pf = getattr(F, f"adaptive_max_pool{r}d"), getattr(pt, f"adaptive_max_pool{r}d")
    nf, nb = getattr(poolkit, f"adaptive_max_pool{r}d"), getattr(poolkit, f"adaptive_max_pool{r}d_backward")
    check_max_pair(tally, f"adaptive_max_pool{r}d", rng, base, dtype, layout,
                lambda x: tf(x, osz, return_indices=True), lambda x: pf(x, osz, return_indices=True),
                lambda x: nf(x, osz, return_indices=True), lambda dy, x, i: nb(dy, x, i), pk_plain=lambda x: pf(x, osz),
                key=("adaptive_max_pool", r, case))


@pytest.mark.parametrize("case", range(60))
def test_global_max_pool(case, tally):
    rng = new_rng("global_max_pool", case)
    r = rng.randint(1, 3)
    shape = [rng.randint(1, 2), rng.randint(1, 3)] + [rng.randint(1, 6) for _ in range(r)]
    dtype = rng.choice(DTYPES)
    base = values(rng, shape, dtype, rng.random() < 0.3)
    tf = getattr(F, f"adaptive_max_pool{r}d")
    check_max_pair(tally, "global_max_pool", rng, base, dtype, random_layout(rng),
                lambda x: tf(x, 1, return_indices=True), lambda x: pt.global_max_pool(x, return_indices=True),
                lambda x: poolkit.global_max_pool(x, return_indices=True),
                lambda dy, x, i: poolkit.global_max_pool_backward(dy, x, i), pk_plain=pt.global_max_pool,
                key=("global_max_pool", None, case))
