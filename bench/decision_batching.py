#!/usr/bin/env python3
"""Latency of one decision and throughput of concurrent ones, through `verdict serve`.

    # start a server on a free port with the model loaded, measure, stop it:
    python3 bench/decision_batching.py --verdict build/release/src/cli/verdict \\
        --model clef=~/.cache/verdict-bench/clef-0.8b --threads 2
    # or against a running server:
    python3 bench/decision_batching.py --base-url http://127.0.0.1:8000 --decision-model clef

Every request is a record (state) of ~--tokens tokens and one yes/no question; usage.input_tokens
counts both as the server encodes them (the schema and template add about 300 tokens). The state's
length is fitted with three probe requests, which also warm the server up; each request's state
differs from the others' (no shared prefix).

1. latency: --runs decisions one after another; median, min and max of the client's wall time and of
   the server's usage.latency_ms; for a server the script started, also its page faults per decision (Linux:
   /proc/PID/stat; on a virtual machine a fault of a fresh page can cost ~10 µs).
2. re-asking: each of --runs states asked once, then again with another question; the medians of both
   wall times and the usage.cached_tokens of the second ask (the prefix cache resumes it after P ‖ S;
   `--serve-arg=--decision-cache --serve-arg=0` turns the cache off).
3. batching: after one uncounted burst of --concurrency concurrent decisions (a warm-up), --concurrency
   decisions one after another (total wall time) and the same number sent at once from as many threads
   (total wall time until the last answer); both --rounds times, the order alternating per round.
   Prints the best and median totals and sequential / concurrent (> 1: the server's batching wins), and, from
   /metrics, the engine's busy seconds and steps in each burst: the forward steps' own share of the saving, and
   the wall time spent outside them (the heads, encoding, HTTP).

--json prints the whole result as one JSON object. Python standard library only.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import threading
import time
import urllib.request

WORDS = ("the customer reports that the invoice for order was charged twice and the refund has not "
         "arrived after ten days while support tickets about checkout errors keep growing since the last "
         "release of the mobile app in several regions including Spain Mexico and Germany").split()


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def state_text(i, n_words):
    words = [f"Record {i}:"]
    for k in range(n_words):
        w = WORDS[(k * 7 + i) % len(WORDS)]
        words.append(w + ("." if k % 17 == 16 else ""))
    return " ".join(words)


QUESTIONS = {"urgent": {"type": "noul", "instructions": "Are customers blocked right now?"},
             "billing": {"type": "noul", "instructions": "Is this about a payment?"}}


def body(model, i, n_words, question="urgent"):
    return {"model": model, "state": state_text(i, n_words), "questions": {question: QUESTIONS[question]}}


def post(base, payload, timeout=600):
    req = urllib.request.Request(base + "/v1/systemone", data=json.dumps(payload).encode(),
                                 headers={"Content-Type": "application/json"})
    t0 = time.perf_counter()
    with urllib.request.urlopen(req, timeout=timeout) as res:
        out = json.loads(res.read())
    return time.perf_counter() - t0, out


def fit_words(base, model, tokens, whole_record=False):
    """State words giving a state of ~`tokens` tokens (with whole_record, a record of ~`tokens` input tokens,
    schema and template included): input_tokens grow linearly in the words, and the schema's share is
    input_tokens of a state of zero words. Three probes (they also warm the server)."""
    _, z = post(base, body(model, 10_000, 0))
    overhead = z["usage"]["input_tokens"]
    state_tokens = tokens - overhead if whole_record else tokens
    n = max(8, state_tokens // 2)
    _, a = post(base, body(model, 10_001, n))
    per_word = (a["usage"]["input_tokens"] - overhead) / n
    fitted = max(1, round(state_tokens / per_word))
    _, c = post(base, body(model, 10_002, fitted))
    return fitted, c["usage"]["input_tokens"], overhead


def engine_counters(base, model):
    """(busy seconds, steps, tokens) of the decision model's engine from /metrics, or None where the server does not
    say (an older server, or /metrics behind a key)."""
    try:
        with urllib.request.urlopen(base + "/metrics", timeout=30) as r:
            text = r.read().decode()
    except Exception:  # noqa: BLE001 - the counters are optional
        return None
    per_model = {}
    for line in text.splitlines():
        m = re.match(r'(verdict_engine_(?:busy_seconds|steps|tokens)_total)\{model="([^"]*)"\} (\S+)$', line)
        if m:
            per_model.setdefault(m.group(2), {})[m.group(1)] = float(m.group(3))
    # "default" (or any alias) names the server's only decision model.
    got = per_model.get(model) or (next(iter(per_model.values())) if len(per_model) == 1 else {})
    names = ("verdict_engine_busy_seconds_total", "verdict_engine_steps_total", "verdict_engine_tokens_total")
    return tuple(got[n] for n in names) if all(n in got for n in names) else None


def counted(base, model, run):
    """run() -> (total, detail), with the engine's (busy seconds, steps, tokens) spent meanwhile (or None)."""
    before = engine_counters(base, model)
    total, detail = run()
    after = engine_counters(base, model)
    spent = tuple(a - b for a, b in zip(after, before)) if before and after else None
    return total, detail, spent


