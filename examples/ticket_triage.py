#!/usr/bin/env python3
"""Support-ticket triage: a decision model routes the ticket, a chat model drafts the reply, and a
second decision checks the draft.

1. POST /v1/systemone asks four questions about the ticket: its label (choice), urgency (score), language
   (choice) and whether it needs a person (noul).
2. The ticket is escalated to a person when it needs one, or when label, urgency or language were decided
   with a confidence below --min-confidence.
3. Otherwise the chat model drafts a reply (POST /v1/chat/completions), and a second decision
   (--review-model) asks whether the draft asserts facts the ticket does not give; if so the draft goes to
   a person for review instead of to the customer.

Python standard library only; needs verdict_client.py beside it. Exit code 0 when the flow ran (whatever
the outcome), 1 with a one-line message on an HTTP error, 2 on a usage error.
"""

import json
import sys

from verdict_client import chat_params, new_parser, probability_arg, run, text_arg

SAMPLE_TICKET = (
    "Hi, I was charged twice for my March invoice (order 4417) and the PDF of the invoice will not open. "
    "Can you refund the duplicate charge? Thanks, Dana"
)

LABELS = {
    "billing": "payments, invoices, charges, refunds",
    "bug": "something in the product is broken or shows an error",
    "account": "sign-in, password, access, account settings",
    "how_to": "a question about how to use the product",
    "feedback": "praise, complaints or suggestions that need no action",
}
URGENCY = ["low: no deadline", "normal: answer within a day", "high: the customer is blocked",
           "critical: service down or money lost for many customers"]
LANGUAGES = {"en": "English", "es": "Spanish", "de": "German", "fr": "French", "other": "another language"}

ROUTING_QUESTIONS = {
    "label": {"type": "choice", "instructions": "What is the ticket about?", "criteria": LABELS},
    "urgency": {"type": "score", "instructions": "How urgent is the ticket?", "criteria": URGENCY},
    "language": {"type": "choice", "instructions": "Which language is the ticket written in?", "criteria": LANGUAGES},
    "needs_a_person": {
        "type": "noul",
        "instructions": "Does the ticket need a person rather than an automatic reply?",
        "criteria": {"true": "legal threats, cancellations, security incidents, or actions only staff can take",
                     "false": "a written answer can resolve it"},
    },
}

REVIEW_QUESTIONS = {
    "asserts_unsupported_facts": {
        "type": "noul",
        "instructions": "Does the draft reply state facts the ticket does not give: amounts, dates, causes, "
                        "policies, or promises the support team has not made?",
    }
}


def route(client, args, ticket):
    answers = client.decide(args.decision_model, ticket, ROUTING_QUESTIONS)
    label, urgency, language = answers["label"], answers["urgency"], answers["language"]
    level = min(len(URGENCY) - 1, max(0, round(urgency["score"])))
    return {
        "label": {"value": label["choice"], "confidence": label["confidence"]},
        "urgency": {"score": urgency["score"], "level": URGENCY[level].split(":")[0],
                    "confidence": urgency["confidence"]},
        "language": {"value": language["choice"], "confidence": language["confidence"]},
        "needs_a_person": answers["needs_a_person"]["noul"],
    }


def escalation_reasons(routing, args):
    reasons = []
    if routing["needs_a_person"] >= args.person_threshold:
        reasons.append(f"needs a person (p={routing['needs_a_person']})")
    for name in ("label", "urgency", "language"):
        confidence = routing[name]["confidence"]
        if confidence < args.min_confidence:
            reasons.append(f"{name} decided with confidence {confidence} < {args.min_confidence}")
    return reasons


def draft_reply(client, args, ticket, routing):
    language = LANGUAGES[routing["language"]["value"]]
    system = (
        f"You are a customer support agent on the {routing['label']['value']} team. Reply to the customer's "
        f"ticket in {language}, briefly and politely. Use only facts from the ticket: do not invent amounts, "
        "dates, causes or promises. Say what happens next."
    )
    messages = [{"role": "system", "content": system}, {"role": "user", "content": ticket}]
    draft = client.chat(args.chat_model, messages, **chat_params(args))
    if args.stream:
        print(file=sys.stderr)
    return draft


def triage(client, args, ticket):
    routing = route(client, args, ticket)
    outcome = {"ticket": ticket, "routing": routing}
    reasons = escalation_reasons(routing, args)
    if reasons:
        return {"outcome": "escalate", "reasons": reasons, **outcome}
    draft = draft_reply(client, args, ticket, routing)
    outcome["draft"] = draft
    review = client.decide(args.review_model or args.decision_model,
                           {"ticket": ticket, "draft_reply": draft["content"]}, REVIEW_QUESTIONS)
    unsupported = review["asserts_unsupported_facts"]["noul"]
    outcome["review"] = {"asserts_unsupported_facts": unsupported}
    if unsupported >= args.review_threshold:
        reason = f"the draft may assert facts the ticket does not give (p={unsupported})"
        return {"outcome": "escalate", "reasons": [reason], **outcome}
    return {"outcome": "reply", "reasons": [], **outcome}


def print_text(result):
    r = result["routing"]
    print(f"ticket:   {result['ticket']}")
    print(f"routing:  label={r['label']['value']} ({r['label']['confidence']}), "
          f"urgency={r['urgency']['level']} (score {r['urgency']['score']}, {r['urgency']['confidence']}), "
          f"language={r['language']['value']} ({r['language']['confidence']}), needs a person p={r['needs_a_person']}")
    if "draft" in result:
        d = result["draft"]
        print(f"draft:    {d['content']!r}")
        print(f"          finish_reason={d['finish_reason']}, usage={json.dumps(d['usage'])}")
        print(f"review:   asserts facts the ticket does not give p={result['review']['asserts_unsupported_facts']}")
    if result["outcome"] == "reply":
        print("outcome:  REPLY: send the draft to the customer")
    else:
        print("outcome:  ESCALATE to a person: " + "; ".join(result["reasons"]))


def main():
    parser = new_parser(__doc__, "ticket_triage.py --ticket 'The app crashes when I export' --json")
    parser.add_argument("--ticket", help="the ticket text ('-' reads stdin; default: a built-in sample)")
    parser.add_argument("--review-model", help="the decision model that checks the draft (default: --decision-model)")
    parser.add_argument("--min-confidence", type=probability_arg, default=0.6,
                        help="escalate when label, urgency or language is decided with less (default: %(default)s)")
    parser.add_argument("--person-threshold", type=probability_arg, default=0.5,
                        help="escalate when P(needs a person) reaches this (default: %(default)s; 1.01: never)")
    parser.add_argument("--review-threshold", type=probability_arg, default=0.5,
                        help="hold the draft when P(asserts unsupported facts) reaches this (default: %(default)s)")
    run(parser, lambda client, args: triage(client, args, text_arg(args.ticket, SAMPLE_TICKET)), print_text)


if __name__ == "__main__":
    main()
