"""Planted harness bugs, and the property that finds each: the table of docs/planted_bugs.md.

Run from the repository root:

    python experiments/planted_bugs.py            # prints the table, writes docs/planted_bugs.md
    python experiments/planted_bugs.py --no-write # prints only

Each case is a machine with one bug planted in its harness, the unmodified machine
(the fixed one), the property that the bug breaks, and the alphabet and bound of the
check. The built-in architectures (ReAct, RLM, THREAD) get their bugs through their
own parameters or a thin wrapper around their program; the agent loops are one shop
agent (a generator harness with a payment tool) with one flag flipped per case; one
case is a finite workflow table. The experiment checks both machines with the same
property, alphabet and bound: the bug must be found (a counterexample, its length, the
time), the fixed machine must pass. Nothing in the table is typed by hand.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hypothesis import strategies as st  # noqa: E402

from agentic_machines import HALT, HarnessMachine, TableMachine, agent_machine, effect  # noqa: E402
from agentic_machines.architectures import (  # noqa: E402
    adaplanner,
    adapt,
    codeact,
    pal,
    react,
    reflexion,
    rlm,
    thread,
    tot,
)
from agentic_machines.checking import (  # noqa: E402
    Invariant,
    Property,
    check_properties,
    effects_at_most_once,
    halts_within,
    never_diverges,
    never_raises,
    prompt_length_at_most,
)
from agentic_machines.checking.adversarial import (  # noqa: E402
    adversarial_completions,
    unicode_text,
)
from agentic_machines.checking.stateful import hypothesis_check  # noqa: E402

DOC = Path(__file__).resolve().parent.parent / "docs" / "planted_bugs.md"

# -- the shop agent: one agent loop, one flag per planted bug ------------------------------


class Tool:
    """A tool with a side effect: each real execution is logged in ``calls``."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.calls: list[Any] = []

    def __call__(self, order: str) -> str:
        self.calls.append(order)
        return f"charged order {order}"


INTRO = (
    "You are a shop assistant. To charge an order reply with the JSON tool call "
    '{"tool": "charge", "order": ID}; reply "retry" to repeat a failed payment, '
    '"wait" to wait for the bank, and FINAL(answer) to finish.'
)


def shop_program(
    charge: Tool,
    *,
    max_turns: int | None = 6,
    safe_json: bool = True,
    memo: dict | None = None,
    retry_checks: bool = True,
    keep: int | None = 4,
    reset_word: str | None = None,
    busy_wait: bool = False,
    ascii_only: bool = False,
) -> Generator[str, str, str]:
    """The shop agent. The defaults are the correct harness; each keyword plants a bug:

    ``max_turns=None`` (no turn limit), ``safe_json=False`` (a malformed tool call
    raises), ``memo=None`` (the payment is not recorded, so a replay of the run charges
    again), ``retry_checks=False`` ("retry" charges again without checking), ``keep=None``
    (the transcript is never cut), ``reset_word`` (a command that wipes the
    transcript), ``busy_wait=True`` ("wait" spins without returning to the model),
    ``ascii_only=True`` (the transcript is encoded as ASCII, so non-ASCII text raises).
    """
    transcript: list[str] = []
    charged: set[str] = set()
    history: tuple[str, ...] = ()  # the completions so far: where a payment happens
    last: str | None = None
    turn = 0

    def pay(order: str) -> str:
        if memo is None:
            return charge(order)
        key = (history, order)  # a replay reaches the same key and reuses the result
        if key not in memo:
            memo[key] = charge(order)
        return memo[key]

    while max_turns is None or turn < max_turns:
        turn += 1
        shown = transcript if keep is None else transcript[-keep:]
        c = yield "\n".join([INTRO, *shown, f"Turn {turn}:"])
        history += (c,)
        reply = c.strip()
        if ascii_only:
            reply.encode("ascii")
        if reset_word is not None and reply == reset_word:
            transcript, turn = [], 0
            continue
        if reply.startswith("FINAL(") and reply.endswith(")"):
            return reply[6:-1]
        if reply == "wait":
            if busy_wait:
                while True:  # polls the bank without ever returning to the model
                    pass
            transcript.append(f"Turn {turn}: waited for the bank")
        elif reply == "retry":
            if last is None:
                transcript.append(f"Turn {turn}: nothing to retry")
            elif retry_checks and last in charged:
                transcript.append(f"Turn {turn}: order {last} is already charged")
            else:
                transcript.append(f"Turn {turn}: {pay(last)}")
                charged.add(last)
        elif reply.startswith("{"):
            if safe_json:
                try:
                    call = json.loads(reply)
                except ValueError:
                    transcript.append(f"Turn {turn}: error: the tool call is not valid JSON")
                    continue
            else:
                call = json.loads(reply)
            if not isinstance(call, dict) or call.get("tool") != "charge":
                transcript.append(f"Turn {turn}: error: unknown tool call")
                continue
            last = str(call.get("order"))
            if last in charged:
                transcript.append(f"Turn {turn}: order {last} is already charged")
            else:
                transcript.append(f"Turn {turn}: {pay(last)}")
                charged.add(last)
        else:
            transcript.append(f"Turn {turn}: user said {reply!r}")
    return "out of turns"


