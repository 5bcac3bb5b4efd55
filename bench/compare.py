#!/usr/bin/env python3
"""poolkit against PyTorch CPU, ONNX Runtime and oneDNN on the cases of shared/BENCH_CASES.md, same threads.

For each case, layout and operator, four calls where a library has them:
  forward (allocating)     torch.nn.functional / InferenceSession.run / poolkit.torch: outputs allocated per call
  forward (preallocated)   aten *.out / run_with_iobinding / oneDNN pooling_forward / poolkit._core: outputs
                           allocated once before timing
  train step (allocating)  forward through autograd, then backward (poolkit.torch saves its compact argmax)
  backward (preallocated)  aten *_backward.grad_input / oneDNN pooling_backward / poolkit._core: grad_input allocated
                           once before timing
Each is a median time (the libraries of this process timed in turn, each rep starting one library further on, each
timed call right after an untimed one of its own), a fraction of a plain copy's bandwidth measured in the same run
(each input read once, each output written once, indices at the width that library stores), and poolkit's speed-up
over each peer. ONNX Runtime only runs NCHW forward calls of operators ONNX has (not adaptive 13->7). PyTorch,
ONNX Runtime and poolkit run in this process;
oneDNN (Debian's libdnnl-dev, 2.x) runs as bench/onednn/onednn_pool_bench, which this script compiles into
build/onednn-bench/ (g++ -fopenmp ... -ldnnl) when it is missing or older than its source, and runs once per case,
layout and pooling algorithm with the same --threads (OpenMP) and --reps: its preallocated rows only (max without
indices = forward_inference; max with indices = forward_training, which writes oneDNN's workspace, and backward from
that workspace, counted at the workspace's byte size; not adaptive 13->7, which has uneven windows). Without
libdnnl-dev the oneDNN columns are n/a. Where a library has no such call the table says n/a. Writes a markdown table
(default bench/RESULTS-compare.md) and, beside it, the two charts of bench/charts.py (speed-up over each peer;
fraction of copy).

The half-bf16 / half-f16 cases are resnet-stem in 16-bit types (`--case half` selects both); ONNX Runtime has no
bfloat16 pooling, oneDNN a 16-bit type where its build implements it on the CPU (else n/a).

usage: python bench/compare.py [--threads N] [--reps N] [--case NAME]... [--layout nchw|nhwc|both] [--out FILE]
(poolkit must be importable: pip install . or PYTHONPATH=build/<dir>/python; oneDNN: apt-get install libdnnl-dev)
"""
import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time

CASES = [  # name, shape, kind, kernel, stride, padding, count_include_pad
    ("seed", (16384, 2, 32, 32), "max+avg", 2, 2, 0, True),
    ("resnet-stem", (32, 64, 112, 112), "max", 3, 2, 1, True),
    ("vgg", (32, 128, 112, 112), "max", 2, 2, 0, True),
    ("overlap-avg", (32, 64, 56, 56), "avg", 3, 1, 1, False),
    ("gap", (256, 2048, 7, 7), "gap", None, None, None, True),
    ("adaptive", (64, 256, 13, 13), "adaptive", None, None, None, True),
    ("pool3d", (8, 64, 32, 32, 32), "max", 2, 2, 0, True),
    ("half-bf16", (32, 64, 112, 112), "max", 3, 2, 1, True, "bfloat16"),  # resnet-stem in 16-bit types
    ("half-f16", (32, 64, 112, 112), "max", 3, 2, 1, True, "float16"),
]
FWD, FWD_PRE = "forward (allocating)", "forward (preallocated)"
TRAIN, BWD_PRE = "train step (allocating)", "backward (preallocated)"
LIBS = ("PyTorch", "torch.compile", "ONNX Runtime", "oneDNN", "poolkit", "poolkit compiled")
PEERS = ("PyTorch", "torch.compile", "ONNX Runtime", "oneDNN")  # poolkit (eager) against each
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ONEDNN_SRC = os.path.join(ROOT, "bench", "onednn", "onednn_pool_bench.cpp")
ONEDNN_BIN = os.path.join(ROOT, "build", "onednn-bench", "onednn_pool_bench")


def parse():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--case", action="append")
    p.add_argument("--layout", choices=("nchw", "nhwc", "both"), default="both")
    p.add_argument("--out", default=os.path.join(ROOT, "bench", "RESULTS-compare.md"))
    return p.parse_args()


