"""torch.export of a model of poolkit.torch functions and modules (the exported program runs, same bits), and bad
input under torch.compile: the same error as eager."""
import pytest
import torch

import poolkit.torch as pt
import poolkit.torch.nn as pnn

from cases import inputs


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.pool = pnn.MaxPool2d(3, 2, 1)

    def forward(self, x):
        y, i = pt.max_pool2d(self.conv(x), 2, 1, return_indices=True)
        z = pt.max_unpool2d(y, i, 2, 1) + pt.avg_pool2d(self.conv(x), 3, 1, 1)
        return pt.adaptive_avg_pool2d(self.pool(z), 2) + pt.lp_pool2d(z.abs(), 2, 3, 2)[..., :2, :2]


@pytest.mark.parametrize("layout", ["channels_first", "channels_last"])
def test_export_runs_and_gives_eager_bits(layout):
    torch.manual_seed(0)
    model = Model()
    x = inputs(2)[layout]
    ep = torch.export.export(model, (x,))
    targets = {str(n.target) for n in ep.graph.nodes if n.op == "call_function"}
    assert {"poolkit.max_pool.default", "poolkit.max_unpool.default", "poolkit.avg_pool.default",
            "poolkit.lp_pool.default"} <= targets
    assert torch.equal(ep.module()(x), model(x))


# Refused by the geometry the operator builds (its fake kernel under torch.compile) or by poolkit.torch's Python
# before: eager's error under the default torch.compile and with fullgraph=True (there the trace goes on and the
# compiled graph raises it).
BAD = [
    ("kernel_size 0", lambda x: pt.max_pool2d(x, 0), "kernel_size"),
    ("padding over half the kernel", lambda x: pt.max_pool2d(x, 2, 1, 2, dilation=3), "padding"),
    ("stride 0", lambda x: pt.avg_pool2d(x, 2, 0), "stride"),
    ("lp kernel larger than the input", lambda x: pt.lp_pool2d(x, 2, 9), "kernel_size"),
    ("fractional output too large", lambda x: pt.fractional_max_pool2d(x, 2, output_size=7), "output_size"),
    ("unpool size outside the range", lambda x: pt.max_unpool2d(*pt.max_pool2d(x, 2, return_indices=True), 2,
                                                                output_size=(20, 20)), "output_size"),
    ("3-D input to 2-d pooling of rank 2 kernel", lambda x: pt.max_pool2d(x[0, 0, 0], 2), "input"),
    ("adaptive output with too many entries", lambda x: pt.adaptive_avg_pool2d(x, (2, 2, 2)), "output_size"),
    ("bad data_format, indices asked", lambda x: pt.max_pool2d(x, 2, return_indices=True, data_format="nhwc")[1],
     "data_format"),
    ("global pooling of a 2-D input", lambda x: pt.global_avg_pool(x[0, 0]), "input"),
    ("kernel_size of strings", lambda x: pt.avg_pool2d(x, "2"), "kernel_size"),
]
MODES = [("default", {}), ("fullgraph", {"fullgraph": True})]
CASES = [(b, m) for b in BAD for m in MODES]


@pytest.mark.parametrize("case, mode", CASES, ids=[f"{b[0]}-{m[0]}" for b, m in CASES])
def test_compiled_bad_input_gives_the_eager_error(case, mode):
    _, fn, argument = case
    x = inputs(2)["channels_first"]
    with pytest.raises(Exception) as eager:
        fn(x)
    assert str(eager.value).startswith(f"poolkit: {argument}"), str(eager.value)
    torch._dynamo.reset()
    with pytest.raises(type(eager.value)) as compiled:
        torch.compile(fn, **mode[1])(x)
    assert type(compiled.value) is type(eager.value) and str(compiled.value) == str(eager.value)
