#!/usr/bin/env python3
"""Two or more kernels_bench binaries, run in turn, compared case by case.

    # the binary of an older commit against the current one, BM_Gemm Q8_0 and Q4_0, 4 rounds:
    python3 bench/ab_kernels.py --rounds 4 --filter 'BM_Gemm/(3|4)/(3584/1024|1024/3584)/(1|2)/' \\
        /tmp/kernels_bench.old build/release/bench/kernels_bench

On a shared virtual machine one run of a binary can fall 5–15 points short of another run of the same binary,
so a comparison of two single runs says little. Here every round runs each binary once, in the order given,
under `chrt -f 50` where that is allowed (run as root), and the table gives per case and binary the best and the
median of --counter (pct_of_peak: BM_Gemm's percentage of the peak burst paired with it; best_GOPS, GB_per_s, ...)
over the rounds. Never run it beside a build or a test run.

Python standard library only.
"""
import argparse
import collections
import csv
import io
import os
import shutil
import statistics
import subprocess
import sys


def run_once(binary, filt, min_time, realtime):
    cmd = [binary, f"--benchmark_filter={filt}", f"--benchmark_min_time={min_time}", "--benchmark_format=csv"]
    if realtime:
        cmd = ["chrt", "-f", "50"] + cmd
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    lines = out[out.find("name,"):]  # Google Benchmark's csv follows its context lines
    return list(csv.DictReader(io.StringIO(lines)))


def case_name(row):
    return row["name"].replace("/manual_time", "")


def sort_key(name):
    return [int(p) if p.isdigit() else p for p in name.split("/")]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("binaries", nargs="+", help="kernels_bench binaries (copies of build/release/bench/kernels_bench)")
    ap.add_argument("--filter", required=True, help="--benchmark_filter for every binary")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--counter", default="pct_of_peak")
    ap.add_argument("--min-time", default="0.3", help="--benchmark_min_time (seconds)")
    ap.add_argument("--no-chrt", action="store_true", help="do not run under chrt -f 50")
    args = ap.parse_args()

    realtime = not args.no_chrt and shutil.which("chrt") is not None and os.geteuid() == 0
    names = [os.path.basename(b) for b in args.binaries]
    labels = [n if names.count(n) == 1 else b for n, b in zip(names, args.binaries)]  # paths where names repeat
    labels = [l if labels.count(l) == 1 else f"{l}#{i + 1}" for i, l in enumerate(labels)]  # the same file twice
    values = collections.defaultdict(list)  # (case, label) -> counter values
    for r in range(args.rounds):
        for binary, label in zip(args.binaries, labels):
            for row in run_once(binary, args.filter, args.min_time, realtime):
                if row.get("error_occurred") == "true":
                    print(f"{label}: {case_name(row)}: {row.get('error_message')}", file=sys.stderr)
                    continue
                value = row.get(args.counter, "")
                if value:
                    values[case_name(row), label].append(float(value))
        print(f"round {r + 1} of {args.rounds} done", file=sys.stderr)

    cases = sorted({c for c, _ in values}, key=sort_key)
    if not cases:
        sys.exit(f"no case printed {args.counter} (filter {args.filter!r})")
    width = max(len(c) for c in cases)
    cell = max(14, *(len(l) for l in labels))  # "best (median)" as "  65.2 ( 63.1)"
    print(f"{'best (median)':{width}}  " + "  ".join(f"{l:>{cell}}" for l in labels))
    for c in cases:
        cells = []
        for l in labels:
            v = values.get((c, l))
            text = f"{max(v):6.1f} ({statistics.median(v):5.1f})" if v else "—"
            cells.append(f"{text:>{cell}}")
        print(f"{c:{width}}  " + "  ".join(cells))


if __name__ == "__main__":
    main()