ARGS = parse()
os.environ["OMP_NUM_THREADS"] = str(ARGS.threads)  # poolkit's OpenMP threads, read when the library loads
import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import poolkit._core as core  # noqa: E402
import poolkit.torch as pt  # noqa: E402
import charts  # noqa: E402  (bench/charts.py, beside this script)

try:
    import onnxruntime as ort
    from onnx import TensorProto, helper
    ORT_MISSING = None
except ImportError as e:  # then the ONNX Runtime column is n/a throughout
    ort, ORT_MISSING = None, str(e)

torch.set_num_threads(ARGS.threads)
AT = torch.ops.aten
WARNINGS = []


def onednn_binary():
    """(path of the oneDNN peer program, None), compiled here when missing or older than its source; or (None, why
    not) when it cannot be built (then the oneDNN column is n/a throughout)."""
    if os.path.exists(ONEDNN_BIN) and os.path.getmtime(ONEDNN_BIN) >= os.path.getmtime(ONEDNN_SRC):
        return ONEDNN_BIN, None
    cxx = os.environ.get("CXX", "g++")
    if shutil.which(cxx) is None:
        return None, f"no C++ compiler ({cxx}) to build {os.path.relpath(ONEDNN_SRC, ROOT)}"
    os.makedirs(os.path.dirname(ONEDNN_BIN), exist_ok=True)
    tmp = f"{ONEDNN_BIN}.{os.getpid()}.tmp"
    cmd = [cxx, "-O2", "-std=c++17", "-fopenmp", ONEDNN_SRC, "-o", tmp, "-ldnnl"]
    print("building the oneDNN peer: " + " ".join(cmd), file=sys.stderr)
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        if os.path.exists(tmp):
            os.remove(tmp)
        if "dnnl.hpp" in p.stderr or "-ldnnl" in p.stderr:
            return None, "libdnnl-dev is not installed (Debian/Ubuntu: apt-get install libdnnl-dev)"
        last = p.stderr.strip().splitlines()[-1] if p.stderr.strip() else f"exit {p.returncode}"
        return None, f"{' '.join(cmd)} failed: {last}"
    os.replace(tmp, ONEDNN_BIN)
    return ONEDNN_BIN, None


ONEDNN, ONEDNN_MISSING = onednn_binary()
ONEDNN_VERSION, ONEDNN_IMPLS = None, []
if ONEDNN_MISSING:
    print(f"oneDNN columns n/a: {ONEDNN_MISSING}", file=sys.stderr)


def median_seconds(fn, reps):
    return alternating_medians([fn], reps)[0]


WARM_REPS = 2


def alternating_medians(fns, reps):
    """Median seconds of each fn, the fns timed in turn rep after rep (so that the machine's memory pace, which
    moves within seconds here, weighs on every library alike), each timed call right after an untimed one of the
    same fn (the caches as back-to-back calls leave them, as oneDNN's program times its calls); fewer reps once
    5 s have gone by per fn. Each rep starts one fn further on, so that no fn always follows the same other: what
    ran just before a pair still weighs on it (poolkit's gap NCHW forward, 102 MB, took 2.6 ms after its own calls
    and 3.9-4.7 ms after a 15 ms single-thread spin or a sweep of 256 MB, Intel Xeon VM; in a fixed order it always
    followed ONNX Runtime). The first WARM_REPS reps are not kept: a row's set-up and the check of the row before
    leave a large input out of the last-level cache for more than one call (gap NHWC's preallocated row, 102 MB,
    2-core Intel Xeon VM with 260 MB of L3: its reps took 4.2, 3.4, then 2.1-2.5 ms, for every library alike)."""
    times = [[] for _ in fns]
    start = time.perf_counter()
    for rep in range(-WARM_REPS, reps):
        for i in range(len(fns)):
            k = (rep + i) % len(fns)
            fns[k]()
            t0 = time.perf_counter()
            fns[k]()
            if rep >= 0:
                times[k].append(time.perf_counter() - t0)
        if rep >= 0 and time.perf_counter() - start > 5 * len(fns):
            break
    return [statistics.median(ts) for ts in times]


def copy_bandwidth():
    a = torch.ones(64 << 20)
    b = torch.empty_like(a)
    t = median_seconds(lambda: b.copy_(a), ARGS.reps)
    return 2 * a.numel() * 4 / t


def size(*ts):
    return sum(t.nbytes if isinstance(t, np.ndarray) else t.numel() * t.element_size() for t in ts)


