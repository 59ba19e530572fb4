"""The checkers of the tutorial's exercises, one function per exercise, and the registry.

A checker takes the answer (a mapping from the names the exercise asks for to the
student's values) and returns a :class:`Feedback`: right or wrong, and a message that
names a counterexample when wrong. A checker never trusts the answer: it recomputes
what it needs with the toolkit and compares, and an answer whose own code raises is
wrong with the error quoted, not a crash.

>>> exercise("2.1").names
('mappings',)
>>> print(check("2.1", {"mappings": [{"q": "a"}]}))
wrong: {'q': 'a'} uses 'a', which the exercise asks to avoid; map the states of loop only to menu's other states, and check each mapping with check_embedding
"""

from __future__ import annotations

import json
import runpy
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._files import check_regular, read_regular
from .._text import clip_prompt_repr, counted
from ..architectures import react, spell
from ..architectures import repl_plan as rp
from ..architectures.environments import CountEnv
from ..cek import AgenticEvaluator, first_boundary, seed_state
from ..cek.realize import realize_react_toy
from ..embedding import Embedding, check_embedding, find_embeddings
from ..errors import InvalidArgument
from ..fixtures import menu_and_loop
from ..generation import completion_generates, is_spe_state, spe_states
from ..machine import DIVERGE, HALT, AgenticMachine, TableMachine, is_sentinel
from ..runtime.harness import HarnessMachine
from ..runtime.run import run
from ..spell import SpellMachine, ToolEnvironment

__all__ = ["EXERCISES", "Exercise", "Feedback", "check", "check_file", "exercise", "load_answer"]


@dataclass(frozen=True)
class Feedback:
    """A checker's answer: ``ok`` and a ``message`` (a counterexample when wrong).

    >>> print(Feedback(False, "a and b both go to 0"))
    wrong: a and b both go to 0
    >>> bool(Feedback(True, "yes"))
    True
    """

    ok: bool
    message: str

    def __bool__(self) -> bool:
        return self.ok

    def __str__(self) -> str:
        return ("right: " if self.ok else "wrong: ") + self.message


@dataclass(frozen=True)
class Exercise:
    """One exercise: its number (``"2.1"``), its chapter, what it asks, the names an answer
    defines (with what each is), and its checker."""

    number: str
    chapter: str
    task: str
    names: tuple[str, ...]
    wants: str
    checker: Callable[[Mapping[str, Any]], Feedback]


class _Wrong(Exception):
    """Raised inside a checker to stop with a counterexample."""


def _right(message: str) -> Feedback:
    return Feedback(True, message)


def _fail(message: str) -> None:
    raise _Wrong(message)


def _show(value: Any) -> str:
    if value is HALT:
        return "HALT (1)"
    if value is DIVERGE:
        return "DIVERGE (↑)"
    return repr(value)


# ------------------------------------------------------------------- shared checks
def _machine(answer: Any, name: str) -> AgenticMachine:
    if not isinstance(answer, AgenticMachine):
        _fail(
            f"{name} should be an agentic machine (e.g. a TableMachine), not {type(answer).__name__}"
        )
    return answer


def _same_set(name: str, what: str, got: Any, described: Any) -> None:
    """Fail unless ``got`` (the answer's states or completions) is the set the exercise
    describes; the message names one extra member, or says one is missing."""
    if got is None or set(got) != set(described):
        extra = sorted(set(got or ()) - set(described), key=repr)
        _fail(
            f"{name} has {what}s {_show(got)}: "
            + (
                f"{extra[0]!r} is not a {what} the exercise describes"
                if extra
                else f"the exercise describes {len(described)} {what}s; one is missing"
            )
        )


def _same_machine(answer: Any, reference: TableMachine, name: str) -> None:
    """Compare a finite machine with the reference: states, prompts, completions, h."""
    m = _machine(answer, name)
    _same_set(name, "state", m.states, reference.states)
    _same_set(name, "completion", m.completions, reference.completions)
    for s in reference.states:
        if m.prompt(s) != reference.prompt(s):
            # A counterexample, never the answer: the state where the prompt differs.
            _fail(
                f"{name}.prompt({s!r}) is {m.prompt(s)!r}, which is not the prompt the "
                f"exercise gives state {s!r}"
            )
        for c in reference.completions:
            got, want = m.harness(s, c), reference.harness(s, c)
            if got != want or is_sentinel(got) != is_sentinel(want):
                _fail(
                    f"{name}.harness({s!r}, {c!r}) is {_show(got)}: the exercise's machine "
                    f"does not do that in state {s!r} on {c!r}; re-read what it says happens there"
                )