def shop(**bug: Any) -> HarnessMachine:
    """The shop agent as a machine (``bug``: the keywords of :func:`shop_program`)."""
    charge = Tool("charge")
    options = {"memo": {}, **bug}
    machine = HarnessMachine(shop_program, charge, line_budget=20_000, name="shop", **options)
    machine.tools = {"charge": charge}  # type: ignore[attr-defined]
    return machine


CALL = '{"tool": "charge", "order": 1}'
BROKEN_CALL = '{"tool": "charge", "order": 1'
LONG = "please tell me everything about my order " * 3

# -- the built-in architectures, with planted bugs -----------------------------------------


def react_crash_program(*args: Any, **kwargs: Any) -> Generator[str, str, Any]:
    """ReAct as the original runs it: an empty action raises IndexError (``action[0]``)."""
    inner = react.react_program(*args, **kwargs)
    prompt = next(inner)
    while True:
        c = yield prompt
        at_action = prompt.rstrip().rsplit("\n", 1)[-1].startswith("Action")
        if at_action and not c.split("\n")[0].strip():
            raise IndexError("string index out of range")  # the original's action[0]
        try:
            prompt = inner.send(c)
        except StopIteration as stop:
            return stop.value


def react_crash() -> HarnessMachine:
    return HarnessMachine(react_crash_program, name="react+crash")


def react_steps(prompt: str) -> list[str]:
    """At a Thought prompt: search again, or finish; at an Action prompt: an empty action
    or a finish."""
    k = react.step_label(prompt) or 1
    if prompt.endswith(f"Action {k}:"):
        return ["", " Finish[Seine]"]
    return [
        f" Look again.\nAction {k}: Search[Paris]",
        " hmm",
        f" Done.\nAction {k}: Finish[Seine]",
    ]


def react_reset_alphabet(prompt: str) -> list[str]:
    return react.diagram_completions(prompt) + ["RESET"]


def rlm_loop(prompt: str) -> list[str]:
    """A root turn that runs code and never answers, or a final answer."""
    if rlm.is_single_user_message(prompt):
        return ["Seine"]
    return ["```repl\nprint(len(context))\n```", "FINAL(Seine)"]


def rlm_output(prompt: str) -> list[str]:
    return ["```repl\nprint('x' * 5000)\n```", "FINAL(Seine)"]


def thread_spawn(prompt: str) -> list[str]:
    """Spawn a sub-thread, again and again."""
    return [thread.SCRIPT[0]]


REFLEXION_WRONG = " A guess.\nAction 1: Finish[Thames]"
"""At an actor prompt a wrong finish; at a reflection prompt, any text is a reflection."""


def reflexion_trials_by_memory() -> HarnessMachine:
    """Reflexion whose trial limit (3) is checked against the memory's length, which the
    window (Ω = 1) caps at 1: a model that keeps failing is retried for ever."""
    return reflexion.machine(max_trials=3, memory_size=1, trials_by_memory=True)


