"""ONNX conventions against ONNX Runtime: asymmetric pads, auto_pad, count_include_pad=0, MaxPool indices with
storage_order, LpPool and GlobalLpPool, dilated AveragePool and LpPool; MaxUnpool against ONNX's reference."""
import math

import numpy as np
import pytest
import torch

import poolkit
import poolkit.torch
from known_differences import check_bits
from oracle import as_torch, bits_equal, close, new_rng

onnx = pytest.importorskip("onnx", reason="the test command installs onnx and onnxruntime")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper  # noqa: E402

_TYPES = {np.float32: TensorProto.FLOAT, np.float64: TensorProto.DOUBLE}


def run_onnx(op, x, attrs, n_outputs=1, opset=18):
    elem = _TYPES[x.dtype.type]
    outs = ["Y", "I"][:n_outputs]
    node = helper.make_node(op, ["X"], outs, **attrs)
    out_info = [helper.make_tensor_value_info("Y", elem, None)]
    if n_outputs == 2:
        out_info.append(helper.make_tensor_value_info("I", TensorProto.INT64, None))
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", elem, list(x.shape))], out_info)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return sess.run(None, {"X": x})


def ties(rng, shape, dtype):
    g = np.random.default_rng(rng.randrange(2**31))
    if rng.random() < 0.5:
        return (g.integers(-3, 4, size=shape) * 0.5).astype(dtype)
    return g.standard_normal(shape).astype(dtype)