def _call(what: str, f: Callable[..., Any], *args: Any) -> Any:
    try:
        return f(*args)
    except Exception as exc:  # noqa: BLE001 - the student's code may raise anything
        _fail(f"{what} raised {type(exc).__name__}: {exc}")


# ---------------------------------------------------------------------- chapter 1
def _toggle() -> TableMachine:
    return TableMachine(
        {"on": "switch?", "off": "switch?"},
        {("on", "flip"): "off", ("off", "flip"): "on", ("on", "stop"): HALT, ("off", "stop"): HALT},
        name="toggle",
    )


def ex_1_1(a: Mapping[str, Any]) -> Feedback:
    """``toggle``: on/off, prompt ``switch?``, ``flip`` swaps, ``stop`` halts."""
    _same_machine(a["toggle"], _toggle(), "toggle")
    return _right("toggle has the right states, prompts and transitions")


def ex_1_2(a: Mapping[str, Any]) -> Feedback:
    """``guess(secret)``: prompts ``Guess #i``, halts with the number of guesses."""

    for secret, wrong in (("owl", ["a", "b"]), ("7", ["1", "2", "3", "4"]), ("x", [])):
        g = _call("HarnessMachine(guess, ...)", HarnessMachine, a["guess"], secret)
        s = g.initial
        for i, c in enumerate(wrong, start=1):
            p = _call("guess", g.prompt, s)
            if p != f"Guess #{i}":
                _fail(f"with secret {secret!r}, guess {i} is prompted {p!r}, not 'Guess #{i}'")
            s = _call("guess", g.harness, s, c)
            if is_sentinel(s):
                _fail(f"with secret {secret!r}, the wrong guess {c!r} ends the loop ({_show(s)})")
        n = len(wrong) + 1
        if _call("guess", g.prompt, s) != f"Guess #{n}":
            _fail(
                f"with secret {secret!r}, guess {n} is prompted {g.prompt(s)!r}, not 'Guess #{n}'"
            )
        if _call("guess", g.harness, s, secret) is not HALT:
            _fail(f"with secret {secret!r}, guessing it does not halt")
        got = _call("guess", g.result, s, secret)
        if got != n:
            _fail(f"with secret {secret!r}, found at guess {n}, the loop returns {got!r}, not {n}")
    return _right("guess prompts Guess #1, #2, ... and halts with the number of guesses")


def ex_1_3(a: Mapping[str, Any]) -> Feedback:
    """``at_most(k)``: the most outcomes one state reaches in one step with |C| = k."""
    for k in range(1, 7):
        got = _call(f"at_most({k})", a["at_most"], k)
        if got != k:
            if isinstance(got, int) and got < k:
                _fail(
                    f"for k = {k} you say {got}, but a state can reach more: try completions "
                    f"0..{k - 1} with h(s, i) = state i, and count the outcomes"
                )
            _fail(
                f"for k = {k} you say {got!r}, but that is more than one step can reach: count "
                "how many outcomes each completion gives"
            )
    toggle = _toggle()
    outcomes = {toggle.harness("on", c) for c in toggle.completions}
    return _right(
        "one outcome per completion, so at most k (k when every completion goes elsewhere)\n"
        f"toggle: 'on' reaches {sorted(map(_show, outcomes))} with k = 2"
    )


# ---------------------------------------------------------------------- chapter 2
def _mapping_list(value: Any, name: str) -> list[dict]:
    if isinstance(value, Mapping) or not isinstance(value, Iterable):
        _fail(f"{name} should be a list of mappings (dicts), one per embedding")
    out = []
    for m in value:
        m = getattr(m, "mapping", m)  # an Embedding is welcome too
        if not isinstance(m, Mapping):
            _fail(f"{name} should hold dicts (each state of loop -> a state of menu), not {m!r}")
        out.append(dict(m))
    return out


