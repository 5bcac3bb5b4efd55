#!/usr/bin/env python3
"""Runs `poolkit bench` several times at 2 threads and once at 1, and prints the markdown table of bench/RESULTS.md.

Each run measures a plain memcpy just before each row and the read and write bandwidths before and after it (their
mean; a row run again where they disagree); a row's fraction of copy is against that copy, its fraction of the
limit is its limit time (bytes read / read bandwidth + bytes written / write bandwidth) over its time. The table
gives per row the median over the 2-thread runs of the time and of both fractions, the range of the fraction of
the limit, the 1-thread run, and the 2-thread median's speed-up over 1 thread. On a shared machine whose bandwidth
drifts, the median of several runs says more than any one run.

    python3 bench/bench_table.py --runs 3 [--poolkit build/cpu/tools/poolkit] [bench options...]
"""
import argparse
import re
import statistics
import subprocess
import sys

NUM = r"\s+([\d.]+)"
# case, layout, operator, then ms, GB/s, copy GB/s, of copy, and (binaries since the limit) read GB/s, write GB/s,
# limit ms, of limit
ROW = re.compile(r"^(\S+)\s+(nchw|nhwc)\s+(.+?)" + NUM * 4 + "(?:" + NUM * 4 + r")?\s*$")


def run(poolkit, threads, extra):
    out = subprocess.run([poolkit, "bench", "--threads", str(threads)] + extra, check=True, capture_output=True,
                         text=True).stdout
    rows = {}
    for line in out.splitlines():
        m = ROW.match(line)
        if m:
            # ms, fraction of copy, fraction of the limit (None from older binaries)
            rows[(m.group(1), m.group(2), m.group(3))] = (float(m.group(4)), float(m.group(7)),
                                                         float(m.group(11)) if m.group(11) else None)
    if not rows:
        sys.exit("bench_table: no rows in the output of poolkit bench")
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=3, help="2-thread runs (default 3)")
    p.add_argument("--poolkit", default="build/cpu/tools/poolkit")
    args, extra = p.parse_known_args()
    if args.runs < 1:
        p.error("--runs must be at least 1")
    two = []
    for i in range(args.runs):
        print(f"2-thread run {i + 1} of {args.runs}...", file=sys.stderr)
        two.append(run(args.poolkit, 2, extra))
    print("1-thread run...", file=sys.stderr)
    one = run(args.poolkit, 1, extra)
    print(f"| case | layout | operator | 2 threads: ms (median of {args.runs}) | of copy (median) | of limit (median) "
          "| of limit (range) | 1 thread: ms | of limit | 2 vs 1 thread |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for key in two[0]:
        ms = statistics.median(r[key][0] for r in two)
        copy = statistics.median(r[key][1] for r in two)
        limit = [r[key][2] for r in two]
        ms1, _, limit1 = one[key]
        print(f"| {key[0]} | {key[1]} | {key[2]} | {ms:.3f} | {copy:.2f} | {statistics.median(limit):.2f} | "
              f"{min(limit):.2f}-{max(limit):.2f} | {ms1:.3f} | {limit1:.2f} | {ms1 / ms:.2f}x |")


if __name__ == "__main__":
    main()