class Call:
    """One library's way of doing one row: fn() is timed, nbytes is what it must move, outs() (optional) gives its
    results after the timing, to compare with PyTorch's allocating call."""

    def __init__(self, fn, nbytes, outs=None, seconds=None):
        self.fn, self.nbytes, self.outs, self.seconds = fn, nbytes, outs, seconds  # seconds: timed elsewhere


# ---- the case in one layout ------------------------------------------------------------------------------------

def operators(kind, compact="uint8"):
    """(operator, calls) of one case. The compact row's peers have no compact form: they run their int64 call."""
    ops = []
    if "max" in kind:
        ops += [("max", (FWD, FWD_PRE, TRAIN)), ("max+int64 indices", (FWD, FWD_PRE, BWD_PRE)),
                (f"max+{compact} argmax*", (FWD_PRE, BWD_PRE))]
    if "avg" in kind:
        ops.append(("avg", (FWD, FWD_PRE, TRAIN, BWD_PRE)))
    if kind == "gap":
        ops.append(("global avg", (FWD, FWD_PRE, TRAIN, BWD_PRE)))
    if kind == "adaptive":
        ops.append(("adaptive avg 7x7", (FWD, FWD_PRE, TRAIN, BWD_PRE)))
    return ops


class Setup:
    """The input, gradient and poolkit geometry of one case in one layout, made once for all its rows."""

    def __init__(self, case, layout):
        self.name, shape, self.kind, k, s, p, cip = case[:7]
        self.dtype = getattr(torch, case[7] if len(case) > 7 else "float32")
        self.layout, r = layout, len(shape) - 2
        self.r, self.nhwc = r, layout == "nhwc"
        self.mf = (torch.channels_last if r == 2 else torch.channels_last_3d) if self.nhwc else torch.contiguous_format
        self.x = torch.rand(shape).to(self.dtype).contiguous(memory_format=self.mf)
        spatial = list(shape[2:])
        if self.kind in ("gap", "adaptive"):
            self.out_size = [1 if self.kind == "gap" else 7] * r
            self.g = core.adaptive_geometry(spatial, self.out_size)
            self.cip = False  # what poolkit.torch passes for adaptive average pooling
        else:
            self.win = ([k] * r, [s] * r, [p] * r, [1] * r)  # kernel, stride, padding, dilation
            self.g = core.torch_geometry(spatial, [k] * r, [s] * r, [p] * r, [1] * r, False)
            self.cip = cip
        self.y_shape = list(shape[:2]) + list(self.g.output_size())
        self.compact = {"uint8": torch.uint8, "int16": torch.int16, "int32": torch.int32}[self.g.local_argmax_dtype()]
        self.dy = torch.rand(self.y_shape).to(self.dtype).contiguous(memory_format=self.mf)
        self._ref, self._argmax, self._sessions, self._onednn = {}, {}, {}, {}

    def out(self, shape, dtype=None, like=None):
        """An output buffer in this layout (or in like's), of the case's type unless given, filled with NaN / -1
        so that an element left unwritten fails the check."""
        dtype = dtype or self.dtype
        t = torch.empty(shape, dtype=dtype, memory_format=self.mf) if like is None else torch.empty_like(like)
        return t.fill_(-1 if not t.dtype.is_floating_point else float("nan"))

    def torch_fn(self, op, indices=False):
        """torch.nn.functional's allocating forward for op, and poolkit.torch's (same arguments)."""
        r, cip = self.r, self.cip
        if op.startswith("max"):
            K, S, P, _ = self.win
            return (lambda x: getattr(F, f"max_pool{r}d")(x, K, S, P, return_indices=indices),
                    lambda x: getattr(pt, f"max_pool{r}d")(x, K, S, P, return_indices=indices))
        if op == "avg":
            K, S, P, _ = self.win
            return (lambda x: getattr(F, f"avg_pool{r}d")(x, K, S, P, count_include_pad=cip),
                    lambda x: getattr(pt, f"avg_pool{r}d")(x, K, S, P, count_include_pad=cip))
        o = self.out_size[0]
        return lambda x: F.adaptive_avg_pool2d(x, o), lambda x: pt.adaptive_avg_pool2d(x, o)

    def reference(self, op):
        """PyTorch's allocating forward and autograd backward: the results every other call is checked against."""
        key = "max" if op.startswith("max") else op
        if key not in self._ref:
            fn = self.torch_fn(op, indices=True)[0] if key == "max" else self.torch_fn(op)[0]
            xg = self.x.detach().clone(memory_format=torch.preserve_format).requires_grad_()
            res = fn(xg)
            y, idx = res if key == "max" else (res, None)
            y.backward(self.dy)
            self._ref[key] = {"y": y.detach(), "idx": idx, "dx": xg.grad}
        return self._ref[key]

    @staticmethod
    def host(t):
        """What poolkit._core's preallocated calls take: the NumPy view, or the tensor itself where NumPy has no
        such type (bfloat16)."""
        return t if t.dtype == torch.bfloat16 else t.numpy()

    def argmax(self, dtype):
        """poolkit's argmax of x (int64 or compact), for its preallocated backward."""
        if dtype not in self._argmax:
            am = self.out(self.y_shape, dtype)
            core.max_pool_forward(self.g, self.host(self.x), self.host(self.out(self.y_shape)), self.host(am))
            self._argmax[dtype] = am
        return self._argmax[dtype]