def ex_2_1(a: Mapping[str, Any]) -> Feedback:
    """``mappings``: every embedding of loop into menu whose image avoids ``"a"``."""

    menu, loop = menu_and_loop()
    given = _mapping_list(a["mappings"], "mappings")
    want = [dict(e.mapping) for e in find_embeddings(loop, menu, into={"b", "s0"})]
    for m in given:
        if "a" in m.values():
            # The feedback points at the mistake, never at the answer (the student finds it).
            _fail(
                f"{m!r} uses 'a', which the exercise asks to avoid; map the states of loop "
                "only to menu's other states, and check each mapping with check_embedding"
            )
        v = check_embedding(Embedding(loop, menu, m))
        if not v.holds:
            _fail(f"{m!r} is not an embedding: {v.obstruction.explanation}")
    missing = [m for m in want if m not in given]
    if missing:
        _fail(
            f"an embedding that avoids 'a' is missing: there are {len(want)}, your list has "
            f"{len([m for m in given if m in want])} of them"
        )
    if len(given) != len(want):
        _fail(f"{len(given)} mappings given but only {len(want)} distinct embeddings exist")
    return _right(f"the only embedding avoiding 'a' is {want[0]!r}")


def ex_2_2(a: Mapping[str, Any]) -> Feedback:
    """``two`` (p, r swapped by yes, no halts) and ``embeds`` (does two embed into menu?)."""

    menu, _ = menu_and_loop()
    reference = TableMachine(
        {"p": "continue?", "r": "continue?"},
        {("p", "yes"): "r", ("r", "yes"): "p", ("p", "no"): HALT, ("r", "no"): HALT},
        name="two",
    )
    _same_machine(a["two"], reference, "two")
    found = [e.mapping for e in find_embeddings(reference, menu)]
    if a["embeds"] is not bool(found):
        _fail(
            "you say two embeds into menu, but no embedding exists: e.g. p -> a, r -> b "
            "breaks commutation, since e(h'(p, yes)) = e(r) = b but h(e(p), yes) = h(a, yes) = a"
            if not found
            else f"two does embed into menu, e.g. {found[0]!r}"
        )
    return _right(
        "two does not embed: its states need distinct images with prompt 'continue?' "
        "(a and b), but a and b loop on yes while p and r swap"
    )


def ex_2_3(a: Mapping[str, Any]) -> Feedback:
    """``composed``: the composition of an embedding of loop into menu after identity(loop)."""

    menu, loop = menu_and_loop()
    e = a["composed"]
    if not isinstance(e, Embedding):
        _fail(
            f"composed should be an Embedding (compose(first, identity(loop))), not {type(e).__name__}"
        )
    if e.source.name != "loop" or e.target.name != "menu":
        _fail(f"composed goes from {e.source.name} to {e.target.name}, not from loop to menu")
    v = check_embedding(e)
    if not v.holds:
        _fail(f"composed is not an embedding: {v.obstruction.explanation}")
    options = [dict(f.mapping) for f in find_embeddings(loop, menu)]
    if dict(e.mapping or {}) not in options:
        _fail(
            f"composed maps {e.mapping!r}: an embedding, but not the composition the "
            "exercise asks for (compose(first, identity(loop)))"
        )
    return _right(f"composed = {dict(e.mapping)!r} is an embedding of loop into menu")


# ---------------------------------------------------------------------- chapter 3
def _state_set(value: Any, name: str) -> set:
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        _fail(f"{name} should be a set or a list of states")
    return set(value)


def _spe_answer(machine: TableMachine, claimed: set) -> None:
    actual = set(spe_states(machine))
    for s in sorted(claimed - actual, key=repr):
        why = is_spe_state(machine, s) if s in machine.states else None
        o = why.obstruction if why is not None else None
        if o is None:
            because = "it is not one of its states"
        elif o.kind == "successor":  # the state it misses, not F1's count (the whole answer)
            because = f"no completion leads from {s!r} to {o.state!r}"
        else:
            because = o.explanation
        _fail(f"{s!r} is not an SPE state of {machine.name}: {because}")
    left_out = actual - claimed
    if left_out:  # how many, not which: naming them (or their witness) is the solution
        _fail(
            f"your list leaves out {counted(len(left_out), 'SPE state')} of {machine.name}: check each "
            "state with is_spe_state"
        )


def ex_3_1(a: Mapping[str, Any]) -> Feedback:
    """``spe``: the SPE states of menu (predict with F1 and |S| <= |C|)."""
    menu, _ = menu_and_loop()
    _spe_answer(menu, _state_set(a["spe"], "spe"))
    return _right("menu has no SPE state: |S| = 3 > |C| = 2, so no state reaches all three (F1)")


