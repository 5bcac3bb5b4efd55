#!/usr/bin/env python3
"""8-bit max pooling: poolkit against PyTorch eager, torch.compile and ONNX Runtime's MaxPool, same threads.

Cases seed (16384, 2, 32x32; 2x2 stride 2) and resnet-stem (32, 64, 112x112; 3x3 stride 2 pad 1) of
shared/BENCH_CASES.md, uint8 and int8, both layouts, max forward without indices (ONNX Runtime: NCHW only, it has
no channels-last MaxPool). Every call allocates its output (torch's and ONNX Runtime's own way; poolkit's NumPy API,
on the tensor's memory, from its memory cache). The libraries run interleaved, one call each per round, and each gets the median of its rounds;
each is also given as a fraction of a plain copy's bandwidth (torch.Tensor.copy_ of 256 MiB, measured before each
row: bytes read + written), the input read once and the output written once; "(x)" is a peer's time over
poolkit's. Prints a markdown table; a peer that raises on a case is marked refused (torch's own 8-bit kernel
counts a plane's cells in the element type: planes over 127 / 255 cells raise).

usage: python bench/compare_int.py [--threads N] [--reps N] [--case NAME]... [--dtype uint8|int8]...
(poolkit must be importable: PYTHONPATH=build/<dir>/python)
"""
import argparse
import statistics
import time

import numpy as np
import torch
import torch.nn.functional as F

import poolkit

CASES = {"seed": ((16384, 2, 32, 32), 2, 2, 0), "resnet-stem": ((32, 64, 112, 112), 3, 2, 1)}
DTYPES = {"uint8": torch.uint8, "int8": torch.int8}


def copy_bandwidth(reps):
    a, b = torch.ones(256 << 20, dtype=torch.uint8), torch.zeros(256 << 20, dtype=torch.uint8)
    ts = []
    for _ in range(reps + 1):
        t0 = time.perf_counter()
        b.copy_(a)
        ts.append(time.perf_counter() - t0)
    return 2 * a.numel() / statistics.median(ts[1:])


def ort_maxpool(x, k, s, p, threads):
    import onnxruntime as ort
    from onnx import TensorProto, helper
    elem = TensorProto.UINT8 if x.dtype == np.uint8 else TensorProto.INT8
    node = helper.make_node("MaxPool", ["X"], ["Y"], kernel_shape=[k, k], strides=[s, s], pads=[p] * 4)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", elem, list(x.shape))],
                              [helper.make_tensor_value_info("Y", elem, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)])
    model.ir_version = 8
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return lambda: sess.run(None, {"X": x})[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=torch.get_num_threads())
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--case", action="append", choices=sorted(CASES))
    ap.add_argument("--dtype", action="append", choices=sorted(DTYPES))
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    import os
    os.environ.setdefault("OMP_NUM_THREADS", str(a.threads))
    print(f"torch {torch.__version__}, {a.threads} thread(s), median of {a.reps} interleaved rounds\n")
    print("| case | layout | dtype | poolkit ms | of copy | torch eager ms (x) | torch.compile ms (x) | "
          "ONNX Runtime ms (x) |")
    print("|---|---|---|---|---|---|---|---|")
    for name in a.case or list(CASES):
        shape, k, s, p = CASES[name]
        for dname in a.dtype or list(DTYPES):
            dt = DTYPES[dname]
            g = torch.Generator().manual_seed(0)
            base = torch.randint(-128 if dt == torch.int8 else 0, 128 if dt == torch.int8 else 256, shape,
                                 generator=g, dtype=torch.int64).to(dt)
            for layout in ("nchw", "nhwc"):
                x = base if layout == "nchw" else base.contiguous(memory_format=torch.channels_last)
                want = F.max_pool2d(x.double(), k, s, p).to(dt)  # (torch's own 8-bit kernel may refuse x)
                compiled = torch.compile(lambda t: F.max_pool2d(t, k, s, p))
                xn = x.numpy()  # (a view: channels-last memory stays as it is)
                calls = {"poolkit": lambda: poolkit.max_pool2d(xn, k, s, p), "eager": lambda: F.max_pool2d(x, k, s, p),
                         "compile": lambda: compiled(x)}
                if layout == "nchw":
                    calls["ort"] = ort_maxpool(x.numpy(), k, s, p, a.threads)
                refused = {}
                for lib, f in list(calls.items()):  # warm-up (and compile), each checked against torch's values
                    try:
                        out = f()
                    except RuntimeError as e:  # torch's 8-bit kernel counts the plane's cells in the element type
                        refused[lib] = str(e).splitlines()[0][:60]
                        del calls[lib]
                        continue
                    out = torch.from_numpy(out) if isinstance(out, np.ndarray) else out
                    assert torch.equal(out, want), lib
                copy = copy_bandwidth(3)
                times = {lib: [] for lib in calls}
                for _ in range(a.reps):
                    for lib, f in calls.items():
                        t0 = time.perf_counter()
                        f()
                        times[lib].append(time.perf_counter() - t0)
                med = {lib: statistics.median(v) for lib, v in times.items()}
                nbytes = x.numel() + want.numel()
                pk = med["poolkit"]
                def cell(lib):
                    if lib in refused:
                        return "refused"
                    return f"{med[lib] * 1e3:.2f} ({med[lib] / pk:.2f}x)" if lib in med else "n/a"
                for lib, why in refused.items():
                    print(f"<!-- {lib} refused {name} {layout} {dname}: {why} -->")
                print(f"| {name} | {layout} | {dname} | {pk * 1e3:.2f} | {nbytes / pk / copy:.2f} | {cell('eager')} | "
                      f"{cell('compile')} | {cell('ort')} |", flush=True)


if __name__ == "__main__":
    main()
