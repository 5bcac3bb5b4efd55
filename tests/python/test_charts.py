"""bench/charts.py draws both charts of a benchmark run from a small fixed result table (no timing): valid PNG files,
the titles, axis labels and legends a reader needs, and bars whose lengths are the hand-computed ratios."""
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
import charts  # noqa: E402  (bench/charts.py)

# (case, layout, operator, call, {library: (seconds, bytes moved)})
ROWS = [
    ("seed", "nchw", "max", "forward", {"PyTorch": (0.030, 3e8), "ONNX Runtime": (0.005, 3e8), "poolkit": (0.010, 3e8),
                                        "poolkit compiled": (0.012, 3e8)}),  # poolkit's own variant: not a peer
    ("seed", "nhwc", "max", "forward", {"PyTorch": (0.040, 3e8), "poolkit": (0.008, 3e8)}),
    ("gap", "nchw", "global avg", "train step", {"PyTorch": (0.002, 1e8), "poolkit": (0.004, 1e8)}),
    ("gap", "nhwc", "global avg", "train step", {"poolkit": (0.004, 1e8)}),  # no peer: left out of the speed-ups
]
TITLE = "poolkit vs PyTorch 2.15 and ONNX Runtime 1.20: speed-up per row\ntest machine, 2 thread(s); `cmd`"


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR", f"{path} is not a PNG"
    return struct.unpack(">II", head[16:24])


def bars(ax):
    """(left, right, colour) of each bar drawn in a panel, in drawing order."""
    return [(p.get_x(), p.get_x() + p.get_width(), p.get_facecolor()) for p in ax.patches]


def test_speedup_chart(tmp_path):
    path = tmp_path / "speedup.png"
    fig = charts.speedup_chart(ROWS, str(path), TITLE)
    w, h = png_size(path)
    assert w > 600 and h > 200
    assert fig._suptitle.get_text() == TITLE
    nchw, nhwc = fig.axes
    assert "channels-first" in nchw.get_title() and "channels-last" in nhwc.get_title()
    assert "speed-up" in nchw.get_xlabel() and "log scale" in nchw.get_xlabel()
    assert nchw.get_xscale() == "log"
    labels = [t.get_text() for t in nchw.get_yticklabels()]
    assert labels == ["seed · max · forward", "gap · global avg · train step"]
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend == ["PyTorch", "ONNX Runtime"]  # the peers, not poolkit
    # Bars start at 1x and end at peer time / poolkit time: 3x and 0.5x (PyTorch), 0.5x (ONNX Runtime) in NCHW.
    ends = sorted(round(max(l, r) if r > 1 else min(l, r), 6) for l, r, _ in bars(nchw))
    assert ends == [0.5, 0.5, 3.0]
    assert all(min(l, r) == 1.0 or max(l, r) == 1.0 for l, r, _ in bars(nchw))
    assert [round(r, 6) for _, r, _ in bars(nhwc)] == [5.0]
    assert any(line.get_xdata()[0] == 1.0 for line in nchw.get_lines())  # the 1x line


def test_limit_chart(tmp_path):
    path = tmp_path / "limit.png"
    fig = charts.limit_chart(ROWS, str(path), "Fraction of the limit\ntest machine", 2e10, "read+write limit")
    png_size(path)
    nchw, nhwc = fig.axes
    assert "fraction of the limit" in nchw.get_xlabel() and "read+write limit" in nchw.get_xlabel()
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend == ["PyTorch", "ONNX Runtime", "poolkit", "poolkit compiled"]
    # bytes / seconds / 2e10: 3e8 / 0.030 -> 0.5, 3e8 / 0.005 -> 3.0, 3e8 / 0.010 -> 1.5, 1e8 / 0.002 -> 2.5,
    # 1e8 / 0.004 -> 1.25, 3e8 / 0.012 -> 1.25 (NCHW panel)
    assert sorted(round(r, 6) for _, r, _ in bars(nchw)) == [0.5, 1.25, 1.25, 1.5, 2.5, 3.0]
    assert sorted(round(r, 6) for _, r, _ in bars(nhwc)) == [0.375, 1.25, 1.875]
    assert any(line.get_xdata()[0] == 1.0 for line in nchw.get_lines())  # the limit line