# ---- the calls of each library ---------------------------------------------------------------------------------

def train_call(S, fn):
    xg = S.x.detach().clone(memory_format=torch.preserve_format).requires_grad_()

    def step():
        xg.grad = None
        fn(xg).backward(S.dy)
    return Call(step, 2 * size(S.x) + 2 * size(S.dy))  # x, y, dy, dx once each


def torch_call(S, op, call):
    x, r, with_idx = S.x, S.r, op.startswith("max+")
    fwd_bytes = size(x) + size(S.dy) + (8 * S.dy.numel() if with_idx else 0)  # x, y (dy's size), int64 indices
    if call == FWD:
        fn = S.torch_fn(op, with_idx)[0]
        return Call(lambda: fn(x), fwd_bytes)
    if call == TRAIN:
        return train_call(S, S.torch_fn(op)[0])
    if op == "max" or (call == BWD_PRE and S.kind in ("gap", "adaptive")):
        return None  # no out= max_pool2d without indices; _adaptive_avg_pool2d_backward.out allocates, then copies
    if S.kind in ("gap", "adaptive"):
        packet, args = AT.adaptive_avg_pool2d, (x, S.out_size)
    elif op == "avg":
        K, St, P, _ = S.win
        packet, args = getattr(AT, f"avg_pool{r}d"), (x, K, St, P, False, S.cip, None)
        if call == BWD_PRE:
            packet, args = getattr(AT, f"avg_pool{r}d_backward"), (S.dy,) + args
    else:
        K, St, P, D = S.win
        packet, args = getattr(AT, f"max_pool{r}d_with_indices"), (x, K, St, P, D, False)
        if call == BWD_PRE:
            packet = getattr(AT, f"max_pool{r}d_with_indices_backward")
            args = (S.dy,) + args + (S.reference(op)["idx"],)
    if call == FWD_PRE:
        overload, names, nbytes = packet.out, ("out", "indices") if with_idx else ("out",), fwd_bytes
    else:
        idx_bytes = 8 * S.dy.numel() if with_idx else 0
        overload, names, nbytes = packet.grad_input, ("grad_input",), size(S.dy, x) + idx_bytes  # dy, indices, dx
    # outputs in the layout the operator's allocating overload gives them: PyTorch 1.13's 3-d max pooling out= and
    # grad_input= write NCDHW data into whatever they are given, channels-last or not
    template = packet.default(*args)
    outs = {n: S.out(None, like=t) for n, t in zip(names, template if isinstance(template, tuple) else (template,))}
    return Call(lambda: overload(*args, **outs), nbytes, lambda: tuple(outs.values()))