def ex_3_2(a: Mapping[str, Any]) -> Feedback:
    """``mul3`` (f2-mul plus ``flip``) and ``spe``, its SPE states."""
    reference = TableMachine(
        {0: "⋆", 1: "⋆"},
        {
            **{(x, str(y)): x * y for x in (0, 1) for y in (0, 1)},
            **{(x, "flip"): 1 - x for x in (0, 1)},
        },
        name="f2-mul-flip",
    )
    _same_machine(a["mul3"], reference, "mul3")
    _spe_answer(reference, _state_set(a["spe"], "spe"))
    return _right("both states are SPE: 0 now reaches 1 by 'flip'")


def ex_3_3(a: Mapping[str, Any]) -> Feedback:
    """``halt_c`` (one state, prompt continue?, halts on yes and no) and ``generates``."""

    menu, _ = menu_and_loop()
    reference = TableMachine({0: "continue?"}, {(0, "yes"): HALT, (0, "no"): HALT}, name="halt_c")
    m = _machine(a["halt_c"], "halt_c")
    states = list(m.states or [])
    if len(states) != 1:
        _fail(f"halt_c should have one state, not {len(states)}")
    s = states[0]
    for c in reference.completions:
        if m.harness(s, c) is not HALT:
            _fail(f"halt_c.harness({s!r}, {c!r}) is {_show(m.harness(s, c))}, but should halt")
    if m.prompt(s) != "continue?":
        _fail(f"halt_c's prompt is {m.prompt(s)!r}, not 'continue?'")
    v = completion_generates(menu, "s0", reference)
    if a["generates"] is not bool(v.holds):
        _fail(
            "you say it does, but it does not: "
            + (v.obstruction.explanation if v.obstruction else v.status)
            + "; the prompts match, but h(a, yes) = a and h(b, yes) = b while halt_c halts"
        )
    return _right("no: the images a and b have the prompt, but loop on yes; commutation fails")


# ---------------------------------------------------------------------- chapter 4
COLOR = '(string-append "I like " (llm "color?"))'


def ex_4_1(a: Mapping[str, Any]) -> Feedback:
    """``program``: first boundary asks ``color?``; after ``red`` it returns ``I like red``."""

    program = a["program"]
    if not isinstance(program, str):
        _fail(f"program should be the program's text (a string), not {type(program).__name__}")
    state = _call("first_boundary(program)", first_boundary, program)
    ev = AgenticEvaluator()
    if is_sentinel(state) or not hasattr(state, "prompt"):
        _fail(f"the program never calls llm: it ends as {_show(state)}")
    if ev.prompt(state) != "color?":
        _fail(f"the first boundary asks {ev.prompt(state)!r}, not 'color?'")
    after = ev.harness(state, "red")
    if after is not HALT:
        nxt = ev.prompt(after) if not is_sentinel(after) else _show(after)
        _fail(f"after the answer 'red' the program does not halt: it asks {nxt!r}")
    value = ev.last_record.value
    if value != "I like red":
        _fail(f"after the answer 'red' the program returns {value!r}, not 'I like red'")
    return _right("the program asks color? and answers I like red")


def ex_4_2(a: Mapping[str, Any]) -> Feedback:
    """``load_color`` and ``load_seed``: completions that load 4.1's state and x* from x*."""

    ev, x, color = AgenticEvaluator(), seed_state(), first_boundary(COLOR)
    for name, target, what in (("load_color", color, "the state of 4.1"), ("load_seed", x, "x*")):
        c = a[name]
        if not isinstance(c, str):
            _fail(f"{name} should be a completion (a string), not {type(c).__name__}")
        got = ev.harness(x, c)
        if got != target:
            where = (
                _show(got)
                if is_sentinel(got)
                else f"a boundary asking {ev.prompt(got)!r} ({got!r})"
            )
            hint = (
                "; the prompt is right but the continuation differs (cek.loader(state) writes "
                "the program that resumes exactly there)"
                if not is_sentinel(got) and ev.prompt(got) == ev.prompt(target)
                else ""
            )
            _fail(f"from x*, {name} = {c!r} reaches {where}, not {what}{hint}")
    return _right("both load their state from the seed: x* is one of its own successors")


def ex_4_3(a: Mapping[str, Any]) -> Feedback:
    """``diverge`` (sends the seed to ↑) and ``again`` (to a boundary asking ``again``)."""

    ev, x = AgenticEvaluator(), seed_state()
    d = ev.harness(x, str(a["diverge"]))
    if d is not DIVERGE:
        _fail(
            f"from x*, diverge = {a['diverge']!r} gives {_show(d) if is_sentinel(d) else 'a boundary asking ' + repr(ev.prompt(d))}, not DIVERGE (↑)"
        )
    g = ev.harness(x, str(a["again"]))
    if is_sentinel(g) or ev.prompt(g) != "again":
        _fail(
            f"from x*, again = {a['again']!r} gives {_show(g) if is_sentinel(g) else 'a boundary asking ' + repr(ev.prompt(g))}, not one asking 'again'"
        )
    return _right("one completion diverges, the other asks again")


