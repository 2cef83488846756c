"""A small client for verdict: decisions (POST /v1/systemone) and chat (POST /v1/chat/completions).

Python standard library only (urllib, json), so the examples can be copied anywhere with this file.
Every HTTP or connection problem is raised as ApiError with a one-line message.
"""

import argparse
import json
import os
import sys
import urllib.error
import urllib.request

DEFAULT_BASE_URL = "http://127.0.0.1:8000"


class ApiError(Exception):
    """An HTTP error answer (status, and the message of the {"error": {...}} body) or no answer at all."""

    def __init__(self, message, status=None, code=None):
        super().__init__(message)
        self.status = status
        self.code = code

    def __str__(self):
        prefix = f"HTTP {self.status}: " if self.status is not None else ""
        return prefix + self.args[0]


class Client:
    def __init__(self, base_url=DEFAULT_BASE_URL, api_key=None, timeout=300):
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.timeout = timeout

    def _open(self, path, body):
        request = urllib.request.Request(
            self.base_url + path,
            data=json.dumps(body).encode("utf-8"),
            method="POST",
            headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream"},
        )
        if self.api_key:
            request.add_header("Authorization", "Bearer " + self.api_key)
        try:
            return urllib.request.urlopen(request, timeout=self.timeout)
        except urllib.error.HTTPError as e:
            raw = e.read().decode("utf-8", "replace")
            try:
                error = json.loads(raw)["error"]
                raise ApiError(error["message"], e.code, error.get("code")) from None
            except (ValueError, KeyError, TypeError):
                raise ApiError(raw.strip()[:200] or e.reason, e.code) from None
        except urllib.error.URLError as e:
            raise ApiError(f"cannot reach {self.base_url}: {e.reason}") from None
        except OSError as e:
            raise ApiError(f"cannot reach {self.base_url}: {e}") from None

    def _post(self, path, body):
        with self._open(path, body) as response:
            raw = response.read()
        try:
            return json.loads(raw)
        except ValueError:
            raise ApiError(f"{path} answered something that is not JSON: {raw[:200]!r}") from None

    def decide(self, model, state, questions):
        """One SystemOne decision: returns the response's "answers" (question id -> answer)."""
        response = self._post("/v1/systemone", {"model": model, "state": state, "questions": questions})
        answers = response.get("answers")
        if not isinstance(answers, dict) or set(answers) != set(questions):
            raise ApiError(f"/v1/systemone answered without one answer per question: {response}")
        return answers

    def chat(self, model, messages, *, stream=False, on_delta=None, **params):
        """One chat completion; returns {"content", "finish_reason", "usage"}.

        With stream=True the answer comes as Server-Sent Events and on_delta(text) is called for each
        piece of content as it arrives; the result is the same dictionary.
        """
        body = {"model": model, "messages": messages, **params}
        if not stream:
            response = self._post("/v1/chat/completions", body)
            try:
                choice = response["choices"][0]
                return {
                    "content": choice["message"]["content"] or "",
                    "finish_reason": choice["finish_reason"],
                    "usage": response.get("usage"),
                }
            except (KeyError, IndexError, TypeError):
                raise ApiError(f"/v1/chat/completions answered an unexpected body: {response}") from None
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
        result = {"content": "", "finish_reason": None, "usage": None}
        with self._open("/v1/chat/completions", body) as response:
            for event in server_sent_events(response):
                if event == "[DONE]":
                    return result
                chunk = json.loads(event)
                if chunk.get("usage"):
                    result["usage"] = chunk["usage"]
                for choice in chunk.get("choices", []):
                    piece = (choice.get("delta") or {}).get("content") or ""
                    if piece:
                        result["content"] += piece
                        if on_delta:
                            on_delta(piece)
                    if choice.get("finish_reason"):
                        result["finish_reason"] = choice["finish_reason"]
        raise ApiError("the chat stream ended without data: [DONE]")


def server_sent_events(response):
    """The data of each Server-Sent Event of an HTTP response (multi-line data joined with newlines)."""
    data = []
    for raw in response:
        line = raw.decode("utf-8").rstrip("\r\n")
        if line == "":
            if data:
                yield "\n".join(data)
                data = []
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
        # other fields (event:, id:, retry:) and comments (":") are not used by the chat stream
    if data:
        yield "\n".join(data)


def new_parser(doc, example):
    """An argument parser with the options every example takes; the description is doc's first paragraph."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0], epilog="example: " + example,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base-url", default=os.environ.get("VERDICT_BASE_URL", DEFAULT_BASE_URL),
                        help=f"the verdict server (default: $VERDICT_BASE_URL or {DEFAULT_BASE_URL})")
    parser.add_argument("--api-key", default=os.environ.get("VERDICT_API_KEY"),
                        help="sent as 'Authorization: Bearer KEY' (default: $VERDICT_API_KEY)")
    parser.add_argument("--decision-model", default="default", help="the decision model (default: %(default)s)")
    parser.add_argument("--chat-model", default="qwen-demo", help="the chat model (default: %(default)s)")
    parser.add_argument("--max-tokens", type=int, default=96, help="tokens per chat answer (default: %(default)s)")
    parser.add_argument("--temperature", type=float, default=0.0, help="chat sampling temperature (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=7, help="chat sampling seed (default: %(default)s)")
    parser.add_argument("--think", action="store_true",
                        help="let the chat model think first (chat_template_kwargs.enable_thinking)")
    parser.add_argument("--stream", action="store_true", help="stream chat answers (SSE), echoing them on stderr")
    parser.add_argument("--json", action="store_true", help="print the outcome as one JSON object")
    return parser


def text_arg(value, default):
    """An input given on the command line: the built-in sample when absent, stdin for '-'."""
    return default if value is None else sys.stdin.read() if value == "-" else value


def chat_params(args):
    """The chat request fields the common arguments set."""
    params = {"max_tokens": args.max_tokens, "temperature": args.temperature, "seed": args.seed,
              "chat_template_kwargs": {"enable_thinking": args.think}}
    if args.stream:
        params["stream"] = True
        params["on_delta"] = lambda piece: print(piece, end="", file=sys.stderr, flush=True)
    return params


def probability_arg(text):
    value = float(text)
    if not 0.0 <= value <= 1.01:
        raise argparse.ArgumentTypeError("must be between 0 and 1 (1.01: never)")
    return value


def run(parser, flow, print_text):
    """Parses the arguments, runs flow(client, args) -> result and prints the result as JSON (--json) or with
    print_text. Exit code 0; an ApiError becomes a one-line message on stderr and exit code 1."""
    args = parser.parse_args()
    name = os.path.basename(sys.argv[0])
    try:
        result = flow(Client(args.base_url, args.api_key), args)
    except ApiError as e:
        print(f"{name}: {e}", file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=2))
    else:
        print_text(result)
    sys.exit(0)
