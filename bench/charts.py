"""The two charts of a benchmark run, drawn with matplotlib from its result table (no timing here).

A result table is a list of rows ``(case, layout, operator, call, result)`` where ``result`` maps a library's name
to ``(seconds, bytes moved)`` for the libraries that have that call. Both charts put one row of bars per case,
operator and call, with a panel per layout side by side:

- ``speedup_chart``: poolkit's speed-up over each peer (libraries named "poolkit..." are not peers) (peer's time / poolkit's time) on a log axis with a line at
  1x: bars right of the line are rows poolkit wins, and the shortest bar of a row is the closest peer.
- ``limit_chart``: every library's fraction of the machine's limit (bytes moved / time / limit bandwidth), with the
  limit line at 1.

Each returns the matplotlib Figure after saving it, so tests can read its titles and labels.
"""
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

SUBJECT = "poolkit"
# Colour-blind-safe (Okabe-Ito) colours for peers in their order of appearance; poolkit is always the dark blue.
PALETTE = ("#999999", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442")
SUBJECT_COLOURS = ("#0041A0", "#5C8AE6")  # poolkit, then its variants ("poolkit compiled")
LAYOUT_NAMES = {"nchw": "channels-first (NCHW / NCDHW)", "nhwc": "channels-last (NHWC / NDHWC)"}


def _libraries(rows):
    seen = []
    for *_, result in rows:
        for lib in result:
            if lib not in seen:
                seen.append(lib)
    return seen


def _labels(rows):
    """Row labels in first-seen order, one per (case, operator, call), shared by the layout panels."""
    labels = []
    for case, _, op, call, _ in rows:
        label = f"{case} · {op} · {call}"
        if label not in labels:
            labels.append(label)
    return labels


def _layouts(rows):
    return [lay for lay in ("nchw", "nhwc") if any(r[1] == lay for r in rows)] or sorted({r[1] for r in rows})


def _ours(lib):
    return lib.startswith(SUBJECT)


def _colours(libs):
    peers = [lib for lib in libs if not _ours(lib)]
    ours = [lib for lib in libs if _ours(lib)]
    colours = {lib: PALETTE[i % len(PALETTE)] for i, lib in enumerate(peers)}
    colours.update({lib: SUBJECT_COLOURS[min(i, len(SUBJECT_COLOURS) - 1)] for i, lib in enumerate(ours)})
    return colours


def _figure(rows, title, series):
    """A figure with a panel per layout; series(libs) gives the libraries drawn as bars in each row."""
    labels, layouts = _labels(rows), _layouts(rows)
    libs = series(_libraries(rows))
    height = max(4.0, 0.16 * len(labels) * max(1, len(libs)) + 2.8)
    fig, axes = plt.subplots(1, len(layouts), sharey=True, figsize=(6.5 * len(layouts) + 2.5, height), squeeze=False)
    fig.suptitle(title, fontsize=11, x=0.01, y=1 - 0.08 / height, ha="left", va="top")
    return fig, axes[0], labels, layouts, libs


def _bars(ax, rows, layout, labels, libs, value, colours, base, text):
    """Bars from x = base to each value, one band per library in each row, the value written at the bar's end."""
    band = 0.8 / max(1, len(libs))
    index = {label: i for i, label in enumerate(labels)}
    for j, lib in enumerate(libs):
        ys, xs = [], []
        for case, lay, op, call, result in rows:
            v = value(result, lib) if lay == layout else None
            if v is not None:
                ys.append(index[f"{case} · {op} · {call}"] - 0.4 + band * (j + 0.5))
                xs.append(v)
        ax.barh(ys, [x - base for x in xs], left=base, height=band * 0.9, color=colours[lib], label=lib)
        for y, x in zip(ys, xs):
            ax.text(x, y, f" {text(x)} " if x >= base else f" {text(x)} ", fontsize=6, va="center",
                    ha="left" if x >= base else "right", color="#333333")
    ax.set_yticks(range(len(labels)))
    ax.set_yticklabels(labels, fontsize=8)
    ax.set_ylim(len(labels) - 0.5, -0.5)
    cases = [label.split(" · ")[0] for label in labels]
    for i in range(1, len(labels)):
        if cases[i] != cases[i - 1]:  # a rule between cases
            ax.axhline(i - 0.5, color="#888888", linewidth=0.6)
    ax.set_title(LAYOUT_NAMES.get(layout, layout), fontsize=10, pad=18)
    ax.grid(axis="x", color="#dddddd", linewidth=0.6)
    ax.set_axisbelow(True)
    ax.tick_params(axis="x", top=True, labeltop=True, labelsize=8)


def _legend(fig, axes):
    handles, names = [], []
    for ax in axes:
        for h, n in zip(*ax.get_legend_handles_labels()):
            if n not in names:
                handles.append(h)
                names.append(n)
    # under the title (two lines), so that neither covers the other however narrow the figure
    fig.legend(handles, names, loc="upper left", bbox_to_anchor=(0.01, 1 - 0.6 / fig.get_figheight()), fontsize=9,
               ncol=min(6, len(names)), frameon=False)


def speedup_chart(rows, path, title):
    """poolkit's speed-up over each peer per row, log axis, a line at 1x. Returns the saved Figure."""
    def speedup(result, lib):
        if SUBJECT not in result or lib not in result:
            return None
        return result[lib][0] / result[SUBJECT][0]
    rows = [r for r in rows if SUBJECT in r[4] and any(not _ours(lib) for lib in r[4])]  # rows with a peer
    fig, axes, labels, layouts, peers = _figure(rows, title, lambda libs: [lib for lib in libs if not _ours(lib)])
    colours = _colours(peers + [SUBJECT])
    values = [speedup(r[4], lib) for r in rows for lib in peers]
    values = [v for v in values if v]
    lo = min(values + [1.0]) / 1.6
    hi = max(values + [1.0]) * 1.6
    for ax, layout in zip(axes, layouts):
        _bars(ax, rows, layout, labels, peers, speedup, colours, 1.0, lambda v: f"{v:.2g}x")
        ax.set_xscale("log")
        ax.set_xlim(lo, hi)
        ax.axvline(1.0, color="#B00020", linewidth=1.2)
        ax.set_xlabel("poolkit's speed-up (peer's time / poolkit's time, log scale);\nright of the red 1x line: "
                      "poolkit faster", fontsize=8)
        ax.xaxis.set_major_locator(matplotlib.ticker.FixedLocator(
            [t for t in (0.25, 0.5, 1, 2, 5, 10, 20, 50, 100, 200) if lo <= t <= hi]))
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}x"))
    _legend(fig, axes)
    fig.tight_layout(rect=(0, 0, 1, 1 - 1.0 / fig.get_figheight()))
    fig.savefig(path, dpi=90)
    return fig


