"""One max-family case against PyTorch: outputs, int64 indices and gradients bit for bit through poolkit.torch,
then the NumPy-level forward and backward (with indices and with the argmax recomputed) on the same memory."""
import numpy as np
import torch

from known_differences import check_bits
from oracle import Refused, as_torch, bits_equal, call, leaf_and_view, logical_grad, oracle_leaf_and_view, values


def _channels_last_kept(view, out):
    if out.numel() == 0:  # an empty output has no memory layout to keep
        return True
    if view.dim() == 4:
        fmt = torch.channels_last
    elif view.dim() == 5:
        fmt = torch.channels_last_3d
    else:
        return True
    if view.is_contiguous(memory_format=fmt) and not view.is_contiguous():
        return out.is_contiguous(memory_format=fmt)
    return True


def check_max_pair(tally, op, rng, base, dtype, layout, torch_fn, pk_fn, np_fn, np_backward, pk_plain=None,
                   key=None):
    """Runs both; returns after matching refusals, else compares everything bit for bit. pk_plain: pk_fn without
    return_indices, whose backward goes through the compact window-local argmax it saved. key: (test, r, case) of
    known_differences.py, for cases whose PyTorch indices are a listed difference; the oracle there is PyTorch's
    channels-first kernel on the same values."""
    t_leaf, t_view = oracle_leaf_and_view(base, layout)
    p_leaf, p_view = leaf_and_view(base, layout)
    ref = call(torch_fn, t_view)
    got = call(pk_fn, p_view)
    if isinstance(ref, Refused):
        assert isinstance(got, Refused), f"PyTorch refused ({ref.args[0]}) but poolkit accepted"
        tally(op, cases=1, refused_by_both=1)
        return
    if isinstance(got, Refused) and "reads no input cell" in str(got.args[0]):
        # A window of padding alone: PyTorch returns -inf with an index that is not in the window (often outside
        # the plane, where its backward would write out of bounds); poolkit refuses such geometries.
        y, idx = ref
        assert bool(torch.isneginf(y).any()), "poolkit saw an empty window where PyTorch read cells"
        tally(op, cases=1, empty_window_refused_by_poolkit=1)
        return
    assert not isinstance(got, Refused), f"poolkit refused what PyTorch accepts: {got.args[0]}"
    (y, idx), (gy, gidx) = ref, got
    assert bits_equal(y, gy), f"outputs differ\n{y}\n{gy}"
    identical = bits_equal(idx, gidx)
    if key is not None:
        check_bits(identical, *key, "indices")
    if not identical:  # a listed difference (check_bits passed): PyTorch's channels-first kernel is the oracle
        t_leaf, t_view = oracle_leaf_and_view(base, "channels_first")
        y, idx = torch_fn(t_view)
        layout_t = "channels_first"
    else:
        layout_t = layout
    assert bits_equal(idx, gidx), f"indices differ\n{idx}\n{gidx}"
    assert _channels_last_kept(p_view, gy)
    dy = values(rng, tuple(y.shape), dtype, False)
    y.backward(dy.to(y.device))
    gy.backward(dy)
    assert bits_equal(logical_grad(t_leaf, layout_t), logical_grad(p_leaf, layout)), "gradients differ"
    if pk_plain is not None:
        c_leaf, c_view = leaf_and_view(base, layout)
        cy = pk_plain(c_view)
        assert bits_equal(cy, y), "outputs differ without return_indices"
        cy.backward(dy)
        assert bits_equal(logical_grad(c_leaf, layout), logical_grad(t_leaf, layout_t)), \
            "gradients through the compact argmax differ"
    # The NumPy-level functions on the same memory (zero-copy views of the torch tensors).
    x_np = p_view.detach().cpu().numpy()
    ny, nidx = np_fn(x_np)
    assert bits_equal(as_torch(ny), y) and np.array_equal(nidx, idx.cpu().numpy())
    ref_grad = logical_grad(t_leaf, layout_t)
    assert bits_equal(as_torch(np_backward(dy.cpu().numpy(), x_np, nidx)), ref_grad)
    assert bits_equal(as_torch(np_backward(dy.cpu().numpy(), x_np, None)), ref_grad)  # argmax recomputed
    tally(op, cases=1, bit_identical_outputs=1, bit_identical_indices=1, bit_identical_grads=1,
          **({} if identical else {"indices_listed_vs_channels_first_torch": 1}))