# ---------------------------------------------------------------------- chapter 5
def ex_5_1(a: Mapping[str, Any]) -> Feedback:
    """``invariant(before, after)``: your check of ReAct's step invariant (a bool)."""

    m = react.machine()
    trace = run(m, react.scripted_model())
    pairs = [
        (m.prompt(step.state), m.prompt(step.outcome))
        for step in trace
        if not is_sentinel(step.outcome)
    ]
    before = pairs[0][0]
    # prompts that break it: not an extension, an extension that skips a step label
    pairs += [
        (before, before),
        (before, "Thought 1:"),
        (before, before + " hmm\nThought 3:"),
        (pairs[-1][1], pairs[-1][1] + " x\nAction 9:"),
    ]
    # each prompt cut where it leaves the others (the one rule): the same start is never shown
    prompts = [p for pair in pairs for p in pair]
    for b, after in pairs:
        want = react.successor_invariant(b, after)
        got = _call("invariant", a["invariant"], b, after)
        if bool(got) != want:
            _fail(
                f"for the prompt {clip_prompt_repr(b, 40, prompts)} followed by "
                f"{clip_prompt_repr(after, 40, prompts)} "
                f"you say {got!r}, but the invariant {'holds' if want else 'fails'}: "
                + react.INVARIANT_TEXT
            )
    return _right(f"your check agrees with react.successor_invariant on {len(pairs)} pairs")


def ex_5_2(a: Mapping[str, Any]) -> Feedback:
    """``same_prompt``: the valid completions whose successor of x0 has x0's prompt."""

    m = react.machine()
    p0 = m.prompt(react.initial)
    actual = [
        c
        for c in react.valid_completions()
        if not is_sentinel(y := m.harness(react.initial, c)) and m.prompt(y) == p0
    ]
    given = list(a["same_prompt"])
    for c in given:
        if c not in actual:
            y = m.harness(react.initial, c)
            _fail(
                f"{c!r} leads to {_show(y)}"
                + (
                    ""
                    if is_sentinel(y)
                    else f", whose prompt is {clip_prompt_repr(m.prompt(y), 40, [p0])}"
                )
                + ", not the initial prompt"
            )
    missed = [c for c in actual if c not in given]
    if missed:  # how many, not which: naming them is the solution
        _fail(
            f"your list leaves out {counted(len(missed), 'completion')} whose successor has that prompt"
        )
    return _right(
        f"none of the {len(react.valid_completions())} valid completions reloads the initial "
        "prompt: every successor extends the transcript"
    )


def ex_5_3(a: Mapping[str, Any]) -> Feedback:
    """``completion``: loads, from the seed, the toy machine's state one step from its start."""

    r = realize_react_toy()
    toy = r.machine
    targets = [
        t for t in (toy.harness(toy.initial, c) for c in toy.completions) if not is_sentinel(t)
    ]
    c = a["completion"]
    if not isinstance(c, str):
        _fail(f"completion should be a string (a program), not {type(c).__name__}")
    got = r.evaluator.harness(r.seed, c)
    if not any(got == r.embedding(t) for t in targets):
        _fail(
            f"from the seed, {c[:60]!r} reaches {_show(got) if is_sentinel(got) else repr(got)[:80]}, "
            f"the image of no state one step from the toy's start; r.loader(t) writes one"
        )
    return _right("your completion loads a one-step state of the toy machine from the seed")


# ---------------------------------------------------------------------- chapter 6
def ex_6_1(a: Mapping[str, Any]) -> Feedback:
    """``model`` (scripted blocks counting to six) and ``model_calls`` (your prediction)."""

    r = _call("rp.solve with your model", rp.solve, "Count from 1 to 6.", a["model"], CountEnv(6))
    if r.actions != ("1", "2", "3", "4", "5", "6") or r.status != "done":
        _fail(
            f"the run ends {r.status!r} with actions {' '.join(r.actions)}, not 1 2 3 4 5 6 and done"
        )
    if a["model_calls"] != r.model_calls:
        _fail(
            f"you predicted {a['model_calls']!r} model calls; the run made "
            f"{'more' if r.model_calls > a['model_calls'] else 'fewer'}: count one for main's "
            "block, one description, one block per call of count_even"
        )
    inv = r.repls["count_even"].invocations if "count_even" in r.repls else 0
    if inv != 3:
        _fail(f"count_even was invoked {inv} times, not 3 (once per even number)")
    return _right(f"1 to 6 in {r.model_calls} model calls, count_even invoked 3 times")


