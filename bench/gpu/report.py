"""Merges the CSV rows of poolkit_gpu_bench, torch_pool_bench.py and cudnn_pool_bench into bench/RESULTS-gpu.md:
per case, layout and operation the median time of each implementation, its fraction of the device copy bandwidth
(bytes read + written, at the width stored), and poolkit's speed-up over each peer."""
import csv
import sys


def load(paths):
    rows = []
    for path in paths:
        try:
            with open(path, newline="") as f:
                rows += [r for r in csv.DictReader(f) if r.get("impl")]
        except FileNotFoundError:
            print(f"report: {path} missing, skipped", file=sys.stderr)
    return rows


def main(out_path, device, *paths):
    rows = load(paths)
    copy = [r for r in rows if r["impl"] == "copy"]
    if not copy:
        sys.exit("report: no copy row: run poolkit_gpu_bench first")
    copy_bw = float(copy[0]["bytes"]) / float(copy[0]["median_us"]) / 1e3  # GB/s
    key = lambda r: (r["case"], r["layout"], r["dtype"], r["op"])  # noqa: E731
    peers = {}
    for r in rows:
        if r["impl"] in ("torch", "cudnn"):
            peers.setdefault(key(r) + (r["impl"],), float(r["median_us"]))
    lines = [
        "# GPU benchmark results", "",
        f"Device: {device}. Device-to-device copy: {copy_bw:.0f} GB/s (read + write). Medians of 50 CUDA-event-timed "
        "runs after 5 warm-ups, random data. `of copy` = (bytes read + written) / time / copy bandwidth. Ratios > 1: "
        "poolkit faster. Written by scripts/gpu-check.sh.", "",
        "| case | layout | dtype | op | argmax | poolkit µs | of copy | torch µs | ×torch | cuDNN µs | ×cuDNN |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if r["impl"] != "poolkit":
            continue
        us = float(r["median_us"])
        frac = float(r["bytes"]) / us / 1e3 / copy_bw
        t = peers.get(key(r) + ("torch",))
        c = peers.get(key(r) + ("cudnn",))
        fmt = lambda v: f"{v:.1f}" if v else "–"  # noqa: E731
        ratio = lambda v: f"{v / us:.2f}" if v else "–"  # noqa: E731
        lines.append(f"| {r['case']} | {r['layout']} | {r['dtype']} | {r['op']} | {r['variant'] or '–'} | {us:.1f} | "
                     f"{frac:.2f} | {fmt(t)} | {ratio(t)} | {fmt(c)} | {ratio(c)} |")
    with open(out_path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"report: wrote {out_path}")


if __name__ == "__main__":
    if len(sys.argv) < 4:
        sys.exit("usage: report.py OUT.md DEVICE_NAME CSV...")
    main(*sys.argv[1:])
