#!/usr/bin/env python3
"""Decision latency alone and while chat streams run, against a running `verdict serve`.

    verdict serve --port 8000 &            # the demo models, or your own
    python3 bench/chat_decision_load.py --base-url http://127.0.0.1:8000 --streams 16

Phase 1 sends --decisions decision requests one after another and records their latency. Phase 2
starts --streams streaming chat completions (each --max-tokens tokens, ignore_eos) and, while they
run, sends the same decisions again. It prints the latency percentiles of both phases, their ratio,
and the chat side's time to first token and aggregate decode rate. Python standard library only.
"""
import argparse
import json
import statistics
import threading
import time
import urllib.request


def post(base, path, body, timeout=600):
    req = urllib.request.Request(base + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as res:
        return res.read()


def decision_body(model, i):
    return {"model": model,
            "state": f"Ticket {i}: the invoice was charged twice and the customer wants a refund today.",
            "questions": {"urgent": {"type": "noul"},
                          "team": {"type": "choice", "criteria": {"billing": "", "bugs": "", "sales": ""}}}}


def decisions(base, model, n):
    out = []
    for i in range(n):
        t0 = time.perf_counter()
        post(base, "/v1/systemone", decision_body(model, i))
        out.append(time.perf_counter() - t0)
    return out


def stream_chat(base, model, i, max_tokens, result):
    body = {"model": model, "stream": True, "max_tokens": max_tokens, "ignore_eos": True, "seed": i,
            "messages": [{"role": "user", "content": f"Write story number {i} about a lighthouse keeper."}]}
    req = urllib.request.Request(base + "/v1/chat/completions", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    t0 = time.perf_counter()
    first = None
    chunks = 0
    with urllib.request.urlopen(req, timeout=3600) as res:
        for line in res:
            line = line.strip()
            if not line.startswith(b"data: ") or line == b"data: [DONE]":
                continue
            event = json.loads(line[6:])
            delta = event["choices"][0].get("delta", {}) if event["choices"] else {}
            if delta.get("content") or delta.get("reasoning_content"):
                chunks += 1
                if first is None:
                    first = time.perf_counter() - t0
    result[i] = {"ttft": first, "seconds": time.perf_counter() - t0}


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def summary(values):
    return {"median_ms": round(statistics.median(values) * 1000, 2), "p90_ms": round(pct(values, 90) * 1000, 2),
            "max_ms": round(max(values) * 1000, 2)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base-url", default="http://127.0.0.1:8000")
    ap.add_argument("--decision-model", default="default")
    ap.add_argument("--chat-model", default="qwen-demo")
    ap.add_argument("--streams", type=int, default=16)
    ap.add_argument("--decisions", type=int, default=30)
    ap.add_argument("--max-tokens", type=int, default=256)
    a = ap.parse_args()
    base = a.base_url.rstrip("/")

    decisions(base, a.decision_model, 3)  # load the models
    post(base, "/v1/chat/completions", {"model": a.chat_model, "max_tokens": 2,
                                        "messages": [{"role": "user", "content": "warm up"}]})
    alone = decisions(base, a.decision_model, a.decisions)

    results = {}
    threads = [threading.Thread(target=stream_chat, args=(base, a.chat_model, i, a.max_tokens, results))
               for i in range(a.streams)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    time.sleep(0.2)  # the streams are prefilled and decoding
    loaded = decisions(base, a.decision_model, a.decisions)
    for t in threads:
        t.join()
    chat_seconds = time.perf_counter() - t0

    report = {
        "decision_alone": summary(alone),
        "decision_under_chat_load": summary(loaded),
        "median_ratio": round(statistics.median(loaded) / statistics.median(alone), 2),
        "streams": a.streams,
        "streams_completed": len(results),
        "chat_ttft_median_ms": round(statistics.median(r["ttft"] for r in results.values()) * 1000, 1),
        "chat_tokens_per_s_all_streams": round(a.streams * a.max_tokens / chat_seconds, 1),
    }
    print(json.dumps(report, indent=2))
    return 0 if len(results) == a.streams else 1


if __name__ == "__main__":
    raise SystemExit(main())