def ex_6_2(a: Mapping[str, Any]) -> Feedback:
    """``model``: main runs ``print(total)``, then ``answer('gave up')``."""

    r = _call("rp.solve with your model", rp.solve, rp.TASK, a["model"], CountEnv(4))
    if list(r.repls) != ["main"]:
        _fail(f"the run spawned REPLs {list(r.repls)[1:]}: an undefined variable spawns none")
    if r.answer != "gave up":
        _fail(f"the run answers {r.answer!r}, not 'gave up'")
    if not any("REPLNameError: name 'total' is not defined" in p for p in r.prompts):
        _fail("the model never saw REPLNameError: name 'total' is not defined")
    return _right("no child REPL: the model saw REPLNameError and gave up")


def ex_6_3(a: Mapping[str, Any]) -> Feedback:
    """``violations``: the steps (0-based) of the count-to-four trace where the invariant fails."""

    m = rp.machine()
    trace = run(m, rp.scripted_model())
    actual = [
        i
        for i, step in enumerate(trace)
        if not is_sentinel(step.outcome)
        and not rp.successor_invariant(step.prompt, m.prompt(step.outcome))
    ]
    given = sorted(a["violations"])
    for i in given:
        if i not in actual:
            _fail(
                f"step {i} keeps the invariant: "
                + (
                    rp.INVARIANT_TEXT
                    if i < len(trace)
                    else f"the trace has only {len(trace)} steps"
                )
            )
    missed = [i for i in actual if i not in given]
    if missed:  # how many, not which: naming them is the solution
        _fail(f"your list leaves out {counted(len(missed), 'step')} that break the invariant")
    return _right(
        f"the invariant holds at all {len(trace)} steps: main's only block ends the run after "
        "count_even(4) answers"
    )


def _spell_step(m: Any, state: Any, completion: Any, what: str) -> Any:
    if not isinstance(completion, str):
        _fail(f"{what} must be a completion string, got {_show(completion)}")
    return _call(f"h(state, {what})", m.harness, state, completion)


def ex_7_1(a: Mapping[str, Any]) -> Feedback:
    """``completion``: one turn whose trailing form calls ``ping`` twice; two ``!extend``
    turns after it must not fire it again."""

    env = ToolEnvironment({"ping": lambda: "pong"})
    m = SpellMachine(env, task="t")
    s = _spell_step(m, m.initial, a["completion"], "your completion")
    fired = env.calls.get("ping", 0)
    if fired != 2:
        _fail(f"your completion's turn calls ping {counted(fired, 'time')}, not 2")
    for turn in (2, 3):
        if is_sentinel(s):
            _fail(
                f"the session ended ({_show(s)}) before turn {turn}: the trailing form must start a turn"
            )
        s = _spell_step(m, s, " '(!extend)", "the !extend completion")
    if env.calls.get("ping", 0) != 2:
        _fail(
            f"after two !extend turns ping fired {env.calls['ping']} times: the earlier form "
            "fired again (materialise the results with !call-now)"
        )
    return _right("ping fired twice in your turn and never again: its results live in the source")


def ex_7_2(a: Mapping[str, Any]) -> Feedback:
    """``completion``: from the state after ``'(!extend)``, a trailing form with no ``!``
    call: the session halts and the old trailing form does not fire again."""

    env = ToolEnvironment({"ping": lambda: "pong"})
    m = SpellMachine(env, task="t")
    s = m.harness(m.initial, " '(!extend)")
    t = _spell_step(m, s, a["completion"], "your completion")
    if t is not HALT:
        _fail(
            f"your completion leads to {_show(t)}, not HALT: a trailing form with no ! call ends "
            "the session (and one with a ! call starts a turn)"
        )
    if env.calls:
        _fail(
            f"your completion called tools {dict(env.calls)}: the trailing form must have no ! call"
        )
    return _right("the session halts, and the earlier '(!extend) stayed inert")