def reflexion_fixed() -> HarnessMachine:
    """The same Reflexion, trials counted by the trial counter."""
    return reflexion.machine(max_trials=3, memory_size=1)


REFLEXION_FIRST = reflexion.machine().prompt(reflexion.initial)

PAL_TEXT_ANSWER = "def solution():\n    return 'twenty-three'\n"
"""A program whose answer is text, not a number."""


def pal_strict_answer() -> HarnessMachine:
    """PAL whose harness converts the answer with ``float()`` unguarded: a program that
    returns text makes the harness raise. (The alphabet is our own programs: inline.)"""
    return pal.machine(isolation="inline", strict_answer=True)


def pal_fixed() -> HarnessMachine:
    """PAL as shipped: a text answer is scored wrong."""
    return pal.machine(isolation="inline")


CODEACT_CHAT = "Let me think about the task."
"""A reply with neither code nor a solution."""


def codeact_free_chat() -> HarnessMachine:
    """CodeAct whose step counter ignores replies without code: a model that only chats is
    never stopped. (The alphabet is our own replies: inline.)"""
    return codeact.machine(isolation="inline", max_turns=4, count_chat=False)


def codeact_fixed() -> HarnessMachine:
    """CodeAct as shipped: every reply uses a step."""
    return codeact.machine(isolation="inline", max_turns=4)


ADAPT_FAIL = " task failed"
ADAPT_RESTATE = "Step 1: put 2 apple in/on sidetable 1\nExecution order: Step 1"
"""An executor that always fails, and a planner that restates the task as its one step."""


def adapt_no_depth_limit() -> HarnessMachine:
    """ADaPT without a depth limit: a planner that restates a failed task decomposes it
    for ever. (One executor action per task keeps the unmodified machine's runs short.)"""
    return adapt.machine(max_depth=None, executor_steps=1)


def adapt_fixed() -> HarnessMachine:
    """ADaPT with a depth limit (2)."""
    return adapt.machine(max_depth=2, executor_steps=1)


TOT_DEAD_END = "9 - 8 = 1 (left: 1 4 6)"
TOT_LIKELY = "likely"
"""A proposal that leads to a dead end (1 4 6, then no valid step proposed), judged likely."""


def tot_revisit() -> HarnessMachine:
    """DFS Tree of Thoughts that restarts from the root on a dead end instead of moving to
    the next sibling: it revisits the same states for ever."""
    return tot.machine(search="dfs", revisit=True)


ADAPLANNER_FAILING_PLAN = (
    "def solution(start_from=1):\n    assert False, 'Error in [Step 1]: nothing'\n"
)
"""A plan whose first assertion fails, whatever it is given."""


def adaplanner_unbounded() -> HarnessMachine:
    """AdaPlanner without a bound on refinements: a plan that keeps failing is refined for
    ever. (The alphabet is our own plans: inline.)"""
    return adaplanner.machine(isolation="inline", max_refinements=None)


def adaplanner_fixed() -> HarnessMachine:
    """AdaPlanner with its bound (3 refinements)."""
    return adaplanner.machine(isolation="inline")


def tot_fixed() -> HarnessMachine:
    """DFS Tree of Thoughts that backtracks to the next sibling."""
    return tot.machine(search="dfs")


# -- a finite workflow -----------------------------------------------------------------------


def workflow(cancel_to_cart: bool) -> TableMachine:
    """An order workflow: cart -> paid -> shipped -> done. The bug: "cancel" after
    shipping goes back to the cart, so a run can go round for ever."""
    prompts = {
        "cart": "Items in the cart. Pay or cancel?",
        "paid": "Paid. Ship or cancel?",
        "shipped": "Shipped. Confirm delivery or cancel?",
    }
    t = {
        ("cart", "go"): "paid",
        ("cart", "cancel"): HALT,
        ("paid", "go"): "shipped",
        ("paid", "cancel"): HALT,
        ("shipped", "go"): HALT,
        ("shipped", "cancel"): "cart" if cancel_to_cart else HALT,
    }
    return TableMachine(prompts, t, initial="cart", name="workflow")


