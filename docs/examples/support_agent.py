"""A customer-support agent with three tools, written as a plain agent function.

The model picks the next action; the agent runs the tool and appends what it saw to the
transcript, so every prompt grows from its parent's. ``order 7`` (an unknown order)
raises ``KeyError`` and an unknown action raises ``ValueError``: the view and ``test
-p never_raises`` show them. Used by docs/viewing.md and the README.
"""

ORDERS = {"42": "shipped on Monday, arriving Thursday"}
COMPLETIONS = ["order 42", "order 7", "refund 42", "escalate", "answer It is on its way.", "dance"]


def lookup_order(order_id: str) -> str:
    return ORDERS[order_id]  # an unknown order id raises KeyError


def refund(order_id: str) -> str:
    return f"refund of order {order_id} started"


def support(model):
    transcript = (
        "You are a support agent. Actions: order ID, refund ID, escalate, answer TEXT.\n"
        "Customer: my order 42 has not arrived.\n"
    )
    for _ in range(4):
        action = model(transcript + "Next action:")
        word, _, arg = action.partition(" ")
        if word == "answer":
            return arg
        if word == "escalate":
            return "escalated to a human"
        if word == "order":
            seen = lookup_order(arg)
        elif word == "refund":
            seen = refund(arg)
        else:
            raise ValueError(f"unknown action {action!r}")
        transcript += f"Action: {action}\nObservation: {seen}\n"
    return "gave up after 4 actions"
