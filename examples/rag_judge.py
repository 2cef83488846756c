#!/usr/bin/env python3
"""RAG judge: the chat model answers a question from a context, a decision model judges whether the
answer is supported by the context, and an unsupported answer is retried with a stricter prompt.

1. POST /v1/chat/completions answers the question from the context.
2. POST /v1/systemone judges the answer against the context: is every claim supported (noul), and does it
   answer the question (noul).
3. An answer judged unsupported (P(supported) below --support-threshold) is asked for again with a
   stricter prompt, at most --max-retries times; the outcome is the first supported answer, or
   "unsupported" with the last one.

Python standard library only; needs verdict_client.py beside it. Exit code 0 when the flow ran (whatever
the outcome), 1 with a one-line message on an HTTP error, 2 on a usage error.
"""

import json
import sys

from verdict_client import chat_params, new_parser, probability_arg, run, text_arg

SAMPLE_QUESTION = "How long do customers have to return a product, and who pays for shipping?"
SAMPLE_CONTEXT = (
    "Returns policy (updated January 2026). Customers may return any unused product within 30 days of "
    "delivery for a full refund. Return shipping is free for customers in the EU; elsewhere the customer "
    "pays for return shipping. Refunds are issued to the original payment method within 5 business days of "
    "the return arriving at our warehouse."
)

PROMPTS = [
    "Answer the question using the context below.",
    "Answer the question using ONLY facts stated in the context below. Quote the context where you can. "
    "Do not add anything the context does not say. If the context does not answer the question, reply "
    "exactly: The context does not say.",
]

JUDGE_QUESTIONS = {
    "supported": {
        "type": "noul",
        "instructions": "Is every claim in the answer supported by the context?",
        "criteria": {"true": "everything the answer states can be found in the context",
                     "false": "the answer states something the context does not give, or contradicts it"},
    },
    "answers_the_question": {"type": "noul", "instructions": "Does the answer address the question?"},
}


def answer(client, args, question, context, attempt):
    system = PROMPTS[min(attempt, len(PROMPTS) - 1)]
    messages = [
        {"role": "system", "content": f"{system}\n\nContext:\n{context}"},
        {"role": "user", "content": question},
    ]
    params = chat_params(args)
    params["seed"] = args.seed + attempt  # a retry is a new draw when sampling
    result = client.chat(args.chat_model, messages, **params)
    if args.stream:
        print(file=sys.stderr)
    return result


def judge(client, args, question, context, text):
    answers = client.decide(args.decision_model, {"context": context, "question": question, "answer": text},
                            JUDGE_QUESTIONS)
    return {"supported": answers["supported"]["noul"], "answers_the_question": answers["answers_the_question"]["noul"]}


def answer_and_judge(client, args, question, context):
    attempts = []
    for attempt in range(args.max_retries + 1):
        reply = answer(client, args, question, context, attempt)
        verdict = judge(client, args, question, context, reply["content"])
        attempts.append({"prompt": "strict" if attempt else "plain", "answer": reply["content"],
                         "finish_reason": reply["finish_reason"], "usage": reply["usage"], "judge": verdict})
        if verdict["supported"] >= args.support_threshold:
            return {"outcome": "supported", "answer": reply["content"], "question": question, "attempts": attempts}
    return {"outcome": "unsupported", "answer": attempts[-1]["answer"], "question": question, "attempts": attempts}


def print_text(result):
    print(f"question: {result['question']}")
    for i, a in enumerate(result["attempts"], 1):
        print(f"attempt {i} ({a['prompt']} prompt): {a['answer']!r}")
        print(f"          finish_reason={a['finish_reason']}, usage={json.dumps(a['usage'])}")
        print(f"          judged: supported p={a['judge']['supported']}, "
              f"answers the question p={a['judge']['answers_the_question']}")
    if result["outcome"] == "supported":
        print(f"outcome:  SUPPORTED after {len(result['attempts'])} attempt(s)")
    else:
        print(f"outcome:  UNSUPPORTED after {len(result['attempts'])} attempt(s): do not show this answer")


def main():
    parser = new_parser(__doc__, "rag_judge.py --question 'Who pays for returns?' --context \"$(cat policy.txt)\"")
    parser.add_argument("--question", help="the question (default: a built-in sample)")
    parser.add_argument("--context", help="the context to answer from ('-' reads stdin; default: a built-in sample)")
    parser.add_argument("--support-threshold", type=probability_arg, default=0.5,
                        help="accept an answer when P(supported) reaches this (default: %(default)s; 1.01: never)")
    parser.add_argument("--max-retries", type=int, choices=range(0, 6), default=2, metavar="{0..5}",
                        help="stricter retries after an unsupported answer (default: %(default)s)")
    run(parser, lambda client, args: answer_and_judge(client, args, text_arg(args.question, SAMPLE_QUESTION),
                                                      text_arg(args.context, SAMPLE_CONTEXT)), print_text)


if __name__ == "__main__":
    main()