# -- an agent function: one loop, three planted bugs -----------------------------------------

AGENT_ALPHABETS = {
    "think-forever": ["think", "done"],
    "retried-payment": ["pay", "retry", "done"],  # the bug is one "pay" away
    "unknown-item": ["buy apple", "buy kiwi", "done"],
}


def shop_agent(
    model: Callable[[str], str],
    *,
    think_forever: bool = False,
    retried_payment: bool = False,
    unknown_item: bool = False,
) -> Any:
    """A shop assistant written as a plain agent function ``fn(model)``. Each flag plants a bug:

    ``think_forever`` ("think" does not use up a turn, so a model that keeps thinking is
    asked the same question for ever), ``retried_payment`` (the bank answers "pending",
    and the agent retries the payment at once: the same order is charged twice),
    ``unknown_item`` ("buy ITEM" looks the price up without checking the item, so an
    unknown item raises ``KeyError``). "retry" pays the last order again only when it
    was not paid, in every version.
    """
    prices = {"apple": 3, "pear": 4}
    cart: list[str] = []
    orders, last, paid = 0, None, set()

    @effect  # defined inside the function: a new object on every replay, recognised anyway
    def charge(order: int) -> str:
        return "pending"  # the bank confirms later

    note, turn = "Welcome.", 0
    while turn < 4:
        reply = model(
            f"{note} Cart: {', '.join(cart) or 'empty'}. think, buy ITEM, pay, retry or done?"
        )
        reply = reply.strip()
        if reply == "think":
            if not think_forever:
                turn += 1
            note = "You thought about it."
            continue
        turn += 1
        if reply == "done":
            return sorted(paid)
        if reply.startswith("buy "):
            item = reply[4:]
            if unknown_item or item in prices:
                cart.append(f"{item} ({prices[item]})")  # KeyError on an unknown item: the bug
                note = f"Added {item}."
            else:
                note = f"There is no {item}."
        elif reply == "pay":
            orders += 1
            last = orders
            if charge(orders) == "pending" and retried_payment:
                charge(orders)  # the retried payment: "pending" is not "failed"
            note = f"Order {orders} is paid (pending)."
            paid.add(orders)
        elif reply == "retry":
            if last is None:
                note = "Nothing to retry."
            elif last in paid:
                note = f"Order {last} is already paid."
            else:
                note = charge(last)
        else:
            note = "Say think, buy ITEM, pay, retry or done."
    return sorted(paid)


def think_forever() -> Any:
    return agent_machine(shop_agent, think_forever=True, name="shop-agent")


def retried_payment() -> Any:
    return agent_machine(shop_agent, retried_payment=True, name="shop-agent")


def unknown_item() -> Any:
    return agent_machine(shop_agent, unknown_item=True, name="shop-agent")


def shop_agent_fixed() -> Any:
    return agent_machine(shop_agent, name="shop-agent")


AGENT_BUGS = {  # the three agent-function bugs: factory, what it is, the property it breaks
    "think-forever": (
        think_forever,
        '"think" does not use up a turn: a model that keeps thinking is asked for ever',
        halts_within(4),  # the unmodified agent halts within its 4 turns
    ),
    "retried-payment": (
        retried_payment,
        'the bank answers "pending" and the agent retries at once: one order charged twice',
        effects_at_most_once("charge"),
    ),
    "unknown-item": (
        unknown_item,
        '"buy ITEM" looks the price up unchecked: an unknown item raises KeyError',
        never_raises(),
    ),
}


def _agent_cases() -> tuple[Case, ...]:
    """Each agent bug twice: exhaustive over a small alphabet, and 200 Hypothesis runs driven
    by the agent's own commands (its string constants) among adversarial completions."""
    cases = []
    for bug, (buggy, what, prop) in AGENT_BUGS.items():
        cases.append(
            Case(
                f"agent-{bug}",
                "agent function",
                what,
                prop,
                buggy,
                shop_agent_fixed,
                AGENT_ALPHABETS[bug],
                max_depth=5,
            )
        )
        cases.append(
            Case(
                f"agent-{bug}-hypothesis",
                "agent function",
                what + " (found by Hypothesis)",
                prop,
                buggy,
                shop_agent_fixed,
                adversarial_completions(shop_agent_fixed()),
                hypothesis=200,
                seed=0,
                max_steps=20,  # as `test --hypothesis` runs them
            )
        )
    return tuple(cases)