def geometry(rng, r, dilated=True):
    k = [rng.randint(1, 4) for _ in range(r)]
    s = [rng.randint(1, 3) for _ in range(r)]
    d = [rng.randint(1, 2) if dilated else 1 for _ in range(r)]
    sizes = [rng.randint(d_ * (k_ - 1) + 1, max(d_ * (k_ - 1) + 1, 9 if r < 3 else 6)) for k_, d_ in zip(k, d)]
    pads = [rng.randint(0, (d_ * (k_ - 1)) // 2) for k_, d_ in zip(k, d)] + \
           [rng.randint(0, (d_ * (k_ - 1)) // 2) for k_, d_ in zip(k, d)]
    return k, s, d, sizes, pads


def pk_padding(pads, r, auto_pad):
    if auto_pad != "NOTSET":
        return auto_pad
    return tuple((pads[i], pads[i + r]) for i in range(r))


def ort_negative_same_pad(auto_pad, sizes, k, s):
    """ONNX Runtime 1.20 does not clamp SAME_* padding at 0 when the stride exceeds the kernel: it then reads
    shifted windows. The spec (and poolkit) pad max(0, ...)."""
    return auto_pad.startswith("SAME") and any(
        ((n + st - 1) // st - 1) * st + kk - n < 0 for n, kk, st in zip(sizes, k, s))


def ceil_overhang(y, y_ref, ceil, tally, op):
    """ONNX Runtime 1.20 keeps a last ceil-mode window that starts past the input (and its padding); PyTorch's rule,
    which poolkit and the ONNX spec follow, drops it. Returns ORT's result cut to poolkit's shape."""
    if y.shape == y_ref.shape:
        return y_ref
    assert ceil, f"shapes differ without ceil_mode: {y.shape} vs {y_ref.shape}"
    assert all(b - a in (0, 1) for a, b in zip(y.shape, y_ref.shape)), (y.shape, y_ref.shape)
    tally(op, ort_extra_ceil_window=1)
    return y_ref[tuple(slice(0, n) for n in y.shape)]


def onnx_indices(idx, shape, storage_order):
    """poolkit's per-plane flat indices as ONNX numbers them: over the whole tensor, spatial row- or column-major."""
    n, c, spatial = shape[0], shape[1], list(shape[2:])
    plane = math.prod(spatial)
    coords = np.unravel_index(idx, spatial)
    flat = np.ravel_multi_index(coords, spatial, order="F" if storage_order else "C")
    nc = (np.arange(n)[:, None] * c + np.arange(c)[None, :]).reshape((n, c) + (1,) * len(spatial))
    return nc * plane + flat


@pytest.mark.parametrize("case", range(200))
def test_max_pool(case, tally):
    rng = new_rng("onnx_max", case)
    r = rng.randint(1, 3)
    auto_pad = rng.choice(["NOTSET"] * 3 + ["SAME_UPPER", "SAME_LOWER", "VALID"])
    # ONNX Runtime sizes SAME_* padding without the dilation (the spec uses the dilated kernel): dilate elsewhere
    k, s, d, sizes, pads = geometry(rng, r, dilated=not auto_pad.startswith("SAME"))
    ceil = auto_pad == "NOTSET" and rng.random() < 0.3
    storage_order = 1 if r == 2 and rng.random() < 0.4 else 0
    dtype = rng.choice([np.float32, np.float64])
    x = ties(rng, [rng.randint(1, 2), rng.randint(1, 3)] + sizes, dtype)
    attrs = dict(kernel_shape=k, strides=s, dilations=d, auto_pad=auto_pad, ceil_mode=int(ceil),
                 storage_order=storage_order)
    if auto_pad == "NOTSET":
        attrs["pads"] = pads
    if ort_negative_same_pad(auto_pad, sizes, k, s):
        tally("onnx MaxPool", skipped_ort_negative_same_pad=1)
        return
    y_ref, i_ref = run_onnx("MaxPool", x, attrs, 2, opset=12)
    fn = getattr(poolkit, f"max_pool{r}d")
    y, idx = fn(x, k, s, pk_padding(pads, r, auto_pad), d, ceil, return_indices=True)
    y_ref = ceil_overhang(y, y_ref, ceil, tally, "onnx MaxPool")
    i_ref = ceil_overhang(y, i_ref, ceil, lambda *a, **k: None, "")
    assert np.array_equal(y, y_ref)
    assert np.array_equal(onnx_indices(idx, x.shape, storage_order), i_ref)
    tally(f"onnx MaxPool{' storage_order=1' if storage_order else ''}", cases=1, bit_identical_outputs=1,
          bit_identical_indices=1)


@pytest.mark.parametrize("case", range(200))
def test_average_pool(case, tally):
    rng = new_rng("onnx_avg", case)
    r = rng.randint(1, 3)
    k, s, _, sizes, pads = geometry(rng, r, dilated=False)
    auto_pad = rng.choice(["NOTSET"] * 3 + ["SAME_UPPER", "SAME_LOWER", "VALID"])
    include = int(rng.random() < 0.4)
    # ORT divides a ceil-mode window that overhangs the end padding by the whole kernel; PyTorch (and poolkit) never
    # count the overhang, so ceil_mode is compared with count_include_pad=0 only.
    ceil = auto_pad == "NOTSET" and not include and rng.random() < 0.4
    x = ties(rng, [rng.randint(1, 2), rng.randint(1, 3)] + sizes, np.float32)  # ORT's CPU AveragePool: float only
    attrs = dict(kernel_shape=k, strides=s, auto_pad=auto_pad, ceil_mode=int(ceil), count_include_pad=include)
    if auto_pad == "NOTSET":
        attrs["pads"] = pads
    if ort_negative_same_pad(auto_pad, sizes, k, s):
        tally(f"onnx AveragePool count_include_pad={include}", skipped_ort_negative_same_pad=1)
        return
    (y_ref,) = run_onnx("AveragePool", x, attrs, opset=11)
    fn = getattr(poolkit, f"avg_pool{r}d")
    y = fn(x, k, s, pk_padding(pads, r, auto_pad), ceil, bool(include))
    y_ref = ceil_overhang(y, y_ref, ceil, tally, f"onnx AveragePool count_include_pad={include}")
    assert close(as_torch(y_ref), as_torch(y), float(np.abs(x).max()) * math.prod(k))
    check_bits(bits_equal(as_torch(y_ref), as_torch(y)), "onnx_avg", None, case, "output")
    tally(f"onnx AveragePool count_include_pad={include}", cases=1,
          bit_identical_outputs=bits_equal(as_torch(y_ref), as_torch(y)))


@pytest.mark.parametrize("case", range(150))
def test_lp_pool(case, tally):
    rng = new_rng("onnx_lp", case)
    r = rng.randint(1, 3)
    k, s, _, sizes, pads = geometry(rng, r, dilated=False)
    p = rng.choice([1, 2, 3])
    x = ties(rng, [rng.randint(1, 2), rng.randint(1, 3)] + sizes, np.float32)
    (y_ref,) = run_onnx("LpPool", x, dict(kernel_shape=k, strides=s, pads=pads, p=p))
    fn = getattr(poolkit, f"lp_pool{r}d")
    y = fn(x, p, k, s, padding=pk_padding(pads, r, "NOTSET"), convention="onnx")
    assert y.shape == y_ref.shape
    assert close(as_torch(y_ref), as_torch(y), float(np.abs(x).max()) * math.prod(k), ulps=16)
    check_bits(bits_equal(as_torch(y_ref), as_torch(y)), "onnx_lp", None, case, "output")
    tally("onnx LpPool", cases=1, bit_identical_outputs=bits_equal(as_torch(y_ref), as_torch(y)))


@pytest.mark.parametrize("case", range(60))
def test_global_lp_pool(case, tally):
    rng = new_rng("onnx_global_lp", case)
    r = rng.randint(1, 3)
    p = rng.choice([1, 2, 3])
    x = ties(rng, [rng.randint(1, 2), rng.randint(1, 3)] + [rng.randint(1, 6) for _ in range(r)], np.float32)
    (y_ref,) = run_onnx("GlobalLpPool", x, dict(p=p))
    y = poolkit.global_lp_pool(x, p)
    assert y.shape == y_ref.shape
    assert close(as_torch(y_ref), as_torch(y), float(np.abs(x).max()) * x[0, 0].size, ulps=16)
    check_bits(bits_equal(as_torch(y_ref), as_torch(y)), "onnx_global_lp", None, case, "output")
    tally("onnx GlobalLpPool", cases=1, bit_identical_outputs=bits_equal(as_torch(y_ref), as_torch(y)))


def dilated_geometry(rng, r):
    """Kernel, strides, dilations (up to 3), sizes and pads ONNX Runtime accepts (pads below the kernel)."""
    k = [rng.randint(1, 4) for _ in range(r)]
    s = [rng.randint(1, 3) for _ in range(r)]
    d = [rng.randint(1, 3) for _ in range(r)]
    sizes = [rng.randint(d_ * (k_ - 1) + 1, d_ * (k_ - 1) + 6) for k_, d_ in zip(k, d)]
    pads = [rng.randint(0, min(k_ - 1, d_ * (k_ - 1) // 2)) for _ in range(2) for k_, d_ in zip(k, d)]
    return k, s, d, sizes, pads


@pytest.mark.parametrize("case", range(120))
def test_dilated_average_and_lp_pool(case, tally):
    """AveragePool and LpPool with dilations (opset 19), count_include_pad both ways, ceil_mode: ONNX's divisor
    with count_include_pad=1 is the whole kernel, taps past the end of the padding in ceil_mode included."""
    rng = new_rng("onnx_dilated_sum", case)
    r = rng.randint(1, 3)
    k, s, d, sizes, pads = dilated_geometry(rng, r)
    x = ties(rng, [rng.randint(1, 2), rng.randint(1, 3)] + sizes, np.float32)
    pad = pk_padding(pads, r, "NOTSET")
    attrs = dict(kernel_shape=k, strides=s, dilations=d, pads=pads)
    if rng.random() < 0.5:
        op, include, ceil = "AveragePool", rng.randint(0, 1), rng.random() < 0.5
        attrs.update(count_include_pad=include, ceil_mode=int(ceil))
        y = getattr(poolkit, f"avg_pool{r}d")(x, k, s, pad, ceil, bool(include), dilation=d, convention="onnx")
        op = f"{op} count_include_pad={include}"
    else:
        op, p, ceil = "LpPool", rng.choice([1, 2, 3]), False
        attrs["p"] = p
        y = getattr(poolkit, f"lp_pool{r}d")(x, p, k, s, padding=pad, dilation=d, convention="onnx")
    (y_ref,) = run_onnx(op.split()[0], x, attrs, opset=19)
    y_ref = ceil_overhang(y, y_ref, ceil, tally, f"onnx dilated {op}")
    assert close(as_torch(y_ref), as_torch(y), float(np.abs(x).max()) * math.prod(k), ulps=16)
    tally(f"onnx dilated {op}", cases=1, bit_identical_outputs=bits_equal(as_torch(y_ref), as_torch(y)))


@pytest.mark.parametrize("case", range(40))
def test_dilated_average_and_lp_backward(case):
    """The backward of dilated average (adjoint of the forward checked above) and Lp pooling (central differences
    in float64) under ONNX's conventions."""
    rng = new_rng("onnx_dilated_sum_backward", case)
    r = rng.randint(1, 3)
    k, s, d, sizes, pads = dilated_geometry(rng, r)
    x = np.random.default_rng(case).standard_normal([1, 2] + sizes)
    pad = pk_padding(pads, r, "NOTSET")
    if case % 2 == 0:
        include, ceil = bool(rng.randint(0, 1)), rng.random() < 0.5
        fwd = getattr(poolkit, f"avg_pool{r}d")
        bwd = getattr(poolkit, f"avg_pool{r}d_backward")
        y = fwd(x, k, s, pad, ceil, include, dilation=d, convention="onnx")
        dy = np.random.default_rng(case + 1).standard_normal(y.shape)
        dx = bwd(dy, x, k, s, pad, ceil, include, dilation=d, convention="onnx")
        # <avg(x), dy> = <x, avg_backward(dy)> for the linear map avg
        assert np.isclose(np.sum(y * dy), np.sum(x * dx), rtol=1e-12, atol=1e-12)
        return
    p = rng.choice([2, 3])
    fwd = getattr(poolkit, f"lp_pool{r}d")
    y = fwd(x, p, k, s, padding=pad, dilation=d, convention="onnx")
    dy = np.random.default_rng(case + 1).standard_normal(y.shape)
    dx = getattr(poolkit, f"lp_pool{r}d_backward")(dy, x, p, k, s, padding=pad, dilation=d, convention="onnx")
    h = 1e-6
    for flat in np.random.default_rng(case + 2).choice(x.size, size=min(6, x.size), replace=False):
        e = np.zeros(x.size)
        e[flat] = h
        e = e.reshape(x.shape)
        num = np.sum((fwd(x + e, p, k, s, padding=pad, dilation=d, convention="onnx") -
                      fwd(x - e, p, k, s, padding=pad, dilation=d, convention="onnx")) * dy) / (2 * h)
        assert np.isclose(dx.flat[flat], num, rtol=1e-5, atol=1e-6), (flat, dx.flat[flat], num)


@pytest.mark.parametrize("fn", ["avg_pool2d", "lp_pool2d"])
def test_dilated_sum_pools_need_onnx_convention(fn):
    """PyTorch's avg_pool and lp_pool have no dilation: the torch convention refuses one, naming the keyword."""
    x = np.zeros((1, 1, 5, 5), np.float32)
    args = (x, 2) if fn == "avg_pool2d" else (x, 2, 2)
    with pytest.raises(ValueError, match="dilation: .*convention='onnx'"):
        getattr(poolkit, fn)(*args, dilation=2)
    with pytest.raises(ValueError, match="convention: must be 'torch' or 'onnx'"):
        getattr(poolkit, fn)(*args, convention="keras")
    if fn == "avg_pool2d":
        with pytest.raises(ValueError, match="divisor_override: ONNX's AveragePool has none"):
            poolkit.avg_pool2d(x, 2, divisor_override=3, convention="onnx")


def run_reference(op, inputs, attrs, opset=22):
    """ONNX's own reference implementation (onnx.reference) of one node."""
    from onnx.reference import ReferenceEvaluator
    names = [f"in{i}" for i in range(len(inputs))]
    node = helper.make_node(op, names, ["Y"], **attrs)
    info = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(v.dtype), list(v.shape))
            for n, v in zip(names, inputs)]
    graph = helper.make_graph([node], "g", info, [helper.make_tensor_value_info("Y", TensorProto.UNDEFINED, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    return ReferenceEvaluator(model).run(None, dict(zip(names, inputs)))[0]


@pytest.mark.parametrize("case", range(60))
def test_max_unpool_onnx_convention(case, tally):
    """convention='onnx': ONNX MaxPool's whole-tensor indices fed back through MaxUnpool, output_shape enlarging the
    output around them, against ONNX's reference (ONNX Runtime 1.20 reads the indices in the enlarged output's
    shape instead, which fails ONNX's own node test test_maxunpool_export_with_output_shape)."""
    rng = new_rng("onnx_unpool", case)
    r = rng.randint(1, 3)
    k = [rng.randint(1, 3) for _ in range(r)]
    s = [rng.randint(1, 3) for _ in range(r)]
    pads = [rng.randint(0, k_ - 1) // 2 for _ in range(2) for k_ in k]
    # MaxPool's input of the size MaxUnpool infers back from the pooled size, so the indices count over it
    inner = [(rng.randint(1, 4) - 1) * s_ + k_ - pads[a] - pads[a + r] for a, (s_, k_) in enumerate(zip(s, k))]
    x = ties(rng, [rng.randint(1, 2), rng.randint(1, 3)] + inner, np.float32)
    attrs = dict(kernel_shape=k, strides=s, pads=pads)
    y, i = run_onnx("MaxPool", x, attrs, 2, opset=12)
    out = [n + rng.randint(0, 2) for n in inner] if rng.random() < 0.7 else None
    inputs = [y, i] + ([] if out is None else [np.array(list(x.shape[:2]) + out, np.int64)])
    expected = run_reference("MaxUnpool", inputs, attrs)
    pad = pk_padding(pads, r, "NOTSET")
    got = getattr(poolkit, f"max_unpool{r}d")(y, i, k, s, pad, None if out is None else inputs[2], convention="onnx")
    assert got.shape == expected.shape and np.array_equal(got, expected)
    twin = getattr(poolkit.torch, f"max_unpool{r}d")(torch.from_numpy(y), torch.from_numpy(i), k, s, pad, out,
                                                       convention="onnx")
    assert torch.equal(twin, torch.from_numpy(expected))
    tally("onnx MaxUnpool convention='onnx'", cases=1, bit_identical_outputs=1)


def test_max_unpool_onnx_convention_refusals():
    y = np.ones((1, 2, 2, 2), np.float32)
    i = np.array([0, 2, 8, 10, 16, 18, 24, 26]).reshape(1, 2, 2, 2)
    with pytest.raises(IndexError, match=r"indices: .*own \(n, c\) plane \[16, 32\) \(got 15 at \(0, 1, 0, 0\)\)"):
        poolkit.max_unpool2d(y, np.where(i == 16, 15, i), 2, 2, convention="onnx")
    with pytest.raises(ValueError, match=r"output_size: .*cover the unpooled size \(4, 4\)"):
        poolkit.max_unpool2d(y, i, 2, 2, output_size=(3, 5), convention="onnx")
    with pytest.raises(ValueError, match=r"output_size: N and C must be the input's \(1, 2\)"):
        poolkit.max_unpool2d(y, i, 2, 2, output_size=(1, 1, 4, 4), convention="onnx")
    with pytest.raises(TypeError, match="poolkit: indices: must be int64"):
        poolkit.max_unpool2d(y, i.astype(np.float32), 2, 2, output_size=(5, 5), convention="onnx")
    with pytest.raises(ValueError, match="convention: must be 'torch' or 'onnx'"):
        poolkit.max_unpool2d(y, i, 2, 2, convention="tf")
