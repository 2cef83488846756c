#!/usr/bin/env python3
"""The example clients (examples/ticket_triage.py, examples/rag_judge.py) against a running demo server.

Run by serve_demo.py, which sets VERDICT_BASE_URL and VERDICT_API_KEY (the server requires that key).
The demo models have random weights, so the tests force each branch of the flows with the thresholds
(0: always, 1.01: never) instead of relying on what the models answer.
"""

import json
import os
import subprocess
import sys
import unittest

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples")
TOKENS = ["--max-tokens", "16"]  # short drafts keep the sanitizer build quick


def run_example(name, *args, env=None, stdin=None):
    return subprocess.run([sys.executable, os.path.join(EXAMPLES, name), *args], capture_output=True, text=True,
                          env=env if env is not None else os.environ, input=stdin, timeout=600)


class ExampleCase(unittest.TestCase):
    def run_json(self, name, *args, **kwargs):
        result = run_example(name, "--json", *TOKENS, *args, **kwargs)
        self.assertEqual(result.returncode, 0, f"{name} {args}: stderr:\n{result.stderr}")
        try:
            return json.loads(result.stdout), result
        except ValueError:
            self.fail(f"{name} {args}: stdout is not JSON:\n{result.stdout}")

    def assert_probability(self, p):
        self.assertIsInstance(p, float)
        self.assertGreaterEqual(p, 0.0)
        self.assertLessEqual(p, 1.0)

    def assert_chat_answer(self, content, finish_reason, usage):
        self.assertIsInstance(content, str)
        self.assertIn(finish_reason, ("stop", "length"))
        for key in ("prompt_tokens", "completion_tokens", "total_tokens"):
            self.assertIsInstance(usage[key], int, usage)
        self.assertGreater(usage["prompt_tokens"], 0)
        self.assertTrue(0 <= usage["completion_tokens"] <= 16, usage)
        self.assertEqual(usage["total_tokens"], usage["prompt_tokens"] + usage["completion_tokens"])
        if finish_reason == "length":
            self.assertEqual(usage["completion_tokens"], 16)

    def assert_one_line_error(self, result, *fragments):
        self.assertNotEqual(result.returncode, 0, result.stdout)
        self.assertEqual(result.stdout, "")
        self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)
        for fragment in fragments:
            self.assertIn(fragment, result.stderr)


class TicketTriage(ExampleCase):
    def test_routes_then_drafts_then_reviews(self):
        out, _ = self.run_json("ticket_triage.py", "--min-confidence", "0", "--person-threshold", "1.01",
                               "--review-threshold", "1.01")
        self.assertEqual(out["outcome"], "reply", out)
        routing = out["routing"]
        self.assertIn(routing["label"]["value"], ("billing", "bug", "account", "how_to", "feedback"))
        self.assertIn(routing["language"]["value"], ("en", "es", "de", "fr", "other"))
        self.assertIn(routing["urgency"]["level"], ("low", "normal", "high", "critical"))
        self.assertTrue(0.0 <= routing["urgency"]["score"] <= 3.0)
        for p in (routing["label"]["confidence"], routing["language"]["confidence"],
                  routing["urgency"]["confidence"], routing["needs_a_person"],
                  out["review"]["asserts_unsupported_facts"]):
            self.assert_probability(p)
        draft = out["draft"]
        self.assert_chat_answer(draft["content"], draft["finish_reason"], draft["usage"])

    def test_a_flagged_draft_is_escalated_with_the_draft(self):
        out, _ = self.run_json("ticket_triage.py", "--min-confidence", "0", "--person-threshold", "1.01",
                               "--review-threshold", "0")
        self.assertEqual(out["outcome"], "escalate")
        self.assertIn("draft", out)
        self.assertIn("may assert facts the ticket does not give", out["reasons"][0])

    def test_low_confidence_escalates_without_a_draft(self):
        out, _ = self.run_json("ticket_triage.py", "--min-confidence", "1.01", "--person-threshold", "1.01")
        self.assertEqual(out["outcome"], "escalate")
        self.assertNotIn("draft", out)
        self.assertEqual(len(out["reasons"]), 3, out["reasons"])  # label, urgency, language

    def test_needs_a_person_escalates(self):
        out, _ = self.run_json("ticket_triage.py", "--min-confidence", "0", "--person-threshold", "0",
                               "--ticket", "-", stdin="I will sue you unless my account is deleted today.")
        self.assertEqual(out["outcome"], "escalate")
        self.assertEqual(out["ticket"], "I will sue you unless my account is deleted today.")
        self.assertTrue(out["reasons"][0].startswith("needs a person"), out["reasons"])

    def test_the_streamed_draft_equals_the_plain_one(self):
        args = ["--min-confidence", "0", "--person-threshold", "1.01", "--review-threshold", "1.01",
                "--temperature", "0", "--seed", "3", "--ticket", "The export button does nothing."]
        plain, _ = self.run_json("ticket_triage.py", *args)
        streamed, result = self.run_json("ticket_triage.py", "--stream", *args)
        self.assertEqual(streamed["draft"]["content"], plain["draft"]["content"])
        self.assertEqual(streamed["draft"]["finish_reason"], plain["draft"]["finish_reason"])
        self.assertEqual(streamed["draft"]["usage"], plain["draft"]["usage"])  # stream_options.include_usage
        self.assertEqual(result.stderr, plain["draft"]["content"] + "\n")  # echoed as it streamed

    def test_text_outcome(self):
        result = run_example("ticket_triage.py", *TOKENS, "--min-confidence", "0", "--person-threshold", "1.01")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("routing:  label=", result.stdout)
        self.assertIn("draft:    ", result.stdout)
        self.assertRegex(result.stdout, r"outcome:  (REPLY|ESCALATE)")

    def test_api_key_from_the_flag_and_errors_as_one_line(self):
        env = dict(os.environ)
        key = env.pop("VERDICT_API_KEY")
        result = run_example("ticket_triage.py", *TOKENS, "--min-confidence", "1.01", env=env)
        self.assert_one_line_error(result, "ticket_triage.py: HTTP 401: ")
        result = run_example("ticket_triage.py", *TOKENS, "--min-confidence", "1.01", "--api-key", key, env=env)
        self.assertEqual(result.returncode, 0, result.stderr)
        result = run_example("ticket_triage.py", *TOKENS, "--api-key", "wrong-" + key)
        self.assert_one_line_error(result, "HTTP 401: invalid API key")

    def test_unknown_models_fail_with_the_server_message(self):
        result = run_example("ticket_triage.py", *TOKENS, "--decision-model", "no-such-model")
        self.assert_one_line_error(result, "HTTP 404: model 'no-such-model' not found")
        result = run_example("ticket_triage.py", *TOKENS, "--min-confidence", "0", "--person-threshold", "1.01",
                             "--chat-model", "no-such-chat-model")
        self.assert_one_line_error(result, "HTTP 404: ", "no-such-chat-model")

    def test_an_unreachable_server_fails_with_one_line(self):
        result = run_example("ticket_triage.py", "--base-url", "http://127.0.0.1:9")
        self.assert_one_line_error(result, "cannot reach http://127.0.0.1:9")


