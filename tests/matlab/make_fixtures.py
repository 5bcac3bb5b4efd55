"""Expected results for the Octave tests, computed by PyTorch (an independent implementation), written to
fixtures.mat. Regenerate with:  /work/venv-t2/bin/python tests/matlab/make_fixtures.py  (torch 2.x, SciPy).

Each case is a MATLAB-layout array X (axes in DataFormat order; scipy.io.savemat keeps X(i,j,...) = x[i,j,...])
pooled with MATLAB's rules, translated here into torch: the pooled axes become torch's spatial axes, every other
axis is folded into the batch, padding [pre; post] is applied with F.pad (-inf for max, 0 for average) and the
window then runs unpadded. MATLAB's indx is rebuilt from torch's per-plane flat index: 1-based, column-major over
the whole X. dX is the gradient of sum(Y .* G) by autograd. Data are random normals: no ties (ties and NaN have
their hand-worked test)."""
import math
import os

import numpy as np
import scipy.io
import torch
import torch.nn.functional as F

rng = np.random.default_rng(26)


def same_padding(n, k, s):
    out = -(-n // s)
    total = max(0, (out - 1) * s + k - n)
    return total // 2, total - total // 2


def case(op, shape, fmt, pool, stride=None, padding=None, pool_format="S", pv=None, dtype="double"):
    x = rng.standard_normal(shape)
    if dtype == "single":
        x = x.astype(np.float32).astype(np.float64)
    pooled = [i for i, c in enumerate(fmt) if c in pool_format]
    other = [i for i in range(len(fmt)) if i not in pooled]
    r = len(pooled)
    ins = [shape[i] for i in pooled]
    glob = isinstance(pool, str)
    k = ins if glob else ([pool] * r if np.isscalar(pool) else list(pool))
    s = [1] * r if (glob or stride is None) else ([stride] * r if np.isscalar(stride) else list(stride))
    if padding is None or glob:
        lo = hi = [0] * r
    elif padding == "same":
        lo, hi = zip(*[same_padding(n, kk, ss) for n, kk, ss in zip(ins, k, s)])
    else:
        p = np.array(padding)
        if p.ndim == 2:
            lo, hi = list(p[0]), list(p[1])
        else:
            lo = hi = [int(p)] * r if p.ndim == 0 else list(p)
    t = torch.tensor(x).permute(*other, *pooled)
    batch = int(np.prod([shape[i] for i in other]))
    t = t.reshape(batch, 1, *ins).clone().requires_grad_(True)
    pad = []
    for a in reversed(range(r)):
        pad += [int(lo[a]), int(hi[a])]
    pool_fn = {1: (F.max_pool1d, F.avg_pool1d), 2: (F.max_pool2d, F.avg_pool2d), 3: (F.max_pool3d, F.avg_pool3d)}[r]
    if op == "maxpool":
        tp = F.pad(t, pad, value=-math.inf)
        y, idx = pool_fn[0](tp, k, s, return_indices=True)
        padded = [n + a + b for n, a, b in zip(ins, lo, hi)]
        coords = np.unravel_index(idx.numpy(), padded)  # flat, row-major over torch's spatial axes
        coords = [coords[a] - lo[a] for a in range(r)]
    else:
        tp = F.pad(t, pad, value=0.0)
        y = pool_fn[1](tp, k, s) * float(np.prod(k))
        if pv == "mean":
            ones = F.pad(torch.ones_like(t), pad, value=0.0)
            y = y / (pool_fn[1](ones, k, s) * float(np.prod(k)))
        else:
            y = y / float(np.prod(k))
    g = torch.tensor(rng.standard_normal(y.shape))
    (y * g).sum().backward()
    outs = list(y.shape[2:])
    ydims = list(shape)
    for a, i in enumerate(pooled):
        ydims[i] = outs[a]
    inv = np.argsort(other + pooled)

    def back(a, dims):  # torch (batch, 1, spatial...) -> MATLAB axes
        return np.ascontiguousarray(np.asarray(a).reshape([dims[i] for i in other + pooled]).transpose(inv))

    res = {"op": op, "format": fmt, "X": x, "Y": back(y.detach().numpy(), ydims), "G": back(g.numpy(), ydims),
           "dX": back(t.grad.numpy(), shape), "class": dtype}
    res["poolsize"] = pool if glob else np.array(k, dtype=float).reshape(1, -1)
    args = []
    if not glob and stride is not None:
        args += ["Stride", np.array(stride, dtype=float)]
    if not glob and padding is not None:
        args += ["Padding", padding if isinstance(padding, str) else np.array(padding, dtype=float)]
    args += ["DataFormat", fmt]
    if pool_format != "S":
        args += ["PoolFormat", pool_format]
    if pv is not None:
        args += ["PaddingValue", pv]
    cell = np.empty((1, len(args)), dtype=object)
    for i, a in enumerate(args):
        cell[0, i] = a
    res["args"] = cell
    if op == "maxpool":
        # plane coordinates (torch's spatial axes = MATLAB's pooled axes in order) + folded batch -> MATLAB linear
        bidx = np.arange(batch).reshape([batch, 1] + [1] * r) * np.ones(y.shape, dtype=np.int64)
        bcoords = np.unravel_index(bidx, [shape[i] for i in other]) if other else []
        full = [None] * len(fmt)
        for j, i in enumerate(other):
            full[i] = bcoords[j]
        for a, i in enumerate(pooled):
            full[i] = coords[a]
        strides = np.cumprod([1] + list(shape[:-1]))
        lin = 1 + sum(full[i] * strides[i] for i in range(len(fmt)))
        res["indx"] = back(lin.astype(float), ydims)
    return res


cases = {
    "max_2xN_padding": case("maxpool", (7, 6, 3, 2), "SSCB", [3, 2], [2, 1], [[1, 0], [0, 1]]),
    "max_same_single": case("maxpool", (9, 8, 2, 3), "SSCB", 3, 2, "same", dtype="single"),
    "max_bssc_vector_padding": case("maxpool", (2, 6, 7, 3), "BSSC", [2, 3], [2, 2], [1, 1]),
    "max_cssb": case("maxpool", (3, 5, 6, 2), "CSSB", 2, 1, 1),
    "max_1d": case("maxpool", (11, 2, 3), "SCB", 3, 2, 1),
    "max_3d": case("maxpool", (4, 6, 5, 2, 2), "SSSCB", 2, 2),
    "max_global": case("maxpool", (5, 4, 3, 2), "SSCB", "global"),
    "max_time": case("maxpool", (3, 2, 9), "CBT", 3, 2, pool_format="T"),
    "max_sscbt": case("maxpool", (6, 6, 2, 2, 3), "SSCBT", 2, 2),
    "max_stride1_default": case("maxpool", (5, 5, 2, 1), "SSCB", 2),
    "avg_pad0": case("avgpool", (7, 6, 2, 2), "SSCB", 3, 2, [[1, 1], [1, 0]]),
    "avg_mean_same": case("avgpool", (7, 9, 2, 2), "SSCB", 3, 2, "same", pv="mean"),
    "avg_mean_single": case("avgpool", (8, 5, 3), "SCB", 3, 1, 1, pv="mean", dtype="single"),
    "avg_global": case("avgpool", (4, 5, 3, 2), "SSCB", "global"),
    "avg_3d_bssc": case("avgpool", (2, 4, 4, 4, 3), "BSSSC", 2, 2),
}
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures.mat")
scipy.io.savemat(out, {"cases": cases}, do_compression=True, oned_as="row")
print("wrote", out, "with", len(cases), "cases")