# -- the cases ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One planted bug: the buggy and the fixed machine, and how to find the bug."""

    name: str
    subject: str
    bug: str
    prop: Property
    buggy: Callable[[], Any]
    fixed: Callable[[], Any]
    completions: Any
    max_depth: int | None = None
    hypothesis: int = 0  # > 0: Hypothesis runs (adversarial strategies) instead of BFS
    seed: int | None = None  # the Hypothesis seed (None: a fresh one each time)
    max_steps: int = 8  # steps per Hypothesis run

    def check(self, machine: Any) -> Any:
        if self.hypothesis:
            return hypothesis_check(
                machine,
                properties=[self.prop],
                completions=self.completions,
                max_examples=self.hypothesis,
                max_steps=self.max_steps,
                seed=self.seed,
                progress=False,
            )
        return check_properties(
            machine,
            properties=[self.prop],
            completions=self.completions,
            max_depth=self.max_depth,
            progress=False,
        )


REACT_FIRST = react.machine().prompt(react.initial)
SHOP_ALPHABET = [CALL, "retry", "FINAL(done)"]

CASES: tuple[Case, ...] = (
    Case(
        "react-reset",
        "ReAct",
        "a completion RESET throws the transcript away (a reset that can be reached)",
        # a state and its prompt together: an Invariant (unreachable() takes the state only)
        Invariant(
            "unreachable(the first prompt again)",
            lambda s, p: not (len(s) > 0 and p == REACT_FIRST),
            text="no later state shows the first prompt again",
        ),
        lambda: react.machine(reset="RESET"),
        react.machine,
        react_reset_alphabet,
        max_depth=4,
    ),
    Case(
        "react-no-step-limit",
        "ReAct",
        "the 7-step limit is gone (max_steps=10**6): a model that keeps searching never stops",
        halts_within(14),
        lambda: react.machine(max_steps=10**6),
        react.machine,
        react_steps,
    ),
    Case(
        "react-crash-empty-action",
        "ReAct",
        "an empty action raises IndexError, as in the original code",
        never_raises(),
        react_crash,
        react.machine,
        react_steps,
        max_depth=3,
    ),
    Case(
        "rlm-no-turn-limit",
        "RLM",
        "the turn limit is gone (max_turns=10**6): code that never answers runs for ever",
        halts_within(9),
        lambda: rlm.machine(max_turns=10**6),
        rlm.machine,
        rlm_loop,
    ),
    Case(
        "rlm-uncut-output",
        "RLM",
        "the REPL output is not cut (max_output=10**9), so the prompt grows with every print",
        # the cited code's long system prompt (issue 40) puts the stock machine's prompts
        # past 12,000 characters at depth 3, under 20,000; the uncut output passes 20,000
        prompt_length_at_most(20_000),
        lambda: rlm.machine(max_output=10**9),
        rlm.machine,
        rlm_output,
        max_depth=3,
    ),
    Case(
        "thread-no-call-limit",
        "THREAD",
        "the call budget is gone (max_calls=10**6): sub-threads spawn sub-threads for ever",
        halts_within(31),
        lambda: thread.machine(max_calls=10**6),
        thread.machine,
        thread_spawn,
    ),
    Case(
        "reflexion-trials-by-memory",
        "Reflexion",
        "the trial limit is checked against the memory's length, which the window caps: a "
        "failing model is retried for ever",
        halts_within(6),
        reflexion_trials_by_memory,
        reflexion_fixed,
        [REFLEXION_WRONG],
    ),
    Case(
        "reflexion-never-reflects",
        "Reflexion",
        "the reflection never triggers: a failed trial is retried with the same empty memory, "
        "so the first prompt comes back",
        Invariant(
            "unreachable(the first prompt again)",
            lambda s, p: not (len(s) > 0 and p == REFLEXION_FIRST),
            text="no later state shows the first prompt again",
        ),
        lambda: reflexion.machine(reflect=False),
        reflexion.machine,
        [REFLEXION_WRONG],
        max_depth=4,
    ),
    Case(
        "pal-unguarded-answer",
        "PAL",
        "the answer is converted with float() unguarded: a program returning text crashes "
        "the harness",
        never_raises(),
        pal_strict_answer,
        pal_fixed,
        [pal.SCRIPT[0], PAL_TEXT_ANSWER],
    ),
    Case(
        "codeact-free-chat",
        "CodeAct",
        "a reply without code uses no step: a model that only chats runs for ever",
        halts_within(5),
        codeact_free_chat,
        codeact_fixed,
        [CODEACT_CHAT],
    ),
    Case(
        "adapt-no-depth-limit",
        "ADaPT",
        "no depth limit: a planner that restates a failed task makes it recurse for ever",
        halts_within(6),
        adapt_no_depth_limit,
        adapt_fixed,
        [ADAPT_FAIL, ADAPT_RESTATE],
    ),
    Case(
        "tot-dfs-revisits",
        "Tree of Thoughts",
        "DFS restarts from the root on a dead end instead of backtracking: it revisits states "
        "for ever",
        halts_within(5),
        tot_revisit,
        tot_fixed,
        [TOT_DEAD_END, TOT_LIKELY],
    ),
    Case(
        "adaplanner-unbounded-refinement",
        "AdaPlanner",
        "no bound on out-of-plan refinements: a plan that keeps failing is refined for ever",
        halts_within(5),
        adaplanner_unbounded,
        adaplanner_fixed,
        [ADAPLANNER_FAILING_PLAN],
    ),
    Case(
        "shop-no-turn-limit",
        "agent loop",
        "no turn limit (while True)",
        halts_within(6),
        lambda: shop(max_turns=None),
        shop,
        ["hello", CALL, "FINAL(done)"],
    ),
    Case(
        "shop-crash-malformed-call",
        "agent loop",
        "json.loads on the tool call without a try: a malformed call raises",
        never_raises(),
        lambda: shop(safe_json=False),
        shop,
        [CALL, BROKEN_CALL, "FINAL(done)"],
        max_depth=4,
    ),
    Case(
        "shop-replayed-payment",
        "agent loop",
        "the payment is not recorded: replaying the run (to branch, or after a restart) pays again",
        effects_at_most_once("charge"),
        lambda: shop(memo=None),
        shop,
        SHOP_ALPHABET,
        max_depth=4,
    ),
    Case(
        "shop-retry-double-charge",
        "agent loop",
        '"retry" charges again without checking the order was paid',
        effects_at_most_once("charge"),
        lambda: shop(retry_checks=False),
        shop,
        SHOP_ALPHABET,
        max_depth=4,
    ),
    Case(
        "shop-unbounded-transcript",
        "agent loop",
        "the transcript is never cut: the prompt grows with every turn",
        prompt_length_at_most(800),
        lambda: shop(keep=None),
        shop,
        [LONG, "FINAL(done)"],
    ),
    Case(
        "shop-reachable-reset",
        "agent loop",
        'a "/reset" command wipes the transcript and the turn count',
        Invariant(
            "unreachable(turn 1 again)",
            lambda s, p: not (len(s) > 0 and p.endswith("Turn 1:")),
            text="no later state is at turn 1 again",
        ),
        lambda: shop(reset_word="/reset"),
        shop,
        ["/reset", CALL, "FINAL(done)"],
        max_depth=4,
    ),
    Case(
        "shop-busy-wait",
        "agent loop",
        '"wait" polls the bank in a loop that never returns to the model (DIVERGE)',
        never_diverges(),
        lambda: shop(busy_wait=True),
        shop,
        ["wait", CALL, "FINAL(done)"],
    ),
    Case(
        "shop-ascii-only",
        "agent loop",
        "the reply is encoded as ASCII: any non-ASCII completion raises (found by Hypothesis)",
        never_raises(),
        lambda: shop(ascii_only=True),
        shop,
        st.one_of(st.sampled_from([CALL, "FINAL(done)"]), unicode_text(max_size=20)),
        hypothesis=50,
    ),
    Case(
        "workflow-cancel-cycle",
        "finite table",
        '"cancel" after shipping goes back to the cart: a cycle that never halts',
        never_diverges(),
        lambda: workflow(cancel_to_cart=True),
        lambda: workflow(cancel_to_cart=False),
        None,
    ),
    *_agent_cases(),
)


