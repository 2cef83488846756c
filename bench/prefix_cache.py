#!/usr/bin/env python3
"""The decision prefix cache, measured in pairs: one server with the cache (the default --decision-cache)
and one without (--decision-cache 0), both started from the same binary and model; each request goes to
both, one right after the other (which one first alternates), so a drift of the host's speed hits both
sides alike.

    python3 bench/prefix_cache.py --verdict build/release/src/cli/verdict \\
        --model clef=~/.cache/verdict-bench/clef-0.8b-q8_0 --threads 2 --tokens 21 --runs 15

Two kinds of request, --runs of each (states as in decision_batching.py, each new):
  fresh:   a new state: the cached server resumes after the record prefix P (usage.cached_tokens = len(P));
  re-ask:  a state asked before, now with another question: it resumes after P and the state.
Prints the median wall time of each side and the median of the per-pair ratios (without / with).
Both servers run with --threads each; they never compute at the same time. Standard library only.
"""
import argparse
import json
import statistics
import sys

import decision_batching as db


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--verdict", required=True)
    ap.add_argument("--model", required=True, help="NAME=DIR of a decision model")
    ap.add_argument("--threads", type=int)
    ap.add_argument("--tokens", type=int, default=21, help="tokens of each state (default 21: 342-token records)")
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    name = args.model.split("=", 1)[0]
    servers = {}
    try:
        servers["with"] = db.start_server(args.verdict, [args.model], args.threads, [])
        servers["without"] = db.start_server(args.verdict, [args.model], args.threads, ["--decision-cache", "0"])
        bases = {k: v[1] for k, v in servers.items()}
        n_words, got, _ = db.fit_words(bases["with"], name, args.tokens)
        db.fit_words(bases["without"], name, args.tokens)  # the same probes: both warm
        result = {"input_tokens": got}
        for kind in ("fresh", "re-ask"):
            times = {"with": [], "without": []}
            cached = set()
            for r in range(args.runs):
                i = 2000 + r if kind == "fresh" else 3000 + r
                order = ("with", "without") if r % 2 == 0 else ("without", "with")
                if kind == "re-ask":
                    for side in order:  # the first ask, not counted
                        db.post(bases[side], db.body(name, i, n_words, "urgent"))
                for side in order:
                    dt, out = db.post(bases[side], db.body(name, i, n_words, "billing" if kind == "re-ask" else "urgent"))
                    times[side].append(dt)
                    if side == "with":
                        cached.add(out["usage"]["cached_tokens"])
            ratios = [b / a for a, b in zip(times["with"], times["without"])]
            result[kind] = {"with_median_ms": db.ms(statistics.median(times["with"])),
                            "without_median_ms": db.ms(statistics.median(times["without"])),
                            "ratio_median": round(statistics.median(ratios), 3),
                            "ratio_min": round(min(ratios), 3), "ratio_max": round(max(ratios), 3),
                            "cached_tokens": sorted(cached)}
            R = result[kind]
            db.log(f"{kind}: with the cache {R['with_median_ms']} ms, without {R['without_median_ms']} ms; "
                   f"without / with per pair: median {R['ratio_median']} ({R['ratio_min']}-{R['ratio_max']}); "
                   f"cached tokens {R['cached_tokens']}")
        if args.json:
            print(json.dumps(result))
        else:
            print(f"records of ~{got} input tokens, {args.runs} pairs each")
            for kind in ("fresh", "re-ask"):
                R = result[kind]
                print(f"{kind:7s} with the cache {R['with_median_ms']} ms, without {R['without_median_ms']} ms, "
                      f"without / with {R['ratio_median']} (per-pair median; {R['ratio_min']}-{R['ratio_max']}), "
                      f"cached tokens {R['cached_tokens']}")
    finally:
        for proc, _ in servers.values():
            proc.terminate()
            proc.wait(timeout=60)
    return 0


if __name__ == "__main__":
    sys.exit(main())