def poolkit_call(S, op, call):
    x, g, xn = S.x, S.g, S.host(S.x)
    dyn = S.host(S.dy)
    if op.startswith("max"):
        idx_dtype = None if op == "max" else torch.int64 if "int64" in op else S.compact
        idx_bytes = 0 if idx_dtype is None else S.dy.numel() * torch.empty(0, dtype=idx_dtype).element_size()
        if call == FWD:
            fn = S.torch_fn(op, idx_dtype is not None)[1]
            return Call(lambda: fn(x), size(x, S.dy) + idx_bytes)
        if call == TRAIN:
            return train_call(S, S.torch_fn(op)[1])
        if call == FWD_PRE:
            y = S.out(S.y_shape)
            am = None if idx_dtype is None else S.out(S.y_shape, idx_dtype)
            yn, amn = S.host(y), None if am is None else S.host(am)
            outs = (lambda: (y, am)) if idx_dtype == torch.int64 else (lambda: (y,))  # the compact form is local
            return Call(lambda: core.max_pool_forward(g, xn, yn, amn), size(x, y) + idx_bytes, outs)
        am, dx = S.argmax(idx_dtype), S.out(list(x.shape))
        amn, dxn = S.host(am), S.host(dx)
        return Call(lambda: core.max_pool_backward(g, dyn, amn, None, dxn), size(S.dy, am, dx), lambda: (dx,))
    if call == FWD:
        fn = S.torch_fn(op)[1]
        return Call(lambda: fn(x), size(x, S.dy))
    if call == TRAIN:
        return train_call(S, S.torch_fn(op)[1])
    if call == FWD_PRE:
        y = S.out(S.y_shape)
        yn = S.host(y)
        return Call(lambda: core.avg_pool_forward(g, S.cip, None, xn, yn), size(x, y), lambda: (y,))
    dx = S.out(list(x.shape))
    dxn = S.host(dx)
    return Call(lambda: core.avg_pool_backward(g, S.cip, None, dyn, dxn), size(S.dy, dx), lambda: (dx,))


def ort_session(S, op):
    """An InferenceSession of the one ONNX node for op, with --threads intra-op threads; cached per Setup."""
    with_idx = op.startswith("max+")
    key = "max+" if with_idx else op
    if key not in S._sessions:
        outputs = ["y", "i"] if with_idx else ["y"]
        if op == "global avg":
            node = helper.make_node("GlobalAveragePool", ["x"], outputs)
        else:
            K, St, P, _ = S.win
            attrs = dict(kernel_shape=K, strides=St, pads=P * 2)
            if op == "avg":
                attrs["count_include_pad"] = int(S.cip)
            node = helper.make_node("MaxPool" if op.startswith("max") else "AveragePool", ["x"], outputs, **attrs)
        value = TensorProto.FLOAT16 if S.dtype == torch.float16 else TensorProto.FLOAT
        types = {"y": value, "i": TensorProto.INT64}
        graph = helper.make_graph([node], "pool", [helper.make_tensor_value_info("x", value, S.x.shape)],
                                  [helper.make_tensor_value_info(o, types[o], None) for o in outputs])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        model.ir_version = 8
        so = ort.SessionOptions()
        so.intra_op_num_threads, so.inter_op_num_threads = ARGS.threads, 1
        # Its threads block when idle: spinning, they kept both cores busy through the next library's timing
        # (poolkit's gap NCHW forward 2.9 -> 8.0 ms right after ONNX Runtime's).
        so.add_session_config_entry("session.intra_op.allow_spinning", "0")
        try:
            S._sessions[key] = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
        except Exception as e:  # (no CPU kernel of the operator for this type): n/a
            S._sessions[key] = None
            print(f"\nONNX Runtime n/a for {S.name} {op}: {str(e).splitlines()[0][:200]}", file=sys.stderr)
    return S._sessions[key]


def ort_call(S, op, call):
    if ort is None or S.nhwc or S.kind == "adaptive" or call not in (FWD, FWD_PRE) or S.dtype == torch.bfloat16:
        return None  # ORT's CPU pooling is NCHW, has no adaptive 13->7 operator, no backward, no bfloat16
    sess, xn, with_idx = ort_session(S, op), S.x.numpy(), op.startswith("max+")
    if sess is None:
        return None
    nbytes = size(S.x, S.dy) + (8 * S.dy.numel() if with_idx else 0)
    if call == FWD:
        return Call(lambda: sess.run(None, {"x": xn}), nbytes)
    y = np.full(S.y_shape, np.nan, xn.dtype)
    i = np.full(S.y_shape, -1, np.int64)
    binding = sess.io_binding()
    binding.bind_ortvalue_input("x", ort.OrtValue.ortvalue_from_numpy(xn))
    binding.bind_ortvalue_output("y", ort.OrtValue.ortvalue_from_numpy(y))
    if with_idx:
        binding.bind_ortvalue_output("i", ort.OrtValue.ortvalue_from_numpy(i))

    def outs():  # ONNX's indices count over the whole tensor, PyTorch's within each (n, c) plane
        plane = int(np.prod(S.x.shape[2:]))
        base = torch.arange(S.x.shape[0] * S.x.shape[1]).reshape(list(S.x.shape[:2]) + [1] * S.r) * plane
        return (torch.from_numpy(y), torch.from_numpy(i) - base) if with_idx else (torch.from_numpy(y),)
    return Call(lambda: sess.run_with_iobinding(binding), nbytes, outs)