def ex_7_3(a: Mapping[str, Any]) -> Feedback:
    """``completion``: one completion that takes the initial state straight to the state
    the scripted run reaches after one turn."""

    m = spell.machine()
    goal: Any = m.harness(spell.initial, spell.SCRIPT[0])  # a state (the scripted turn)
    got = _spell_step(m, spell.initial, a["completion"], "your completion")
    if got != goal:
        # the prompt cut where it leaves the goal's, by the one rule for prompts
        reached = (
            _show(got)
            if is_sentinel(got)
            else f"a state whose prompt is {clip_prompt_repr(m.prompt(got), 64, [m.prompt(goal)])}"
        )
        _fail(
            f"your completion leads to {reached}, not the state after one scripted turn; "
            "spell.loader(state) builds such a completion"
        )
    return _right("one completion loads the state the scripted run reaches after one turn")


EXERCISES: dict[str, Exercise] = {
    e.number: e
    for e in (
        Exercise(
            "1.1",
            "01_agentic_machines.md",
            "the toggle machine",
            ("toggle",),
            "a TableMachine",
            ex_1_1,
        ),
        Exercise(
            "1.2",
            "01_agentic_machines.md",
            "the guessing loop",
            ("guess",),
            "a generator function guess(secret)",
            ex_1_2,
        ),
        Exercise(
            "1.3",
            "01_agentic_machines.md",
            "outcomes of one step",
            ("at_most",),
            "a function k -> int",
            ex_1_3,
        ),
        Exercise(
            "2.1",
            "02_embeddings.md",
            "embeddings avoiding 'a'",
            ("mappings",),
            "a list of dicts",
            ex_2_1,
        ),
        Exercise(
            "2.2",
            "02_embeddings.md",
            "two does not embed",
            ("two", "embeds"),
            "a TableMachine and a bool",
            ex_2_2,
        ),
        Exercise("2.3", "02_embeddings.md", "composition", ("composed",), "an Embedding", ex_2_3),
        Exercise(
            "3.1",
            "03_completion_generation_and_spe.md",
            "SPE states of menu",
            ("spe",),
            "a list of states",
            ex_3_1,
        ),
        Exercise(
            "3.2",
            "03_completion_generation_and_spe.md",
            "f2-mul with flip",
            ("mul3", "spe"),
            "a TableMachine and a list of states",
            ex_3_2,
        ),
        Exercise(
            "3.3",
            "03_completion_generation_and_spe.md",
            "does (menu, s0) generate halt_c?",
            ("halt_c", "generates"),
            "a TableMachine and a bool",
            ex_3_3,
        ),
        Exercise(
            "4.1",
            "04_cek_evaluator.md",
            "a program asking color?",
            ("program",),
            "a string",
            ex_4_1,
        ),
        Exercise(
            "4.2",
            "04_cek_evaluator.md",
            "loaders from the seed",
            ("load_color", "load_seed"),
            "two strings",
            ex_4_2,
        ),
        Exercise(
            "4.3",
            "04_cek_evaluator.md",
            "diverge, and ask again",
            ("diverge", "again"),
            "two strings",
            ex_4_3,
        ),
        Exercise(
            "5.1",
            "05_architectures.md",
            "ReAct's invariant",
            ("invariant",),
            "a function (before, after) -> bool",
            ex_5_1,
        ),
        Exercise(
            "5.2",
            "05_architectures.md",
            "no successor reloads x0",
            ("same_prompt",),
            "a list of completions",
            ex_5_2,
        ),
        Exercise(
            "5.3",
            "05_architectures.md",
            "load a toy state from the seed",
            ("completion",),
            "a string",
            ex_5_3,
        ),
        Exercise(
            "6.1",
            "06_repl_plan_walkthrough.md",
            "count to six",
            ("model", "model_calls"),
            "a model and an int",
            ex_6_1,
        ),
        Exercise(
            "6.2",
            "06_repl_plan_walkthrough.md",
            "an undefined variable",
            ("model",),
            "a model",
            ex_6_2,
        ),
        Exercise(
            "6.3",
            "06_repl_plan_walkthrough.md",
            "the invariant at every step",
            ("violations",),
            "a list of step numbers",
            ex_6_3,
        ),
        Exercise(
            "7.1",
            "07_spell.md",
            "two tool calls, fired once",
            ("completion",),
            "a completion string",
            ex_7_1,
        ),
        Exercise(
            "7.2",
            "07_spell.md",
            "appending cancels a pending turn",
            ("completion",),
            "a completion string",
            ex_7_2,
        ),
        Exercise(
            "7.3",
            "07_spell.md",
            "load a state in one completion",
            ("completion",),
            "a completion string",
            ex_7_3,
        ),
    )
}
"""Exercise number -> :class:`Exercise`, in the order of the tutorial."""