@dataclass(frozen=True)
class Row:
    """One line of the table."""

    case: Case
    buggy_status: str
    length: int | None
    lasso: bool
    seconds: float
    states: int
    fixed_status: str
    fixed_seconds: float
    bound: str
    method: str
    counterexample: Any


def run_case(case: Case) -> Row:
    began = time.perf_counter()
    found = case.check(case.buggy())
    seconds = time.perf_counter() - began
    began = time.perf_counter()
    passed = case.check(case.fixed())
    fixed_seconds = time.perf_counter() - began
    cx = found.counterexample(case.prop.name)
    return Row(
        case,
        found[case.prop.name].verdict.status,
        len(cx) if cx is not None else None,
        cx is not None and cx.loop is not None,
        seconds,
        found.coverage.states if found.coverage else 0,
        passed[case.prop.name].verdict.status,
        fixed_seconds,
        passed.bound,
        found.method,
        cx,
    )


def to_markdown(rows: list[Row]) -> str:
    lines = [
        "# Planted harness bugs",
        "",
        "Written by `python experiments/planted_bugs.py`; every number is measured by that",
        "run. Each row is a machine with one bug planted in its harness. The property that the",
        "bug breaks is checked on the buggy machine and on the unmodified one, with the same",
        "alphabet and bound: **found** is the verdict on the buggy machine with the length of",
        "its counterexample (shortest for the exhaustive search, shrunk for Hypothesis) and",
        "the time the check took; **unmodified** is the verdict on the machine without the",
        "bug and the bound it holds within. The built-in architectures get their bugs through",
        "their own parameters (or, for ReAct's crash, a wrapper that raises where the",
        "original code does); the agent loops are one shop agent with a payment tool, one",
        "flag flipped per row (`shop_program` in the experiment).",
        "",
        "| case | machine | planted bug | property | found | counterexample | time | unmodified | bound |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        length = (
            "-"
            if r.length is None
            else f"{r.length} step{'s' * (r.length != 1)}" + (" (lasso)" if r.lasso else "")
        )
        method = "Hypothesis" if r.method == "sampled" else "exhaustive"
        lines.append(
            f"| `{r.case.name}` | {r.case.subject} | {r.case.bug} | `{r.case.prop.name}` | "
            f"{r.buggy_status} ({method}) | {length} | {r.seconds:.2f} s | {r.fixed_status} | "
            f"{r.bound} |"
        )
    lines += [
        "",
        "The counterexample of each row, as the completions the model gives:",
        "",
    ]
    for r in rows:
        if r.counterexample is not None:
            comps = r.counterexample.completions
            shown = [c if len(c) <= 40 else c[:39] + "…" for c in comps[:3]]
            more = f" and {len(comps) - 3} more like them" if len(comps) > 3 else ""
            lines.append(f"- `{r.case.name}`: `{json.dumps(shown, ensure_ascii=False)}`{more}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--no-write", action="store_true", help="print the table only")
    args = parser.parse_args(argv)
    rows = []
    for case in CASES:
        row = run_case(case)
        rows.append(row)
        print(
            f"{case.name:28} found: {row.buggy_status:8} len {row.length!s:4} "
            f"{row.seconds:6.2f} s   unmodified: {row.fixed_status:8} {row.fixed_seconds:6.2f} s  ({row.bound})"
        )
    bad = [r for r in rows if r.buggy_status != "refuted" or r.fixed_status != "holds"]
    if not args.no_write:
        DOC.write_text(to_markdown(rows), encoding="utf-8")
        print(f"wrote {DOC}")
    if bad:
        print(f"{len(bad)} case(s) did not behave: {', '.join(r.case.name for r in bad)}")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