def sequential(base, model, ids, n_words):
    t0 = time.perf_counter()
    lat = []
    for i in ids:
        dt, out = post(base, body(model, i, n_words))
        lat.append((dt, out["usage"].get("latency_ms"), out["usage"]["input_tokens"], out["usage"].get("cached_tokens")))
    return time.perf_counter() - t0, lat


def reask(base, model, ids, n_words):
    """Each state asked about `urgent`, then about `billing`: (first wall, second wall, second's cached_tokens)."""
    out = []
    for i in ids:
        first, _ = post(base, body(model, i, n_words, "urgent"))
        second, res = post(base, body(model, i, n_words, "billing"))
        out.append((first, second, res["usage"].get("cached_tokens")))
    return out


def concurrent(base, model, ids, n_words):
    results = [None] * len(ids)
    errors = []
    barrier = threading.Barrier(len(ids) + 1)

    def one(k, i):
        barrier.wait()
        try:
            dt, out = post(base, body(model, i, n_words))
            results[k] = (dt, out["usage"].get("latency_ms"), out["usage"]["input_tokens"])
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(repr(e))

    threads = [threading.Thread(target=one, args=(k, i)) for k, i in enumerate(ids)]
    for t in threads:
        t.start()
    barrier.wait()
    t0 = time.perf_counter()
    for t in threads:
        t.join()
    total = time.perf_counter() - t0
    if errors:
        raise RuntimeError("concurrent requests failed: " + "; ".join(errors))
    return total, results


def start_server(verdict, models, threads, extra):
    cmd = [verdict, "serve", "--port", "0", "--preload"]
    for m in models:
        cmd += ["--model", os.path.expanduser(m)]
    if threads:
        cmd += ["--threads", str(threads)]
    cmd += extra
    log("starting: " + " ".join(cmd))
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 600
    lines = []
    base = None
    while time.time() < deadline:
        line = proc.stderr.readline()
        if not line:
            if proc.poll() is not None:
                raise RuntimeError("verdict serve exited:\n" + "".join(lines[-20:]))
            continue
        lines.append(line)
        m = re.search(r"listening on (http://[^\s]+)", line)
        if m:
            base = m.group(1).rstrip("/,;")
        if base and line.rstrip().endswith("verdict: ready"):  # the preloads are done
            threading.Thread(target=lambda: [None for _ in proc.stderr], daemon=True).start()  # drain
            return proc, base
    proc.kill()
    raise RuntimeError("verdict serve was not ready within 600 s:\n" + "".join(lines[-20:]))


def ms(x):
    return round(x * 1000, 1)


