"""Zero-size batch and channel dimensions: poolkit does what PyTorch 1.13 does for each operator (an empty
output, or an error), on both the NumPy functions and the torch drop-ins. PyTorch itself is the oracle."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

import poolkit
import poolkit.torch as pt


def ops(r):
    return {
        f"max_pool{r}d": ((2,), {}),
        f"avg_pool{r}d": ((2,), {}),
        f"adaptive_max_pool{r}d": ((2,), {}),
        f"adaptive_avg_pool{r}d": ((2,), {}),
        **({f"lp_pool{r}d": ((2, 2), {})} if r < 3 else {}),
        **({f"fractional_max_pool{r}d": ((2,), {"output_size": 3})} if r > 1 else {}),
    }


CASES = [(r, name, args, kw) for r in (1, 2, 3) for name, (args, kw) in ops(r).items()]


def outcome(fn, x, args, kw):
    try:
        return tuple(fn(x, *args, **kw).shape)
    except (RuntimeError, ValueError, IndexError):
        return "error"


@pytest.mark.parametrize("empty_axis", [0, 1])
@pytest.mark.parametrize("r, name, args, kw", CASES, ids=[c[1] for c in CASES])
def test_like_pytorch(empty_axis, r, name, args, kw, tally):
    shape = [2, 3] + [8] * r
    shape[empty_axis] = 0
    x = torch.zeros(shape)
    want = outcome(getattr(F, name), x, args, kw)
    assert outcome(getattr(pt, name), x, args, kw) == want
    assert outcome(getattr(poolkit, name), x.numpy(), args, kw) == want
    tally("empty dims vs torch", cases=1, **{"errors" if want == "error" else "empty_outputs": 1})


@pytest.mark.parametrize("empty_axis", [0, 1])
@pytest.mark.parametrize("r", [1, 2, 3])
def test_unpool_like_pytorch(empty_axis, r, tally):
    shape = [2, 3] + [4] * r
    shape[empty_axis] = 0
    x, idx = torch.zeros(shape), torch.zeros(shape, dtype=torch.int64)
    name = f"max_unpool{r}d"
    want = outcome(lambda a, *args: getattr(F, name)(a, idx, *args), x, (2,), {})
    assert outcome(lambda a, *args: getattr(pt, name)(a, idx, *args), x, (2,), {}) == want
    assert outcome(lambda a, *args: getattr(poolkit, name)(a, idx.numpy(), *args), x.numpy(), (2,), {}) == want
    tally("empty dims vs torch", cases=1, **{"errors" if want == "error" else "empty_outputs": 1})


def test_message_names_the_rule():
    with pytest.raises(ValueError, match="input: every dimension but the batch must be non-zero"):
        poolkit.max_pool2d(np.zeros((2, 0, 4, 4), np.float32), 2)