def onednn_run(S, alg):
    """The oneDNN program's JSON line for this case, layout and algorithm (max, avg_include, avg_exclude): its three
    medians, byte sizes and implementations, or {"na": why}; run once per Setup and algorithm."""
    global ONEDNN_VERSION
    if alg not in S._onednn:
        cmd = [ONEDNN, "--shape", ",".join(map(str, S.x.shape)), "--alg", alg, "--layout", S.layout,
               "--threads", str(ARGS.threads), "--reps", str(ARGS.reps),
               "--dtype", {torch.bfloat16: "bf16", torch.float16: "f16"}.get(S.dtype, "f32")]
        if S.kind in ("gap", "adaptive"):
            cmd += ["--adaptive", str(S.out_size[0])]
        else:
            K, St, P, _ = S.win
            cmd += ["--kernel", str(K[0]), "--stride", str(St[0]), "--pad", str(P[0])]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        lines = p.stdout.strip().splitlines()
        try:
            res = json.loads(lines[-1])
        except (IndexError, ValueError):
            res = {"error": f"exit {p.returncode}: {p.stderr.strip()[-300:]}"}
        if "error" in res:
            msg = f"{S.name} {S.layout} {alg}: oneDNN program failed: {res['error']}"
            WARNINGS.append(msg)
            print("\nwarning: " + msg, file=sys.stderr)
        elif "na" not in res:
            ONEDNN_VERSION = res["onednn"]
            impl = res["impl"]
            ONEDNN_IMPLS.append(f"{S.name} {S.layout} {alg}: forward inference `{impl['forward_inference']}`, "
                                f"training `{impl['forward_training']}`, backward `{impl['backward']}`; workspace "
                                f"{res['workspace_bytes']} bytes")
            if res["check"] != "ok":
                msg = f"{S.name} {S.layout} {alg}: oneDNN's results differ from plain loops: {res['check']}"
                WARNINGS.append(msg)
                print("\nwarning: " + msg, file=sys.stderr)
        S._onednn[alg] = res
    return S._onednn[alg]


def onednn_call(S, op, call):
    """oneDNN's preallocated rows, timed by its own program: max = forward_inference; max with indices (int64 and
    compact rows alike: the workspace is oneDNN's only argmax) = forward_training and backward from its workspace;
    avg / global avg = forward_inference and backward. Bytes as for the others: src, dst, workspace at its size."""
    if ONEDNN is None or call not in (FWD_PRE, BWD_PRE) or (op == "max" and call == BWD_PRE):
        return None
    alg = "max" if op.startswith("max") else "avg_include" if S.cip else "avg_exclude"
    res = onednn_run(S, alg)
    if "na" in res or "error" in res:
        return None
    ws = res["workspace_bytes"] if op.startswith("max+") else 0
    key = "backward_ms" if call == BWD_PRE else "forward_training_ms" if op.startswith("max+") else \
        "forward_inference_ms"
    return Call(None, res["src_bytes"] + res["dst_bytes"] + ws, seconds=res[key] / 1e3)


def compiled_call(which):
    """torch.compile (inductor, fullgraph) of the allocating forward and of the train step's forward: which = 0
    compiles torch.nn.functional's call, 1 poolkit.torch's (its registered operators). None on a PyTorch without
    torch.compile."""
    def call_fn(S, op, call):
        if not hasattr(torch, "compile") or call not in (FWD, TRAIN):
            return None
        with_idx = op.startswith("max+")
        torch._dynamo.reset()  # every row compiles the same lambdas anew: past rows' code must not count
        fn = torch.compile(S.torch_fn(op, with_idx and call == FWD)[which], fullgraph=True)
        if call == TRAIN:
            return train_call(S, fn)
        idx_bytes = 8 * S.dy.numel() if with_idx else 0
        outs = (lambda: fn(S.x)) if with_idx else (lambda: (fn(S.x),))
        return Call(lambda: fn(S.x), size(S.x, S.dy) + idx_bytes, outs)
    return call_fn


CALLS = {"PyTorch": torch_call, "torch.compile": compiled_call(0), "ONNX Runtime": ort_call, "oneDNN": onednn_call,
         "poolkit": poolkit_call, "poolkit compiled": compiled_call(1)}


