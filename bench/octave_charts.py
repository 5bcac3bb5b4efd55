#!/usr/bin/env python3
"""The two charts of bench/charts.py for seed 000's run in Octave (matlab/examples/seed000.m writes the CSV):
poolkit's MEX calls against the plain Octave code for the same job, and each call's fraction of a plain copy's
bandwidth beside the same work in `poolkit bench` (C++ alone: what the MEX layer costs on top).

usage: python3 bench/octave_charts.py bench/RESULTS-octave-seed000.csv   (writes <csv stem>-speedup/-limit.png)"""
import csv
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import charts  # noqa: E402


def read(path):
    with open(path) as f:
        head = f.readline()
        rows = []
        for r in csv.DictReader(f):
            result, nbytes = {}, float(r["bytes"])
            for lib, col in (("plain Octave", "plain_octave_ms"), ("poolkit (MEX)", "poolkit_mex_ms"),
                             ("poolkit bench (C++)", "poolkit_bench_ms"),
                             ("poolkit bench, fresh outputs (C++)", "poolkit_bench_fresh_ms")):
                ms = float(r[col])
                if not math.isnan(ms):
                    result[lib] = (ms / 1e3, nbytes)
            rows.append(("seed 000", "SSCB (the core's NCHW)", r["call"], "MEX call", result))
    return head.lstrip("# ").strip(), rows


def main(path):
    head, rows = read(path)
    m = re.search(r"copy GB/s ([0-9.]+)", head)
    stem = os.path.splitext(path)[0]
    # speed-up: the MEX call is "poolkit"; the C++ bench row is poolkit's own, not a peer
    up = [(c, lay, op, call, {("poolkit" if k == "poolkit (MEX)" else k): v for k, v in res.items()})
          for c, lay, op, call, res in rows]
    charts.speedup_chart(up, stem + "-speedup.png", f"poolkit's MEX calls vs plain Octave for the same job: speed-up\n"
                         f"{head}; SSCB 32x32x2x16384 single, 2x2 stride 2")
    if m:
        charts.limit_chart(rows, stem + "-limit.png", f"Fraction of a plain copy's bandwidth ({m.group(1)} GB/s, "
                           f"from poolkit bench) per call\n{head}", float(m.group(1)) * 1e9)
    print("wrote", stem + "-speedup.png", "and -limit.png" if m else "(no copy bandwidth: no limit chart)")


if __name__ == "__main__":
    main(sys.argv[1])