class RagJudge(ExampleCase):
    def test_a_supported_answer_is_accepted_at_once(self):
        out, _ = self.run_json("rag_judge.py", "--support-threshold", "0")
        self.assertEqual(out["outcome"], "supported")
        self.assertEqual(len(out["attempts"]), 1)
        attempt = out["attempts"][0]
        self.assertEqual(attempt["prompt"], "plain")
        self.assertEqual(out["answer"], attempt["answer"])
        self.assert_chat_answer(attempt["answer"], attempt["finish_reason"], attempt["usage"])
        self.assert_probability(attempt["judge"]["supported"])
        self.assert_probability(attempt["judge"]["answers_the_question"])

    def test_unsupported_answers_are_retried_with_a_stricter_prompt_then_given_up(self):
        out, _ = self.run_json("rag_judge.py", "--support-threshold", "1.01", "--max-retries", "2",
                               "--question", "Who pays for return shipping in the EU?")
        self.assertEqual(out["outcome"], "unsupported")
        self.assertEqual([a["prompt"] for a in out["attempts"]], ["plain", "strict", "strict"])
        self.assertEqual(out["answer"], out["attempts"][-1]["answer"])
        for attempt in out["attempts"]:
            self.assert_chat_answer(attempt["answer"], attempt["finish_reason"], attempt["usage"])
        # the stricter prompt is longer
        self.assertGreater(out["attempts"][1]["usage"]["prompt_tokens"], out["attempts"][0]["usage"]["prompt_tokens"])

    def test_text_outcome_and_context_from_stdin(self):
        result = run_example("rag_judge.py", *TOKENS, "--stream", "--context", "-", "--question", "What colour is it?",
                             stdin="The box is blue.")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("question: What colour is it?", result.stdout)
        self.assertRegex(result.stdout, r"outcome:  (SUPPORTED|UNSUPPORTED) after [1-3] attempt")

    def test_a_decision_model_as_the_chat_model_is_refused(self):
        result = run_example("rag_judge.py", *TOKENS, "--chat-model", "clef-demo")
        self.assert_one_line_error(result, "HTTP 400: ", "clef-demo")


if __name__ == "__main__":
    if "VERDICT_BASE_URL" not in os.environ or "VERDICT_API_KEY" not in os.environ:
        sys.exit("run me through serve_demo.py --api-key KEY (it sets VERDICT_BASE_URL and VERDICT_API_KEY)")
    unittest.main(verbosity=2)
