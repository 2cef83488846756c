#!/usr/bin/env python3
"""Runs a command against `verdict serve` on the embedded demo models, for the client tests.

usage: serve_demo.py --verdict BIN --cache DIR [--api-key KEY] [--skip-without PROGRAM] [-- COMMAND ...]

Starts `BIN serve --port 0` with no model flags and XDG_CACHE_HOME=DIR (so the demo models are made
once per cache folder), reads `listening on http://HOST:PORT` from its stderr, waits for `ready`, runs
COMMAND with VERDICT_BASE_URL (and VERDICT_API_KEY when --api-key is given) in its environment, then
stops the server with SIGTERM. Exit code: COMMAND's when it fails; 1 when the server does not start, or
exits with a non-zero code after SIGTERM (a sanitizer report, for example); 77 (skip) when
--skip-without names a program that is not installed. Without COMMAND it only starts and stops the server:
the set-up step that makes the demo models. The server and COMMAND die with this script
(PR_SET_PDEATHSIG), so a test killed on timeout leaves nothing running.
"""

import argparse
import ctypes
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.request

SKIP = 77
START_TIMEOUT_S = 600  # making the demo models in a sanitizer build is slow
STOP_TIMEOUT_S = 120


def die_with_parent():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


class Server:
    def __init__(self, verdict, cache, api_key):
        env = dict(os.environ, XDG_CACHE_HOME=cache)
        env.pop("VERDICT_API_KEY", None)  # the server reads it too; --api-key is explicit
        args = [verdict, "serve", "--port", "0"]
        if api_key:
            args += ["--api-key", api_key]
        self.log = []
        self.lines = []
        self.cond = threading.Condition()
        self.started = time.monotonic()
        self.proc = subprocess.Popen(args, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, preexec_fn=die_with_parent)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for raw in self.proc.stderr:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            with self.cond:
                self.lines.append(line)
                self.cond.notify_all()
        with self.cond:
            self.lines.append(None)  # end of stream
            self.cond.notify_all()

    def wait_for(self, pattern):
        """The match of `pattern` in the first stderr line that has it (None when the server exits first)."""
        deadline = time.monotonic() + START_TIMEOUT_S
        seen = 0
        with self.cond:
            while True:
                while seen < len(self.lines):
                    line = self.lines[seen]
                    seen += 1
                    if line is None:
                        return None
                    match = re.search(pattern, line)
                    if match:
                        return match
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self.cond.wait(left)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return "did not stop within %d s of SIGTERM" % STOP_TIMEOUT_S

    def log_text(self):
        with self.cond:
            return "\n".join(line for line in self.lines if line is not None)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--verdict", required=True)
    parser.add_argument("--cache", required=True)
    parser.add_argument("--api-key")
    parser.add_argument("--skip-without")
    parser.add_argument("command", nargs="*")
    args = parser.parse_args()
    if args.skip_without and shutil.which(args.skip_without) is None:
        print(f"SKIPPED: `{args.skip_without}` is not installed (scripts/install-deps.sh installs it)")
        return SKIP

    os.makedirs(args.cache, exist_ok=True)
    server = Server(args.verdict, args.cache, args.api_key)
    try:
        listening = server.wait_for(r"listening on (http://[^\s]+:\d+)")
        ready = listening and server.wait_for(r"verdict: ready$")
        if not ready:
            print("verdict serve did not start:\n" + server.log_text(), file=sys.stderr)
            return 1
        base_url = listening.group(1)
        with urllib.request.urlopen(base_url + "/health", timeout=30) as health:
            assert health.status == 200, health.status
        print(f"verdict serve: {base_url}, ready after {time.monotonic() - server.started:.1f} s", flush=True)
        code = 0
        if args.command:
            env = dict(os.environ, VERDICT_BASE_URL=base_url)
            env.pop("VERDICT_API_KEY", None)
            if args.api_key:
                env["VERDICT_API_KEY"] = args.api_key
            code = subprocess.run(args.command, env=env, preexec_fn=die_with_parent).returncode
    finally:
        stopped = server.stop()
    if code != 0 or stopped != 0:
        print(f"\n{args.command[0] if args.command else 'set-up'} exited {code}; verdict serve exited {stopped}; "
              "its log:\n" + server.log_text(), file=sys.stderr)
    return code if code != 0 else (0 if stopped == 0 else 1)


if __name__ == "__main__":
    sys.exit(main())