def exercise(number: str) -> Exercise:
    """The exercise numbered ``number`` (``"2.1"``); a clear error for an unknown one.

    >>> exercise("4.3").names
    ('diverge', 'again')
    >>> exercise("9.9")
    Traceback (most recent call last):
      ...
    agentic_machines.errors.InvalidArgument: no exercise 9.9; the exercises are 1.1, 1.2, 1.3, 2.1, 2.2, 2.3, 3.1, 3.2, 3.3, 4.1, 4.2, 4.3, 5.1, 5.2, 5.3, 6.1, 6.2, 6.3, 7.1, 7.2, 7.3
    """
    found = EXERCISES.get(str(number).strip())
    if found is None:
        raise InvalidArgument(f"no exercise {number}; the exercises are {', '.join(EXERCISES)}")
    return found


def check(number: str, answer: Mapping[str, Any]) -> Feedback:
    """Check ``answer`` (names -> values) against exercise ``number``.

    >>> print(check("4.3", {"diverge": "(letrec ((f (lambda () (f)))) (f))", "again": '(llm "again")'}))
    right: one completion diverges, the other asks again
    >>> print(check("4.3", {"diverge": '"done"'}))
    wrong: exercise 4.3 wants again (two strings); your answer does not define it
    """
    ex = exercise(number)
    missing = [n for n in ex.names if n not in answer]
    if missing:
        what = " and ".join(missing)
        return Feedback(
            False,
            f"exercise {ex.number} wants {what} ({ex.wants}); your answer does not define "
            + ("it" if len(missing) == 1 else "them"),
        )
    try:
        return ex.checker(answer)
    except _Wrong as wrong:
        return Feedback(False, str(wrong))
    except Exception as exc:  # noqa: BLE001 - an answer that makes the toolkit raise is wrong
        return Feedback(False, f"checking your answer raised {type(exc).__name__}: {exc}")


MAX_ANSWER_BYTES = 10 * 1024 * 1024
"""The largest answer file :func:`load_answer` reads or runs (10 MiB)."""


def load_answer(path: str | Path) -> dict[str, Any]:
    """Read an answer file: a ``.py`` file is run (its top-level names are the answer), a
    ``.json`` file holds an object of names.

    Only a regular file of at most :data:`MAX_ANSWER_BYTES` is read or run: a directory,
    a FIFO or a device is refused at once.

    >>> import json, tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "a.json"; _ = p.write_text(json.dumps({"spe": []}))
    >>> load_answer(p)
    {'spe': []}
    """

    path = Path(path)

    def error(problem: str) -> InvalidArgument:
        return InvalidArgument(f"{path}: {problem}")

    if path.suffix == ".json":
        data = read_regular(path, limit=MAX_ANSWER_BYTES, what="JSON answer", error=error)
        try:
            data = json.loads(data.decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise error(f"byte {exc.start} is not UTF-8; save the file as UTF-8") from None
        except json.JSONDecodeError as exc:
            raise error(
                f"line {exc.lineno}, column {exc.colno}: not valid JSON ({exc.msg}); fix it there"
            ) from None
        except RecursionError:
            raise error("JSON nested too deeply to read") from None
        except ValueError as exc:  # JSON's limit on the digits of an integer
            raise error(f"not valid JSON ({exc})") from None
        if not isinstance(data, dict):
            raise InvalidArgument(f'{path} should hold a JSON object of names, e.g. {{"spe": []}}')
        return data
    if path.suffix != ".py":
        raise InvalidArgument(f"answer files are .py (Python) or .json, not {path.name!r}")
    if not path.exists() and not path.is_symlink():
        raise InvalidArgument(f"no answer file {path}")
    # runpy opens the file itself: check it is a regular file first, so a FIFO cannot block.
    check_regular(path, limit=MAX_ANSWER_BYTES, what="Python answer", error=error)
    try:
        names = runpy.run_path(str(path), run_name="exercise_answer")
    except Exception as exc:  # noqa: BLE001 - the student's file may raise anything
        raise InvalidArgument(f"running {path} raised {type(exc).__name__}: {exc}") from None
    return {k: v for k, v in names.items() if not k.startswith("__")}


def check_file(number: str, path: str | Path) -> Feedback:
    """:func:`check` on the answer in a file (see :func:`load_answer`)."""
    exercise(number)  # an unknown number is refused before the file runs
    return check(number, load_answer(path))
