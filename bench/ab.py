#!/usr/bin/env python3
"""A/B of two poolkit binaries: runs `poolkit bench` of each in turn (A, B, A, B, ...) with the same arguments and
prints, per row, the median time of each and B's speed-up over A (A's median / B's median; above 1: B faster).

    python3 bench/ab.py --a /tmp/poolkit-before --b build/release/tools/poolkit --pairs 3 [--threads 2] -- --case seed --op max-fwd

Alternating runs share the machine's drift in memory bandwidth; one-off comparisons of two runs do not.
"""
import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_table import run  # noqa: E402  (one parser of `poolkit bench` rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--a", required=True, help="baseline poolkit binary")
    ap.add_argument("--b", required=True, help="candidate poolkit binary")
    ap.add_argument("--pairs", type=int, default=3, help="A/B run pairs (default 3)")
    ap.add_argument("--threads", type=int, default=2, help="threads of both (default 2)")
    ap.add_argument("bench_args", nargs="*", help="arguments of `poolkit bench` (after --)")
    args = ap.parse_args()
    if args.pairs < 1:
        ap.error("--pairs must be at least 1")
    runs = {"A": [], "B": []}
    for i in range(args.pairs):
        for name, binary in (("A", args.a), ("B", args.b)):
            print(f"pair {i + 1}/{args.pairs}: {name}", file=sys.stderr, flush=True)
            runs[name].append({" ".join(k): ms for k, (ms, *_) in run(binary, args.threads, args.bench_args).items()})
    print(f"{'row':<60} {'A ms':>8} {'B ms':>8} {'A/B':>6}  per pair")
    for key in runs["A"][0]:
        a = [r[key] for r in runs["A"] if key in r]
        b = [r[key] for r in runs["B"] if key in r]
        if not a or not b:
            continue
        pairs = " ".join(f"{x / y:.2f}" for x, y in zip(a, b))
        print(f"{key:<60} {statistics.median(a):8.3f} {statistics.median(b):8.3f} "
              f"{statistics.median(a) / statistics.median(b):6.2f}  {pairs}")


if __name__ == "__main__":
    main()