# ---- running and checking --------------------------------------------------------------------------------------

def check(S, lib, op, call, outs):
    """Compare a call's results with PyTorch's allocating ones; a mismatch becomes a warning, not an error."""
    ref = S.reference(op)
    want = (ref["dx"],) if call == BWD_PRE else (ref["y"], ref["idx"])[:len(outs)]
    exact = op.startswith("max") and call != BWD_PRE  # sums of gradients and averages may round differently
    for name, a, b in zip(("result", "indices"), outs, want):
        a = a.to(b.dtype)
        # (16-bit: PyTorch rounds each addition of overlapping windows' gradients to the type, poolkit the float32
        # sum once; they differ by up to 2 units in the last place)
        tol = {torch.bfloat16: 2.0 ** -6, torch.float16: 2.0 ** -9}.get(b.dtype, 1e-5)
        same = torch.equal(a, b) if exact or name == "indices" else torch.allclose(a, b, rtol=tol, atol=tol / 10)
        if not same:
            msg = f"{S.name} {S.layout} {op} {call}: {lib}'s {name} differs from PyTorch's allocating call"
            WARNINGS.append(msg)
            print("\nwarning: " + msg, file=sys.stderr)


def run():
    copy = copy_bandwidth()
    rows = []
    layouts = ("nchw", "nhwc") if ARGS.layout == "both" else (ARGS.layout,)
    cases = [c for c in CASES if not ARGS.case or any(c[0] == n or c[0].startswith(n + "-") for n in ARGS.case)]
    total = len(layouts) * sum(len(calls) for c in cases for _, calls in operators(c[2]))
    done = 0
    for case in cases:
        for layout in layouts:
            S = Setup(case, layout)
            for op, calls in operators(S.kind, str(S.compact).replace("torch.", "")):
                for call in calls:
                    done += 1
                    print(f"\r[{done}/{total}] {case[0]} {layout} {op} {call} ...          ", end="", file=sys.stderr)
                    row = {lib: c for lib in LIBS if (c := CALLS[lib](S, op, call)) is not None}
                    timed = [lib for lib, c in row.items() if c.seconds is None]
                    medians = dict(zip(timed, alternating_medians([row[lib].fn for lib in timed], ARGS.reps)))
                    result = {}
                    for lib, c in row.items():
                        result[lib] = (c.seconds if c.seconds is not None else medians[lib], c.nbytes)
                        if c.outs is not None:
                            check(S, lib, op, call, c.outs())
                    del row  # (its preallocated outputs, before the next row makes its own)
                    rows.append((case[0], layout, op, call, result))
            del S
    print("\r" + " " * 100 + "\r", end="", file=sys.stderr)
    return copy, rows


# ---- reporting -------------------------------------------------------------------------------------------------

def table_row(name, layout, op, call, result, copy):
    def cell(lib, f):
        return f(*result[lib]) if lib in result else "n/a"
    ms = [cell(lib, lambda t, b: f"{t * 1e3:.2f}") for lib in LIBS]
    frac = [cell(lib, lambda t, b: f"{b / t / copy:.2f}") for lib in LIBS]
    pk, pkc = result.get("poolkit"), result.get("poolkit compiled")
    up = [f"{result[lib][0] / pk[0]:.2f}x" if pk and lib in result else "n/a" for lib in PEERS]
    up.append(f"{result['torch.compile'][0] / pkc[0]:.2f}x" if pkc and "torch.compile" in result else "n/a")
    return "| " + " | ".join([name, layout, op.replace("*", "\\*"), call] + ms + frac + up) + " |"


def command_line():
    cmd = f"python bench/compare.py --threads {ARGS.threads} --reps {ARGS.reps}"
    cmd += "".join(f" --case {c}" for c in ARGS.case or [])
    return cmd + (f" --layout {ARGS.layout}" if ARGS.layout != "both" else "")


