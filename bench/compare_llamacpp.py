#!/usr/bin/env python3
"""verdict vs llama.cpp on the very same GGUF files: prefill (pp512, pp4096) and decode (tg128).

    python3 bench/compare_llamacpp.py --verdict build/release/src/cli/verdict
    python3 bench/compare_llamacpp.py --shapes qwen35-0.8b --types q8_0 --long 0     # one file, no pp4096

For each shape (`verdict make-model --preset SHAPE --seed 1`, written once into --cache) and each type
(`verdict convert CKPT SHAPE-TYPE.gguf --type TYPE`, written once; llama.cpp's mixed recipes such as
q4_k_m by `llama-quantize SHAPE-bf16.gguf SHAPE-TYPE.gguf TYPE`), with --threads threads:

    verdict bench --model F --n-prompt 512 --n-gen 128 --threads T --repetitions R --json
    llama-bench   -m F       -p 512         -n 128      -t T        -r R            -o json
    verdict bench --model F --n-prompt 4096 --n-gen 0 ...   /   llama-bench -m F -p 4096 -n 0 ...

and prints one table: tokens/s of each engine (medians of the R runs; llama-bench's samples_ts) and
verdict / llama.cpp. Each measurement records the 1-minute load average read just before it (on a
shared machine, other processes' compilers slow either engine: compare rows run at similar load).

--decision SHAPE (e.g. clef-0.8b) adds the latency of one decision for each type: the Clef checkpoint
(`make-model --preset SHAPE --seed 1`) gets its backbone converted to SHAPE-TYPE.gguf and a decision folder
SHAPE-TYPE/ (that file and the checkpoint's joint head, linked: docs/gguf.md); `verdict serve --preload`
answers R decisions of ~--decision-tokens tokens one after another (bench/decision_batching.py, median
wall time per request), and llama-bench prefills the same number of tokens on the same file
(`-p N -n 0`; llama.cpp has no Clef head, so its figure is the backbone alone).

--out appends one JSON object per measurement (for reruns: --table-from FILE prints the table of the
best value per cell of one or more such files). llama.cpp's tools come from
`bash ../shared/tools/llamacpp-peer.sh` (or --llama-bin). Python standard library only.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
import decision_batching  # noqa: E402 - the server-side decision measurement, shared


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def load_average():
    return os.getloadavg()[0]


def run(cmd, env=None, timeout=None):
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))} exited {p.returncode}:\n{p.stderr.strip()[-2000:]}")
    return p.stdout, time.perf_counter() - t0


# what `verdict convert --type` writes
CONVERT_TYPES = ("f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "q2_k", "q3_k", "q4_k", "q5_k", "q6_k",
                 "iq4_nl", "iq4_xs")


def ensure_files(verdict, cache, shape, types, llama_bin=None):
    """SHAPE-TYPE.gguf for each type: written by `verdict convert`, or for llama.cpp's mixed recipes (q4_k_m,
    q5_k_m, q3_k_m, ...) by `llama-quantize SHAPE-bf16.gguf OUT TYPE` (build it once in the peer's tree:
    `cmake --build <llama.cpp>/build --target llama-quantize`)."""
    ckpt = cache / shape
    if not (ckpt / "config.json").exists():
        log(f"make-model {shape} -> {ckpt}")
        run([verdict, "make-model", "--preset", shape, "--seed", "1", str(ckpt)])
    files = {}
    for t in sorted(types, key=lambda t: t not in CONVERT_TYPES):  # bf16 first: the recipes start from it
        f = cache / f"{shape}-{t}.gguf"
        if not f.exists():
            tmp = f.with_suffix(".gguf.part")
            if t in CONVERT_TYPES:
                log(f"convert {ckpt} -> {f}")
                run([verdict, "convert", str(ckpt), str(tmp), "--type", t])
            else:
                quantize = Path(llama_bin or "") / "llama-quantize"
                if not quantize.exists():
                    raise RuntimeError(f"{t} needs {quantize}: cmake --build <llama.cpp>/build --target llama-quantize")
                source = ensure_files(verdict, cache, shape, ["bf16"])["bf16"]
                log(f"llama-quantize {source} -> {f} {t.upper()}")
                run([str(quantize), str(source), str(tmp), t.upper()])
            tmp.rename(f)
        files[t] = f
    return {t: files[t] for t in types}


def ensure_decision_folders(verdict, cache, shape, types, llama_bin):
    """SHAPE-TYPE/ decision folders: the backbone of the Clef checkpoint SHAPE as SHAPE-TYPE.gguf beside links to
    its joint head. Returns {type: (folder, gguf)}."""
    files = ensure_files(verdict, cache, shape, types, llama_bin)
    folders = {}
    for t, f in files.items():
        folder = cache / f"{shape}-{t}"
        folder.mkdir(exist_ok=True)
        for name, target in [("backbone.gguf", f)] + [(n, cache / shape / n) for n in
                                                      ("joint_head.safetensors", "joint_head_config.json")]:
            link = folder / name
            if not link.is_symlink():
                link.symlink_to(target)
        folders[t] = (folder, f)
    return folders


def verdict_decision(verdict, folder, tokens, threads, reps):
    """Median wall time of `reps` decisions of ~`tokens` input tokens (the record: state, schema and template),
    one after another, through the server."""
    proc, base = decision_batching.start_server(verdict, [f"clef={folder}"], threads, [])
    try:
        n_words, got, _ = decision_batching.fit_words(base, "clef", tokens, whole_record=True)
        _, lat = decision_batching.sequential(base, "clef", range(100, 100 + reps), n_words)
        return got, statistics.median(x[0] for x in lat) * 1000
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def verdict_bench(verdict, f, n_prompt, n_gen, threads, reps):
    cmd = [verdict, "bench", "--model", str(f), "--n-prompt", str(n_prompt), "--n-gen", str(n_gen),
           "--threads", str(threads), "--repetitions", str(reps), "--json"]
    out, _ = run(cmd)
    j = json.loads(out.strip().splitlines()[-1])
    return cmd, {"pp": j.get("prompt_tokens_per_s"), "tg": j.get("gen_tokens_per_s")}


def llama_bench(llama_bin, f, n_prompt, n_gen, threads, reps):
    cmd = [str(Path(llama_bin) / "llama-bench"), "-m", str(f), "-p", str(n_prompt), "-n", str(n_gen),
           "-t", str(threads), "-r", str(reps), "-o", "json"]
    out, _ = run(cmd)
    res = {"pp": None, "tg": None}
    for test in json.loads(out):
        samples = test.get("samples_ts") or [test["avg_ts"]]
        key = "pp" if test["n_gen"] == 0 else "tg"
        res[key] = statistics.median(samples)
    return cmd, res


def find_llama_bin(arg):
    if arg:
        return arg
    script = REPO.parent / "shared" / "tools" / "llamacpp-peer.sh"
    out, _ = run(["bash", str(script)])
    return out.strip().splitlines()[-1]


def check_llama_loads(llama_bin, f, threads):
    """llama-bench on a 16-token prompt: does llama.cpp load the verdict-written file at all?"""
    cmd = [str(Path(llama_bin) / "llama-bench"), "-m", str(f), "-p", "16", "-n", "0", "-t", str(threads),
           "-r", "1", "-o", "json"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        lines = [ln for ln in p.stderr.splitlines() if "error" in ln.lower() or "failed" in ln.lower()]
        return "\n".join(lines[-8:]) or p.stderr.strip()[-1500:]
    return None


def fmt(v, digits=1):
    return "—" if v is None else f"{v:.{digits}f}"


def ratio(a, b):
    return None if a is None or not b else a / b


def print_table(rows):
    """rows: list of measurement records; the best (highest tokens/s) per (shape, type, engine, test)."""
    best = {}
    load = {}
    rows = [r for r in rows if not r["test"].startswith("decision")]  # printed as latencies (main)
    if not rows:
        return
    for r in rows:
        if r.get("value") is None:
            continue
        k = (r["shape"], r["type"], r["engine"], r["test"])
        if k not in best or r["value"] > best[k]:
            best[k] = r["value"]
            load[k] = r["load"]
    order = ["bf16", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "q2_k", "q2_k_s", "q3_k", "q3_k_s", "q3_k_m", "iq4_nl", "iq4_xs", "q4_k",
             "q4_k_m", "q5_k", "q5_k_m", "q6_k"]
    keys = sorted({(k[0], k[1]) for k in best}, key=lambda st: (st[0], order.index(st[1]) if st[1] in order else 9))
    tests = []
    for r in rows:
        if r["test"] not in tests:
            tests.append(r["test"])
    head = ["shape", "type"] + [f"verdict {t}" for t in tests] + [f"llama.cpp {t}" for t in tests] + \
           [f"ratio {t}" for t in tests] + ["load (v / l)"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for shape, typ in keys:
        v = [best.get((shape, typ, "verdict", t)) for t in tests]
        l = [best.get((shape, typ, "llama.cpp", t)) for t in tests]
        loads_v = [load.get((shape, typ, "verdict", t)) for t in tests]
        loads_l = [load.get((shape, typ, "llama.cpp", t)) for t in tests]
        lv = max([x for x in loads_v if x is not None], default=None)
        ll = max([x for x in loads_l if x is not None], default=None)
        cells = [shape, typ] + [fmt(x) for x in v] + [fmt(x) for x in l] + \
                [fmt(ratio(a, b), 2) + ("×" if ratio(a, b) is not None else "") for a, b in zip(v, l)] + \
                [f"{fmt(lv)} / {fmt(ll)}"]
        print("| " + " | ".join(cells) + " |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--verdict", default=str(REPO / "build" / "release" / "src" / "cli" / "verdict"))
    ap.add_argument("--llama-bin", help="folder with llama-bench (default: ../shared/tools/llamacpp-peer.sh)")
    ap.add_argument("--cache", default=str(Path.home() / ".cache" / "verdict-bench"),
                    help="where checkpoints and GGUF files are written once and reused")
    ap.add_argument("--shapes", default="qwen35-0.8b,qwen35-2b")
    ap.add_argument("--types", default="bf16,q8_0,q4_0")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repetitions", type=int, default=3)
    ap.add_argument("--n-prompt", type=int, default=512)
    ap.add_argument("--n-gen", type=int, default=128)
    ap.add_argument("--long", type=int, default=4096, help="long prefill test in tokens (0: skip)")
    ap.add_argument("--long-repetitions", type=int, help="repetitions of the long test (default --repetitions)")
    ap.add_argument("--engines", default="verdict,llama.cpp")
    ap.add_argument("--out", help="append one JSON line per measurement to this file")
    ap.add_argument("--table-from", nargs="+", help="print the table of these --out files and exit")
    ap.add_argument("--decision", help="Clef shape for the decision latency (e.g. clef-0.8b; default: none)")
    ap.add_argument("--decision-tokens", type=int, default=350,
                    help="input tokens of each decision's record, schema and template included (default 350)")
    ap.add_argument("--decision-repetitions", type=int, default=5)
    args = ap.parse_args()

    if args.table_from:
        rows = []
        for path in args.table_from:
            rows += [json.loads(ln) for ln in Path(path).read_text().splitlines() if ln.strip()]
        print_table(rows)
        return 0

    verdict = str(Path(args.verdict).resolve())
    cache = Path(args.cache).expanduser()
    cache.mkdir(parents=True, exist_ok=True)
    engines = args.engines.split(",")
    llama_bin = find_llama_bin(args.llama_bin) if "llama.cpp" in engines else None
    long_reps = args.long_repetitions or args.repetitions
    out = open(args.out, "a") if args.out else None
    rows = []

    def record(shape, typ, engine, test, value, cmd, load):
        r = {"shape": shape, "type": typ, "engine": engine, "test": test, "value": value, "load": load,
             "threads": args.threads, "command": " ".join(map(str, cmd)), "time": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                                             time.gmtime())}
        rows.append(r)
        if out:
            out.write(json.dumps(r) + "\n")
            out.flush()
        log(f"  {engine:9s} {shape} {typ} {test}: {fmt(value, 2)} tok/s (load {load:.2f})")

    for shape in [s for s in args.shapes.split(",") if s]:  # --shapes '' measures the decisions alone
        files = ensure_files(verdict, cache, shape, args.types.split(","), llama_bin)
        for typ, f in files.items():
            if llama_bin:
                err = check_llama_loads(llama_bin, f, args.threads)
                if err:
                    log(f"llama.cpp does not load {f}:\n{err}")
                    engines_here = [e for e in engines if e != "llama.cpp"]
                else:
                    engines_here = engines
            else:
                engines_here = engines
            tests = [(args.n_prompt, args.n_gen, args.repetitions)]
            if args.long > 0:
                tests.append((args.long, 0, long_reps))
            for n_prompt, n_gen, reps in tests:
                for engine in engines_here:
                    load = load_average()
                    if engine == "verdict":
                        cmd, res = verdict_bench(verdict, f, n_prompt, n_gen, args.threads, reps)
                    else:
                        cmd, res = llama_bench(llama_bin, f, n_prompt, n_gen, args.threads, reps)
                    if n_prompt > 0:
                        record(shape, typ, engine, f"pp{n_prompt}", res["pp"], cmd, load)
                    if n_gen > 0:
                        record(shape, typ, engine, f"tg{n_gen}", res["tg"], cmd, load)
    print_table(rows)
    if args.decision:
        decision_rows = []
        decision_folders = ensure_decision_folders(verdict, cache, args.decision, args.types.split(","), llama_bin)
        for typ, (folder, f) in decision_folders.items():
            load = load_average()
            tokens, v_ms = verdict_decision(verdict, folder, args.decision_tokens, args.threads,
                                            args.decision_repetitions)
            cmd = f"decision_batching: verdict serve --preload --model clef={folder} --threads {args.threads}"
            record(args.decision, typ, "verdict", f"decision{tokens}", tokens / v_ms * 1000, [cmd], load)
            l_ms = None
            if llama_bin:
                load = load_average()
                lcmd, res = llama_bench(llama_bin, f, tokens, 0, args.threads, args.decision_repetitions)
                record(args.decision, typ, "llama.cpp", f"decision{tokens}", res["pp"], lcmd, load)
                l_ms = tokens / res["pp"] * 1000 if res["pp"] else None
            decision_rows.append((typ, tokens, v_ms, l_ms))
        print()
        print(f"| {args.decision} | input tokens | verdict: one decision (ms) | llama.cpp: prefill alone (ms) | "
              "llama.cpp / verdict |")
        print("|---|---|---|---|---|")
        for typ, tokens, v_ms, l_ms in decision_rows:
            print(f"| {typ} | {tokens} | {v_ms:.0f} | {fmt(l_ms, 0)} | "
                  f"{fmt(ratio(l_ms, v_ms), 2)}{'×' if l_ms else ''} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
