"""Calls of every poolkit.torch function and their torch.nn.functional twins (None where PyTorch has none), on
channels-first and channels-last inputs, shared by the compile, export and gradient tests."""
import os

import torch
import torch.nn.functional as F

import poolkit.torch as pt

# POOLKIT_TEST_DEVICE=cuda: the same calls on a GPU (torch's default device), as tests/python/oracle.py does.
DEVICE = os.environ.get("POOLKIT_TEST_DEVICE", "cpu")
if DEVICE != "cpu":
    torch.set_default_device(DEVICE)


def _samples(r):
    return torch.rand(2, 3, r, generator=torch.Generator(DEVICE).manual_seed(7), dtype=torch.float64)


def _unpool(r):
    def pk(x):
        y, i = pt.__dict__[f"max_pool{r}d"](x, 2, 2, return_indices=True)
        return pt.__dict__[f"max_unpool{r}d"](y, i, 2, 2, output_size=x.shape[2:])

    def tf(x):
        y, i = F.__dict__[f"max_pool{r}d"](x, 2, 2, return_indices=True)
        return F.__dict__[f"max_unpool{r}d"](y, i, 2, 2, output_size=x.shape[2:])
    return pk, tf


def cases(r):
    """(name, poolkit call, torch call or None): each maps a (N, C, spatial...) tensor to one tensor."""
    s = _samples(r)
    out = [
        ("max", lambda x: pt.__dict__[f"max_pool{r}d"](x, 3, 2, 1), lambda x: F.__dict__[f"max_pool{r}d"](x, 3, 2, 1)),
        ("max_dilated_ceil", lambda x: pt.__dict__[f"max_pool{r}d"](x, 2, 2, 1, 2, True),
         lambda x: F.__dict__[f"max_pool{r}d"](x, 2, 2, 1, 2, True)),
        ("max_indices", lambda x: pt.__dict__[f"max_pool{r}d"](x, 2, 1, return_indices=True)[0],
         lambda x: F.__dict__[f"max_pool{r}d"](x, 2, 1, return_indices=True)[0]),
        ("max_same", lambda x: pt.__dict__[f"max_pool{r}d"](x, 3, 2, "same"), None),
        ("max_onnx_pads", lambda x: pt.__dict__[f"max_pool{r}d"](x, 3, 1, [(1, 0)] * r), None),
        ("avg", lambda x: pt.__dict__[f"avg_pool{r}d"](x, 3, 2, 1), lambda x: F.__dict__[f"avg_pool{r}d"](x, 3, 2, 1)),
        ("avg_excl_ceil", lambda x: pt.__dict__[f"avg_pool{r}d"](x, 2, 2, 1, True, False),
         lambda x: F.__dict__[f"avg_pool{r}d"](x, 2, 2, 1, True, False)),
        ("lp", lambda x: pt.__dict__[f"lp_pool{r}d"](x, 2.0, 2), lambda x: F.__dict__[f"lp_pool{r}d"](x, 2.0, 2)),
        ("adaptive_max", lambda x: pt.__dict__[f"adaptive_max_pool{r}d"](x, 3),
         lambda x: F.__dict__[f"adaptive_max_pool{r}d"](x, 3)),
        ("adaptive_avg", lambda x: pt.__dict__[f"adaptive_avg_pool{r}d"](x, 3),
         lambda x: F.__dict__[f"adaptive_avg_pool{r}d"](x, 3)),
        ("unpool",) + _unpool(r),
        ("mixed", lambda x: pt.__dict__[f"mixed_pool{r}d"](x, 2), None),
        ("stochastic", lambda x: pt.__dict__[f"stochastic_pool{r}d"](x, 2, seed=3), None),
        ("global_max", lambda x: pt.global_max_pool(x), None),
        ("global_avg", lambda x: pt.global_avg_pool(x), None),
        ("global_lp", lambda x: pt.global_lp_pool(x), None),
    ]
    if r > 1:
        out.append(("fractional", lambda x: pt.__dict__[f"fractional_max_pool{r}d"](
            x, 2, output_size=3, _random_samples=s[:x.shape[0], :x.shape[1]].to(x)),
            lambda x: F.__dict__[f"fractional_max_pool{r}d"](x, 2, output_size=3, _random_samples=s[:x.shape[0], :x.shape[1]].to(x))))
    return out


def inputs(r, dtype=torch.float32, seed=0, small=False):
    """A channels-first and a channels-last input with distinct values (ties would blur max's argmax); small: few
    cells, for finite differences."""
    g = torch.Generator(DEVICE).manual_seed(seed)
    shape = ((1, 2) + (6, 5, 5)[:r] if r < 3 else (1, 1, 5, 5, 5)) if small else (2, 3) + (7, 6, 5)[:r]
    x = torch.randperm(torch.Size(shape).numel(), generator=g).reshape(shape).to(dtype) / 10
    cl = x.movedim(1, -1).contiguous().movedim(-1, 1)
    return {"channels_first": x, "channels_last": cl}