def main():
    copy, rows = run()
    stem = os.path.splitext(ARGS.out)[0]
    peers = [f"PyTorch {torch.__version__} (CPU)"] + ([f"ONNX Runtime {ort.__version__}"] if ort else [])
    peers += [f"oneDNN {ONEDNN_VERSION}"] if ONEDNN_VERSION else []
    peers = ", ".join(peers[:-1]) + " and " + peers[-1] if len(peers) > 1 else peers[0]
    lines = [f"# poolkit vs {peers}, {ARGS.threads} thread(s)", "",
             f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs. Plain copy "
             f"{copy / 1e9:.1f} GB/s (bytes read + written). Command: `{command_line()}`. One process, the same "
             "thread count for every library (ONNX Runtime: intra_op_num_threads, one inter-op thread), the "
             f"libraries of a row timed in turn, rep after rep (medians, after {WARM_REPS} reps not kept), each rep "
             "starting one library further on "
             "(so that none always follows the same other), each timed call right after an untimed one "
             "of the same library, except oneDNN: its own program `bench/onednn/onednn_pool_bench.cpp`, run from "
             "this one per case, layout and algorithm with the same OpenMP thread count and reps, its calls back to "
             "back.", "",
             "Calls: allocating = torch.nn.functional, InferenceSession.run, poolkit.torch; preallocated = outputs "
             "made once before timing, then aten `*.out` / `*_backward.grad_input`, `run_with_iobinding`, oneDNN "
             "`pooling_forward` / `pooling_backward` (format_tag nchw / nhwc, ncdhw / ndhwc), poolkit._core on NumPy "
             "views of the tensors (bfloat16: the tensors); train step = forward with autograd, then backward. oneDNN's max rows: without "
             "indices = forward_inference; with indices = forward_training, which writes its workspace (its argmax), "
             "and backward_data from that workspace; global avg = pooling with a 7x7 kernel. "
             "Fraction of copy: each input read once and each output written once, indices at the width that library "
             "stores (oneDNN: its workspace's byte size; train step: x, y, dy, dx). n/a: the library has no such "
             "call (PyTorch: no out= max pool without indices, and `_adaptive_avg_pool2d_backward.out` is a "
             "generated allocate-and-copy; ONNX Runtime: NCHW forward only, no adaptive 13->7 operator, no bfloat16; "
             "oneDNN: preallocated calls only, no adaptive pooling with uneven windows such as 13->7, and only the "
             "16-bit types its build implements on this CPU). half-bf16 / half-f16: resnet-stem in bfloat16 / float16. torch.compile: "
             "`torch.compile(fullgraph=True)` (inductor) of the same torch.nn.functional call; poolkit compiled: of "
             "the poolkit.torch call (its registered operators); allocating forward and train step only (the first "
             "call, which compiles, is the warm-up).", "",
             "\\* poolkit's compact window-local argmax (what poolkit.torch saves for backward); PyTorch and ONNX "
             "Runtime have no compact form, so their columns in these rows are their int64-indices calls. oneDNN's "
             "workspace is its only form: the same measurement stands in the int64 and the compact rows.", "",
             "| case | layout | operator | call | " + " | ".join(f"{lib} ms" for lib in LIBS) + " | " +
             " | ".join(f"{lib} of copy" for lib in LIBS) + " | " + " | ".join(f"poolkit vs {lib}" for lib in PEERS)
             + " | poolkit compiled vs torch.compile |", "|" + "---|" * (5 + 2 * len(LIBS) + len(PEERS))]
    lines += [table_row(*row, copy) for row in rows]
    lines += ["", f"Charts: `{os.path.basename(stem)}-speedup.png` (poolkit's speed-up over each peer, log scale) and "
              f"`{os.path.basename(stem)}-limit.png` (every library's fraction of copy), drawn by bench/charts.py; "
              "a missing bar is n/a."]
    if ORT_MISSING:
        lines += ["", f"ONNX Runtime left out: {ORT_MISSING}."]
    if ONEDNN_MISSING:
        lines += ["", f"oneDNN left out: {ONEDNN_MISSING}."]
    if ONEDNN_IMPLS:
        lines += ["", "oneDNN's implementations (primitive descriptors' impl_info_str):"]
        lines += [f"- {line}" for line in ONEDNN_IMPLS]
    if WARNINGS:
        lines += ["", "Result checks that failed (each call's results against PyTorch's allocating call):"]
        lines += [f"- {w}" for w in WARNINGS]
    with open(ARGS.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    machine = f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, {ARGS.threads} thread(s)"
    charts.speedup_chart(rows, stem + "-speedup.png",
                         f"poolkit vs {peers}: speed-up per row\n{machine}; `{command_line()}`")
    charts.limit_chart(rows, stem + "-limit.png",
                       f"Fraction of a plain copy's bandwidth ({copy / 1e9:.1f} GB/s) per row\n{machine}; "
                       f"`{command_line()}`", copy)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
