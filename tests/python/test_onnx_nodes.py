"""ONNX's own node tests for every pooling operator, run through poolkit's ONNX-convention calls.

Walks every onnx/backend/test/data/node/test_*pool*/ directory the installed `onnx` package ships (a model with one
node, test_data_set_*/input_*.pb and output_*.pb), so cases added by a newer onnx are picked up as they come. The
node's op_type picks poolkit's call from MAPPING; an op_type or an attribute poolkit does not understand fails the
case with its name. Max pooling (and unpooling) must match bit for bit, the sums (average, Lp) to 1e-5 relative
(to the value, or to the largest input where a sum cancels).

Covered: MaxPool, AveragePool, LpPool, GlobalMaxPool, GlobalAveragePool, GlobalLpPool, MaxUnpool.
Not in poolkit: MaxRoiPool (region-of-interest pooling); onnx 1.17 ships no node test for it, one that arrives
fails here by name. test_maxpool_2d_uint8 needs poolkit's integer dtypes."""
import glob
import os

import numpy as np
import pytest

import poolkit
from test_onnx import onnx_indices

onnx = pytest.importorskip("onnx", reason="the test command installs onnx")
from onnx import helper, numpy_helper  # noqa: E402

NODE_DIR = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "node")
CASES = sorted(glob.glob(os.path.join(NODE_DIR, "test_*pool*")))


def _window_args(a, r):
    """kernel, strides, padding (auto_pad string or ONNX's pads as (begin, end) pairs), dilations, ceil_mode."""
    k = a.pop("kernel_shape")
    s = a.pop("strides", [1] * r)
    d = a.pop("dilations", [1] * r)
    ceil = bool(a.pop("ceil_mode", 0))
    auto_pad = a.pop("auto_pad", b"NOTSET").decode()
    pads = a.pop("pads", [0] * 2 * r)
    padding = auto_pad if auto_pad != "NOTSET" else tuple((pads[i], pads[i + r]) for i in range(r))
    return k, s, padding, d, ceil


def max_pool(x, a, n_out):
    r = x.ndim - 2
    k, s, padding, d, ceil = _window_args(a, r)
    storage_order = a.pop("storage_order", 0)
    res = getattr(poolkit, f"max_pool{r}d")(x, k, s, padding, d, ceil, return_indices=n_out == 2)
    return [res[0], onnx_indices(res[1], x.shape, storage_order)] if n_out == 2 else [res]


def average_pool(x, a, n_out):
    r = x.ndim - 2
    k, s, padding, d, ceil = _window_args(a, r)
    include = bool(a.pop("count_include_pad", 0))
    return [getattr(poolkit, f"avg_pool{r}d")(x, k, s, padding, ceil, include, dilation=d, convention="onnx")]


def lp_pool(x, a, n_out):
    r = x.ndim - 2
    k, s, padding, d, ceil = _window_args(a, r)
    p = a.pop("p", 2)
    return [getattr(poolkit, f"lp_pool{r}d")(x, p, k, s, ceil, padding=padding, dilation=d, convention="onnx")]


def max_unpool(x, indices, output_shape=None, *, a, n_out):
    r = x.ndim - 2
    k = a.pop("kernel_shape")
    s = a.pop("strides", [1] * r)
    pads = a.pop("pads", [0] * 2 * r)
    padding = tuple((pads[i], pads[i + r]) for i in range(r))
    return [getattr(poolkit, f"max_unpool{r}d")(x, indices, k, s, padding, output_shape, convention="onnx")]


# op_type -> (poolkit's call (inputs, attributes, number of outputs), exact: max pooling is compared bit for bit)
MAPPING = {
    "MaxPool": (lambda ins, a, n: max_pool(*ins, a, n), True),
    "AveragePool": (lambda ins, a, n: average_pool(*ins, a, n), False),
    "LpPool": (lambda ins, a, n: lp_pool(*ins, a, n), False),
    "GlobalMaxPool": (lambda ins, a, n: [poolkit.global_max_pool(*ins)], True),
    "GlobalAveragePool": (lambda ins, a, n: [poolkit.global_avg_pool(*ins)], False),
    "GlobalLpPool": (lambda ins, a, n: [poolkit.global_lp_pool(*ins, a.pop("p", 2))], False),
    "MaxUnpool": (lambda ins, a, n: max_unpool(*ins, a=a, n_out=n), True),
}


def _tensors(folder, kind):
    return [numpy_helper.to_array(onnx.load_tensor(f)) for f in sorted(glob.glob(os.path.join(folder, f"{kind}_*.pb")),
                                                                       key=lambda f: int(f.rsplit("_", 1)[1][:-3]))]


def test_node_tests_found():
    assert CASES, f"no pooling node tests under {NODE_DIR}"


@pytest.mark.parametrize("case", CASES, ids=os.path.basename)
def test_onnx_node(case, tally):
    name = os.path.basename(case)
    nodes = onnx.load(os.path.join(case, "model.onnx")).graph.node
    assert len(nodes) == 1, f"{name}: a model of {len(nodes)} nodes ({[n.op_type for n in nodes]}), not one"
    node = nodes[0]
    if node.op_type not in MAPPING:
        pytest.fail(f"{name}: poolkit has no mapping for ONNX op_type {node.op_type}")
    call, exact = MAPPING[node.op_type]
    data_sets = sorted(glob.glob(os.path.join(case, "test_data_set_*")))
    assert data_sets, f"{name}: no test_data_set_*"
    for data in data_sets:
        attrs = {at.name: helper.get_attribute_value(at) for at in node.attribute}
        inputs = _tensors(data, "input")
        try:
            outs = call(inputs, attrs, len(node.output))  # takes the attributes it understands out of attrs
        finally:
            assert not attrs, f"{name}: poolkit does not understand attribute(s) {sorted(attrs)} of {node.op_type}"
        expected = _tensors(data, "output")
        assert len(outs) == len(expected), f"{name}: {len(outs)} outputs, ONNX expects {len(expected)}"
        for got, want in zip(outs, expected):
            assert got.dtype == want.dtype and got.shape == want.shape, (name, got.dtype, got.shape, want.shape)
            if exact:
                assert np.array_equal(got, want), f"{name}: not bit-identical"
            else:
                # a sum's rounding scales with its terms, not its result: 1e-5 of the largest input as well
                scale = float(np.abs(inputs[0]).max())
                np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * scale, err_msg=name)
    tally(f"onnx node tests {node.op_type}", cases=1, data_sets=len(data_sets))
