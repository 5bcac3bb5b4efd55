"""Integer tensors (uint8, int8, int16, int32, int64): max pooling (window, adaptive, global, fractional),
max-unpooling and int64 average pooling against PyTorch, int8/uint8 MaxPool against ONNX Runtime, and the
refusals (other averages, Lp, gradients, bool).

The oracle is PyTorch's own integer operator where the installed torch has one (torch 2.x: max_pool2d/3d, and
max_pool1d with indices, for all five types, but its 8-bit kernel raises on planes of more than 127 / 255 cells;
avg_pool1d/2d/3d for int64; torch 1.13: avg_pool for int64 alone).
Where it has none (torch 1.13's max pooling, adaptive and fractional max pooling, max_unpool, in both versions),
the oracle is the same PyTorch operator on float64 copies of the values: max is exact, a cell replaces the
maximum only when greater in both, so values and indices must agree bit for bit (values are kept where float64
holds them exactly). Values tie often and reach each type's extremes."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

import poolkit
import poolkit.torch as pt
from oracle import new_rng

INTS = [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64]
# lowest and highest values used: the type's own, but int64 stays within what float64 holds exactly
BOUNDS = {torch.uint8: (0, 255), torch.int8: (-128, 127), torch.int16: (-32768, 32767),
          torch.int32: (-2**31, 2**31 - 1), torch.int64: (-2**62, 2**62)}


def int_values(rng, shape, dtype):
    """Mostly a few small values (many ties), some of the type's extremes."""
    g = torch.Generator().manual_seed(rng.randrange(2**31))
    lo, hi = BOUNDS[dtype]
    v = torch.randint(0, 7, shape, generator=g, dtype=torch.int64)
    small = v - (0 if dtype == torch.uint8 else 3)
    return torch.where(v == 0, torch.full_like(v, lo), torch.where(v == 6, torch.full_like(v, hi), small)).to(dtype)


def torch_oracle(fn, x, *args, **kwargs):
    """fn on the integer tensor when torch has that kernel, else on float64 copies, results back in x's dtype.
    Returns (results as a tuple, whether the integer kernel ran)."""
    try:
        out = fn(x, *args, **kwargs)
        native = True
    except (RuntimeError, NotImplementedError):
        out = fn(x.double(), *args, **kwargs)
        native = False
    out = out if isinstance(out, tuple) else (out,)
    return tuple(o.to(x.dtype) if o.is_floating_point() else o for o in out), native


def in_layout(x, channels_last):
    if not channels_last:
        return x
    return x.to(memory_format=torch.channels_last if x.dim() == 4 else torch.channels_last_3d)