def limit_chart(rows, path, title, limit_bytes_per_s, limit_name="plain copy bandwidth"):
    """Every library's fraction of the machine's limit per row, with the limit line at 1. Returns the saved Figure."""
    def fraction(result, lib):
        if lib not in result:
            return None
        seconds, nbytes = result[lib]
        return nbytes / seconds / limit_bytes_per_s
    fig, axes, labels, layouts, libs = _figure(
        rows, title, lambda libs: [lib for lib in libs if not _ours(lib)] + [lib for lib in libs if _ours(lib)])
    colours = _colours(libs)
    top = max([fraction(r[4], lib) or 0 for r in rows for lib in libs] + [1.0])
    for ax, layout in zip(axes, layouts):
        _bars(ax, rows, layout, labels, libs, fraction, colours, 0.0, lambda v: f"{v:.2f}")
        ax.set_xlim(0, math.ceil(top * 10 + 0.5) / 10)
        ax.axvline(1.0, color="#B00020", linewidth=1.2)
        ax.set_xlabel(f"fraction of the limit (bytes moved / time / {limit_name});\nred line: at the limit",
                      fontsize=8)
    _legend(fig, axes)
    fig.tight_layout(rect=(0, 0, 1, 1 - 1.0 / fig.get_figheight()))
    fig.savefig(path, dpi=90)
    return fig