def minor_faults(pid):
    """The minor page faults of process pid so far (Linux), or None."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[7])  # field 10, minflt
    except (OSError, IndexError, ValueError):
        return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base-url", help="a running server (else --verdict and --model start one)")
    ap.add_argument("--verdict", help="verdict binary to start `verdict serve --port 0 --preload` with")
    ap.add_argument("--model", action="append", default=[], help="NAME=DIR for the started server; repeatable")
    ap.add_argument("--threads", type=int, help="--threads of the started server")
    ap.add_argument("--serve-arg", action="append", default=[], help="extra argument of the started server")
    ap.add_argument("--decision-model", default="default")
    ap.add_argument("--tokens", type=int, default=350, help="tokens of each record's state (default 350)")
    ap.add_argument("--runs", type=int, default=7, help="sequential decisions for the latency (default 7)")
    ap.add_argument("--concurrency", type=int, default=8, help="decisions sent at once (default 8)")
    ap.add_argument("--rounds", type=int, default=2, help="sequential/concurrent rounds (default 2; 0: none)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    proc = None
    base = args.base_url
    if not base:
        if not args.verdict or not args.model:
            ap.error("give --base-url, or --verdict and --model to start a server")
        proc, base = start_server(args.verdict, args.model, args.threads, args.serve_arg)
    try:
        result = {"base_url": base, "load_at_start": os.getloadavg()[0]}
        n_words, got, overhead = fit_words(base, args.decision_model, args.tokens)
        result["input_tokens"] = got
        result["schema_tokens"] = overhead
        log(f"state of {n_words} words -> {got} input tokens ({overhead} without the state)")

        faults_before = minor_faults(proc.pid) if proc else None
        total, lat = sequential(base, args.decision_model, range(100, 100 + args.runs), n_words)
        faults_after = minor_faults(proc.pid) if proc else None
        wall = [x[0] for x in lat]
        server = [x[1] for x in lat if x[1] is not None]
        result["latency"] = {"runs": args.runs, "median_ms": ms(statistics.median(wall)), "min_ms": ms(min(wall)),
                             "max_ms": ms(max(wall)),
                             "server_median_ms": round(statistics.median(server), 1) if server else None,
                             "input_tokens": sorted({x[2] for x in lat}),
                             "cached_tokens": sorted({x[3] for x in lat if x[3] is not None})}
        if faults_before is not None and faults_after is not None:
            result["latency"]["page_faults_per_decision"] = round((faults_after - faults_before) / args.runs)
        log(f"latency: median {result['latency']['median_ms']} ms (min {result['latency']['min_ms']}, "
            f"max {result['latency']['max_ms']}; server {result['latency']['server_median_ms']} ms; "
            f"cached tokens {result['latency']['cached_tokens']})")

        asked = reask(base, args.decision_model, range(500, 500 + args.runs), n_words)
        result["reask"] = {"runs": args.runs, "first_median_ms": ms(statistics.median(x[0] for x in asked)),
                           "again_median_ms": ms(statistics.median(x[1] for x in asked)),
                           "again_cached_tokens": sorted({x[2] for x in asked if x[2] is not None})}
        log(f"re-ask: first {result['reask']['first_median_ms']} ms, again with another question "
            f"{result['reask']['again_median_ms']} ms (cached tokens {result['reask']['again_cached_tokens']})")
        if args.rounds == 0:
            if args.json:
                print(json.dumps(result))
            return 0

        seq_totals, conc_totals, conc_lat, seq_engine, conc_engine = [], [], [], [], []
        nxt = 1000
        # One burst of concurrent requests first, not counted: the latency runs above warmed one request
        # thread; this warms the others (their heap arenas, the engine's other state slots), as a server
        # that has been serving for a while is.
        warm, _ = concurrent(base, args.decision_model, range(900, 900 + args.concurrency), n_words)
        log(f"warm-up: {args.concurrency} concurrent {warm:.2f} s (not counted)")
        for r in range(args.rounds):
            ids = list(range(nxt, nxt + args.concurrency))
            nxt += args.concurrency
            ids2 = list(range(nxt, nxt + args.concurrency))
            nxt += args.concurrency
            # Alternate which goes first, so that a drift of the host's speed favours neither.
            def seq_run():
                return counted(base, args.decision_model, lambda: sequential(base, args.decision_model, ids, n_words))

            def conc_run():
                return counted(base, args.decision_model, lambda: concurrent(base, args.decision_model, ids2, n_words))
            if r % 2 == 0:
                s, _, s_engine = seq_run()
                c, res, c_engine = conc_run()
            else:
                c, res, c_engine = conc_run()
                s, _, s_engine = seq_run()
            seq_totals.append(s)
            conc_totals.append(c)
            conc_lat += [x[0] for x in res]
            engine_note = ""
            if s_engine and c_engine:
                seq_engine.append(s_engine)
                conc_engine.append(c_engine)
                engine_note = (f"; engine busy {s_engine[0]:.2f} s in {s_engine[1]:.0f} steps / {c_engine[0]:.2f} s in "
                               f"{c_engine[1]:.0f} steps")
            log(f"round {r + 1}: {args.concurrency} sequential {s:.2f} s, {args.concurrency} concurrent {c:.2f} s, "
                f"ratio {s / c:.2f}{engine_note} (load {os.getloadavg()[0]:.2f})")
        result["batching"] = {
            "concurrency": args.concurrency, "rounds": args.rounds,
            "sequential_s": [round(x, 3) for x in seq_totals], "concurrent_s": [round(x, 3) for x in conc_totals],
            "best_sequential_s": round(min(seq_totals), 3), "best_concurrent_s": round(min(conc_totals), 3),
            "ratio_best": round(min(seq_totals) / min(conc_totals), 3),
            "ratio_median": round(statistics.median(seq_totals) / statistics.median(conc_totals), 3),
            "concurrent_request_median_ms": ms(statistics.median(conc_lat))}
        if seq_engine:
            # The engine's own time (forward steps) per burst, and the rest of the wall time: where batching saves.
            B = result["batching"]
            B["sequential_engine_busy_s"] = [round(x[0], 3) for x in seq_engine]
            B["concurrent_engine_busy_s"] = [round(x[0], 3) for x in conc_engine]
            B["sequential_steps"] = [int(x[1]) for x in seq_engine]
            B["concurrent_steps"] = [int(x[1]) for x in conc_engine]
            B["engine_busy_ratio_median"] = round(statistics.median(x[0] for x in seq_engine) /
                                                  statistics.median(x[0] for x in conc_engine), 3)
            def outside(totals, engine):
                return round(statistics.median(t - e[0] for t, e in zip(totals, engine)), 3)
            B["outside_engine_sequential_s"] = outside(seq_totals, seq_engine)
            B["outside_engine_concurrent_s"] = outside(conc_totals, conc_engine)
        result["load_at_end"] = os.getloadavg()[0]
        if args.json:
            print(json.dumps(result))
        else:
            L, B = result["latency"], result["batching"]
            faults = (f"; {L['page_faults_per_decision']} page faults each" if "page_faults_per_decision" in L
                      else "")
            print(f"decision of {got} input tokens: median {L['median_ms']} ms over {L['runs']} runs "
                  f"(min {L['min_ms']}, max {L['max_ms']}; server-side {L['server_median_ms']} ms; "
                  f"cached tokens {L['cached_tokens']}{faults})")
            R = result["reask"]
            print(f"the same state again with another question: {R['again_median_ms']} ms against "
                  f"{R['first_median_ms']} ms the first time (cached tokens {R['again_cached_tokens']})")
            print(f"{B['concurrency']} decisions: sequential {B['best_sequential_s']} s, concurrent "
                  f"{B['best_concurrent_s']} s (best of {B['rounds']}); sequential / concurrent = "
                  f"{B['ratio_best']} (medians: {B['ratio_median']})")
            if "engine_busy_ratio_median" in B:
                print(f"engine busy (medians): sequential / concurrent = {B['engine_busy_ratio_median']}; wall time "
                      f"outside the engine {B['outside_engine_sequential_s']} s sequential, "
                      f"{B['outside_engine_concurrent_s']} s concurrent")
            print(f"load average {result['load_at_start']:.2f} at start, {result['load_at_end']:.2f} at end")
    finally:
        if proc:
            proc.terminate()
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
    return 0


if __name__ == "__main__":
    sys.exit(main())