def window(rng, r):
    k = [rng.randint(1, 3) for _ in range(r)]
    s = [rng.randint(1, 3) for _ in range(r)]
    d = [rng.choice([1, 1, 2]) for _ in range(r)]
    p = [rng.randint(0, (kk * 1) // 2) for kk in k]  # at most half the (undilated) kernel: both torch versions
    sizes = [rng.randint(dd * (kk - 1) + 1, 11 if r < 3 else 6) for kk, dd in zip(k, d)]
    return k, s, p, d, sizes


@pytest.mark.parametrize("dtype", INTS, ids=str)
@pytest.mark.parametrize("case", range(12))
def test_max_pool(dtype, case, tally):
    rng = new_rng("int_max", str(dtype), case)
    r = [1, 2, 2, 3][case % 4]
    k, s, p, d, sizes = window(rng, r)
    ceil = rng.random() < 0.3
    x = in_layout(int_values(rng, [rng.randint(1, 2), rng.choice([1, 3, 64])] + sizes, dtype),
                  r > 1 and case % 3 == 0)
    tf, pf = getattr(F, f"max_pool{r}d"), getattr(pt, f"max_pool{r}d")
    (want, want_i), native = torch_oracle(tf, x, k, s, p, d, ceil, return_indices=True)
    y, i = pf(x, k, s, p, d, ceil, return_indices=True)
    assert y.dtype == dtype and torch.equal(y, want) and torch.equal(i, want_i)
    (want_only,), _ = torch_oracle(tf, x, k, s, p, d, ceil)
    assert torch.equal(pf(x, k, s, p, d, ceil), want_only)
    # the NumPy API on the same values
    yn, in_ = getattr(poolkit, f"max_pool{r}d")(x.numpy(), k, s, p, d, ceil, return_indices=True)
    assert yn.dtype == x.numpy().dtype and np.array_equal(yn, want.numpy()) and np.array_equal(in_, want_i.numpy())
    tally(f"int max_pool{r}d vs torch {'int' if native else 'float64'}", cases=1, bit_identical=1)


@pytest.mark.parametrize("dtype", INTS, ids=str)
@pytest.mark.parametrize("r", [1, 2, 3])
def test_adaptive_and_global_max_pool(dtype, r, tally):
    rng = new_rng("int_adaptive", str(dtype), r)
    sizes = [rng.randint(3, 9) for _ in range(r)]
    x = in_layout(int_values(rng, [2, 5] + sizes, dtype), r > 1)
    out = [rng.randint(1, n) for n in sizes]
    (want, want_i), native = torch_oracle(getattr(F, f"adaptive_max_pool{r}d"), x, out, return_indices=True)
    y, i = getattr(pt, f"adaptive_max_pool{r}d")(x, out, return_indices=True)
    assert y.dtype == dtype and torch.equal(y, want) and torch.equal(i, want_i)
    (gwant, gwant_i), _ = torch_oracle(getattr(F, f"adaptive_max_pool{r}d"), x, 1, return_indices=True)
    gy, gi = poolkit.global_max_pool(x.numpy(), return_indices=True)
    assert np.array_equal(gy, gwant.numpy()) and np.array_equal(gi, gwant_i.numpy())
    tally(f"int adaptive/global max {r}d vs torch {'int' if native else 'float64'}", cases=1, bit_identical=1)


@pytest.mark.parametrize("dtype", INTS, ids=str)
@pytest.mark.parametrize("r", [2, 3])
def test_fractional_max_pool_fixed_samples(dtype, r, tally):
    rng = new_rng("int_fractional", str(dtype), r)
    sizes = [rng.randint(5, 9) for _ in range(r)]
    x = int_values(rng, [2, 3] + sizes, dtype)
    samples = torch.rand(2, 3, r, generator=torch.Generator().manual_seed(r), dtype=torch.float64)
    out = [n // 2 for n in sizes]
    fn = getattr(F, f"fractional_max_pool{r}d")
    # torch takes samples of the input's dtype: float64 for both (the integer kernel does not exist)
    want, want_i = fn(x.double(), 2, output_size=out, return_indices=True, _random_samples=samples)
    y, i = getattr(pt, f"fractional_max_pool{r}d")(x, 2, output_size=out, return_indices=True,
                                                   _random_samples=samples)
    assert y.dtype == dtype and torch.equal(y, want.to(dtype)) and torch.equal(i, want_i)
    tally(f"int fractional_max_pool{r}d vs torch float64", cases=1, bit_identical=1)


@pytest.mark.parametrize("dtype", INTS, ids=str)
@pytest.mark.parametrize("r", [1, 2, 3])
def test_max_unpool(dtype, r, tally):
    rng = new_rng("int_unpool", str(dtype), r)
    sizes = [rng.randint(4, 8) for _ in range(r)]
    x = int_values(rng, [2, 3] + sizes, dtype)
    y, i = getattr(pt, f"max_pool{r}d")(x, 2, return_indices=True)
    (want,), native = torch_oracle(getattr(F, f"max_unpool{r}d"), y, i, 2, output_size=sizes)
    got = getattr(pt, f"max_unpool{r}d")(y, i, 2, output_size=sizes)
    assert got.dtype == dtype and torch.equal(got, want)
    # its backward is a gather: integers go through it as well (no torch operator takes it alone)
    back = poolkit.max_unpool2d_backward(got.numpy(), i.numpy()) if r == 2 else None
    if back is not None:
        assert back.dtype == y.numpy().dtype and np.array_equal(back, y.numpy())
    tally(f"int max_unpool{r}d vs torch {'int' if native else 'float64'}", cases=1, bit_identical=1)


def test_int64_avg_pool_truncates_like_torch():
    """Sums in int64, divided with truncation toward zero: hand-worked, then against torch's int64 kernel."""
    x = torch.tensor([[[[-7, 3, -5, 2]]]])
    assert pt.avg_pool2d(x, (1, 2)).tolist() == [[[[-2, -1]]]]  # -4 / 2, -3 / 2 = -1.5 -> -1
    assert pt.avg_pool2d(x, (1, 3), 1, (0, 1)).tolist() == [[[[-1, -3, 0, -1]]]]  # -4 / 3 -> -1 (padding counts)
    assert pt.avg_pool2d(x, (1, 3), 1, (0, 1), count_include_pad=False).tolist() == [[[[-2, -3, 0, -1]]]]
    assert pt.avg_pool2d(x, (1, 2), divisor_override=3).tolist() == [[[[-1, -1]]]]


@pytest.mark.parametrize("case", range(12))
def test_int64_avg_pool(case, tally):
    rng = new_rng("int64_avg", case)
    r = [1, 2, 2, 3][case % 4]
    k, s, p, _, sizes = window(rng, r)
    ceil, include = rng.random() < 0.3, rng.random() < 0.5
    divisor = rng.choice([None, None, 3]) if r > 1 else None
    g = torch.Generator().manual_seed(case)
    x = in_layout(torch.randint(-1000, 1000, [2, 3] + sizes, generator=g), r > 1 and case % 3 == 0)
    kw = dict(ceil_mode=ceil, count_include_pad=include, **({"divisor_override": divisor} if r > 1 else {}))
    want = getattr(F, f"avg_pool{r}d")(x, k, s, p, **kw)  # int64: both torch versions have it
    y = getattr(pt, f"avg_pool{r}d")(x, k, s, p, **kw)
    assert y.dtype == torch.int64 and torch.equal(y, want)
    tally(f"int64 avg_pool{r}d vs torch int64", cases=1, bit_identical=1)


def _refused(fn, words):
    with pytest.raises(TypeError) as e:
        fn()
    for w in words:
        assert w in str(e.value), (w, str(e.value))


def test_quantized_tensors_go_through_their_integer_values():
    """A quantized tensor is refused by name; its integer values (`int_repr()`, the scale and zero point kept
    beside them) pool to torch's own quantized max_pool2d, bit for bit."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (torch 2.15 deprecates quantized tensors on creation)
        x = torch.randn(2, 3, 9, 11, generator=torch.Generator().manual_seed(5))
        for dtype, zero in ((torch.quint8, 128), (torch.qint8, 0)):
            q = torch.quantize_per_tensor(x, 0.05, zero, dtype)
            _refused(lambda: pt.max_pool2d(q, 3, 2, 1), ["input", str(dtype).replace("torch.", "")])
            want = F.max_pool2d(q, 3, 2, 1)
            got = pt.max_pool2d(q.int_repr(), 3, 2, 1)
            assert torch.equal(got, want.int_repr())
            assert torch.equal(torch._make_per_tensor_quantized_tensor(got, q.q_scale(), q.q_zero_point()), want)


def test_refusals():
    xi = torch.zeros(1, 2, 4, 4, dtype=torch.int32)
    xl = xi.long()
    _refused(lambda: pt.avg_pool2d(xi, 2), ["input", "int64", "got int32"])
    _refused(lambda: pt.adaptive_avg_pool2d(xl, 2), ["input", "fixed windows", "got int64"])
    _refused(lambda: pt.lp_pool2d(xl, 2, 2), ["input", "lp_pool takes float32", "got int64"])
    _refused(lambda: poolkit.max_pool2d(np.zeros((1, 1, 2, 2), np.bool_), 2), ["input", "bool"])
    _refused(lambda: pt.max_pool2d(xi.bool(), 2), [])  # (torch 1.13 exports no bool tensors: any TypeError)
    _refused(lambda: poolkit.max_pool2d(np.zeros((1, 1, 2, 2), np.complex64), 2), ["input", "complex"])
    # no gradient exists for an integer tensor
    x = np.zeros((1, 2, 4, 4), np.int32)
    _refused(lambda: poolkit.max_pool2d_backward(np.zeros((1, 2, 2, 2), np.int32), x, None, 2),
             ["grad_output", "no gradient", "int32"])
    _refused(lambda: poolkit.avg_pool2d_backward(np.zeros((1, 2, 2, 2), np.int64), x.astype(np.int64), 2),
             ["grad_output", "no gradient"])


def test_torch_computes_no_argmax_for_integers_without_indices(monkeypatch):
    """An integer tensor never has a gradient: without indices asked for, poolkit.torch hands the core no argmax
    to fill (it would only be kept for a backward); with indices, or a float input needing a gradient, it does.
    (The Python kernels: the C++ kernels of tests/torch2/test_opcheck.py are held to the same rule there.)"""
    from poolkit import _core
    if hasattr(pt, "A") and hasattr(pt.A, "_cpp_plain"):
        monkeypatch.setattr(pt.A, "_cpp_plain", lambda x: False)
    argmax_given = []
    for name in ("max_pool_forward", "fractional_max_pool_forward"):
        def spy(*args, real=getattr(_core, name)):
            argmax_given.append(args[-1] is not None)
            return real(*args)
        monkeypatch.setattr(_core, name, spy)
    x = torch.arange(2 * 3 * 6 * 6, dtype=torch.int32).reshape(2, 3, 6, 6) % 11
    samples = torch.full((2, 3, 2), 0.5, dtype=torch.float64)
    for dtype in INTS:
        xd = x.to(dtype)
        y = pt.max_pool2d(xd, 2)
        assert torch.equal(y, pt.max_pool2d(xd, 2, return_indices=True)[0])
        pt.adaptive_max_pool2d(xd, 3)
        pt.fractional_max_pool2d(xd, 2, output_size=3, _random_samples=samples)
    assert argmax_given == [False, True, False, False] * len(INTS)
    argmax_given.clear()
    pt.max_pool2d(x.float().requires_grad_(), 2).sum().backward()
    assert argmax_given == [True]


onnx = pytest.importorskip("onnx", reason="the test command installs onnx and onnxruntime")
ort = pytest.importorskip("onnxruntime")


def run_onnx_maxpool(x, attrs):
    from onnx import TensorProto, helper
    elem = {np.int8: TensorProto.INT8, np.uint8: TensorProto.UINT8}[x.dtype.type]
    node = helper.make_node("MaxPool", ["X"], ["Y"], **attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", elem, list(x.shape))],
                              [helper.make_tensor_value_info("Y", elem, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)])
    model.ir_version = 8
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {"X": x})[0]


@pytest.mark.parametrize("dtype", [np.int8, np.uint8], ids=str)
@pytest.mark.parametrize("case", range(8))
def test_onnx_runtime_int8_maxpool(dtype, case, tally):
    """ONNX Runtime's 8-bit MaxPool (opset 12; it has no indices output for 8-bit types)."""
    rng = new_rng("int_onnx", str(dtype), case)
    r = [1, 2, 2, 3][case % 4]
    k, s, p, d, sizes = window(rng, r)
    x = int_values(rng, [rng.randint(1, 2), rng.choice([1, 3, 64])] + sizes,
                   torch.int8 if dtype == np.int8 else torch.uint8).numpy()
    want = run_onnx_maxpool(x, dict(kernel_shape=k, strides=s, dilations=d, pads=p + p))
    y = poolkit.functional.__dict__[f"max_pool{r}d"](x, k, s, p, d)
    assert y.dtype == x.dtype and np.array_equal(y, want)
    tally(f"int MaxPool{r}d vs onnxruntime {np.dtype(dtype).name}", cases=1, bit_identical=1)
