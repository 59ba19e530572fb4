"""An agent checked as a test: :func:`check_agent` and its failure report.

The pytest plugin (:mod:`agentic_machines.pytest_plugin`) calls :func:`check_agent`: it
replays the test's saved failing runs first (:mod:`~agentic_machines.checking.database`),
then checks the properties, exhaustively to a bound or on sampled runs, and saves a new
failing run. :func:`failure_report` is what a failing test prints: the property and its
verdict, the counterexample as a numbered table of prompts (each shown from where it
differs from the step before) and completions, each step's effects (an agent machine's
:func:`~agentic_machines.effect` calls), how the run ended, and the commands that replay
it. An undecided property fails the test too, with the reason: a test passes only on
properties that hold.

>>> from agentic_machines import agent_machine
>>> from agentic_machines.checking import never_raises
>>> def picky(model):
...     if model("Say yes.") != "yes":
...         raise ValueError("not yes")
>>> out = check_agent(agent_machine(picky), [never_raises()], Settings(depth=2),
...                   completions=["yes", "no"])
>>> print(out.failure.splitlines()[0])
never_raises() is refuted on 'picky' (exhaustive, the whole reachable graph (1 state))
"""

from __future__ import annotations

import inspect
import os
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._text import clip, clip_prompt_repr, counted, echoes, one_line
from ..errors import AgenticMachinesError, PropertyViolation
from ..machine import AgenticMachine
from ..runtime.agent import DEFAULT_LINE_BUDGET, AgentMachine, agent_machine
from ..runtime.harness import TraceState
from ..runtime.tracefile import prompt_gain
from ..verdict import short_repr
from .check import check_properties
from .database import ExampleDatabase
from .properties import Property, Raised, flatten
from .result import CheckResult, Counterexample
from .run_check import RunCheck, new_log

__all__ = ["Settings", "Outcome", "check_agent", "failure_report", "as_machine"]


@dataclass(frozen=True)
class Settings:
    """The bounds of one check: ``depth`` and ``max_states`` (exhaustive), ``hypothesis``
    (that many sampled runs instead, with ``seed``), ``line_budget`` (an agent function's),
    ``stop_early`` (``False``: search the whole graph even once every property has its
    answer; a keyed loop is followed ``max_states`` rounds either way)."""

    depth: int | None = 6
    max_states: int | None = 2_000
    line_budget: int | None = DEFAULT_LINE_BUDGET
    seed: int | None = None
    hypothesis: int | None = None
    stop_early: bool = True


@dataclass(frozen=True)
class Outcome:
    """What :func:`check_agent` found: the result, and the report when the test fails."""

    result: CheckResult | None
    failure: str | None


def as_machine(agent: Any, line_budget: int | None = DEFAULT_LINE_BUDGET) -> AgenticMachine:
    """The machine of ``agent``: a machine as it is, an agent function through
    :func:`~agentic_machines.agent_machine`.

    >>> as_machine(lambda model: model("hi?")).prompt(TraceState())
    'hi?'
    """
    if isinstance(agent, AgenticMachine):
        return agent
    if callable(agent):
        return agent_machine(agent, line_budget=line_budget)
    raise AgenticMachinesError(
        f"cannot check {type(agent).__name__} {short_repr(agent)}: give an agent function "
        "fn(model), an AgenticMachine, or a framework's agent with input=... (LangGraph, "
        "Pydantic AI, OpenAI Agents SDK)"
    )


def check_agent(
    agent: Any,
    properties: list[Property],
    settings: Settings,
    *,
    completions: Any = None,
    start: Any = None,
    database: str | os.PathLike | None = None,
    test_id: str = "test",
    target: str | None = None,
    rootdir: str | os.PathLike | None = None,
) -> Outcome:
    """Check ``properties`` of ``agent``: saved failing runs first, then the search.

    ``database`` is the folder of saved runs (``None``: none kept); ``target`` the
    command-line target the replay command names (default: an agent function's own
    ``file.py:name``).
    """
    props = flatten(properties)
    if not props:
        raise AgenticMachinesError(
            "check(agent, ...) needs at least one property, e.g. never_raises(), halts_within(8)"
        )
    machine = as_machine(agent, settings.line_budget)
    start = machine.initial if start is None else start
    target = target or _target_of(agent, rootdir)
    db = ExampleDatabase(database) if database is not None else None
    for _prop, saved in db.load(test_id) if db is not None else []:
        cx, by_key = _replay(machine, start, props, saved, settings.max_states)
        if cx is not None:
            method = "key" if by_key else None
            found = "the saved failing run, tried first"
            return Outcome(None, _failure(machine, cx, db, test_id, target, method, found))
        db.delete(test_id, saved)  # type: ignore[union-attr]  # it no longer fails
    result = _search(machine, start, props, settings, completions)
    if result:
        return Outcome(result, None)
    cxs = [cx for cx in result.counterexamples.values() if cx is not None]
    if not cxs:
        return Outcome(result, _undecided(result))
    cx = min(cxs, key=len)
    # how this refutation is known: a keyed loop's may rest on its key, not the search
    method = next(r.verdict.method for r in result.results if r.counterexample is cx)
    method = method if method == "key" else result.method
    text = _failure(machine, cx, db, test_id, target, method, result.bound, result)
    return Outcome(result, text)


def _how(method: str | None, found: str) -> str:
    """How a failure is known, for its heading: the method (a keyed loop's refutation
    rests on its key, which the heading must say whether searched or replayed), then
    where it was found."""
    note = "by the key, not exhaustive" if method == "key" else method
    return f"{note}, {found}" if note else found


def _search(
    machine: AgenticMachine, start: Any, props: list[Property], settings: Settings, completions: Any
) -> CheckResult:
    if settings.hypothesis:
        from .adversarial import adversarial_completions  # Hypothesis only when asked for
        from .stateful import SAMPLED_ROUNDS, hypothesis_check  # as above

        valid = list(completions or getattr(machine, "completions", None) or [])
        return hypothesis_check(
            machine,
            start,
            props,
            completions=adversarial_completions(machine, valid),
            max_examples=settings.hypothesis,
            max_steps=settings.depth or 20,
            seed=settings.seed,
            progress=False,
            keyed_rounds=settings.max_states or SAMPLED_ROUNDS,
        )
    return check_properties(
        machine,
        start,
        props,
        completions=completions,
        max_depth=settings.depth,
        max_states=settings.max_states,
        progress=False,
        stop_early=settings.stop_early,
    )


def _replay(
    machine: AgenticMachine,
    start: Any,
    props: list[Property],
    completions: tuple[str, ...],
    rounds: int | None,
) -> tuple[Counterexample | None, bool]:
    """The counterexample a saved run still is (None when it no longer fails), and
    whether it rests on a key (a keyed loop followed ``rounds`` rounds, as the search
    does, without an exact repeat)."""
    log = new_log()
    try:
        run = RunCheck(machine, start, props, log, rounds=rounds)
        for c in completions:
            run.step(c)
    except PropertyViolation as exc:
        return exc.counterexample, bool(log["by_key"])
    except AgenticMachinesError:
        return None, False  # the machine changed so that the run is no run of it: search again
    return None, False


def _target_of(agent: Any, rootdir: Any) -> str | None:
    """``file.py:name`` of a module-level agent function (what ``run --replay`` needs)."""
    name = getattr(agent, "__qualname__", "")
    if isinstance(agent, AgenticMachine) or not name or "<" in name:
        return None
    try:
        path = Path(inspect.getsourcefile(agent) or "")
    except TypeError:
        return None
    if not path.is_file():
        return None
    try:
        shown = os.path.relpath(path, rootdir or os.getcwd())
    except ValueError:
        shown = str(path)
    return f"{shown}:{name}"


def _failure(
    machine: AgenticMachine,
    cx: Counterexample,
    db: ExampleDatabase | None,
    test_id: str,
    target: str | None,
    method: str | None,
    found: str,
    result: CheckResult | None = None,
) -> str:
    """The failing test's report; its heading says how the failure is known (``method``,
    ``None`` for a replayed run) and where it was found, in the search or replayed."""
    trace = None
    if db is not None:
        db.save(test_id, cx.property, cx.completions)
        trace = db.trace_path(test_id, cx.completions)
        trace.parent.mkdir(parents=True, exist_ok=True)
        cx.save(trace)
        try:  # shown relative to where pytest runs, when it is below it
            trace = trace.relative_to(Path.cwd())
        except ValueError:
            pass
    text = failure_report(machine, cx, _how(method, found))
    lines = [text, ""]
    if method == "key":
        lines.append(
            "by the key: the loop was followed as many rounds as the search records states; a "
            "larger bound (--agentic-max-states, or @pytest.mark.agentic(max_states=...)) "
            "follows it further"
        )
    if trace is not None and target is not None:
        lines.append(
            f"replay: agentic-machines run {shlex.quote(target)} --replay {shlex.quote(str(trace))}"
        )
    elif trace is not None:
        lines.append(
            f"replay: agentic-machines run TARGET --replay {shlex.quote(str(trace))} "
            "(TARGET: the file.py:name or 'file.py:factory()' of this machine)"
        )
    lines.append(f"rerun:  pytest {shlex.quote(test_id)} (tries this run first)")
    if result is not None:
        others = [r for r in result.results if r.name != cx.property]
        for r in others:
            mark = {True: "PASS", False: "FAIL", None: "UNDECIDED"}[r.verdict.holds]
            lines.append(f"{mark} {r.name}: {one_line(str(r.verdict))}")
    return "\n".join(lines)


def failure_report(machine: AgenticMachine, cx: Counterexample, how: str, width: int = 100) -> str:
    """The counterexample ``cx`` as a failing test shows it (``how``: how it was found).

    >>> from agentic_machines import agent_machine
    >>> m = agent_machine(lambda model: model("Say yes.") + model("Again."))
    >>> cx = Counterexample("p", ("a",), (TraceState(), TraceState(("a",))), ("Say yes.",), "why")
    >>> print(failure_report(m, cx, "exhaustive"))
    p is refuted on '<lambda>' (exhaustive)
    why
    counterexample (1 step):
      #  prompt (…(+N): the first N characters as the step before)  completion
      1  'Say yes.'                                      'a'
         -> TraceState('a')
    """
    lines = [f"{cx.property} is refuted on {machine.name!r} ({how})", one_line(cx.explanation)]
    kind = f", a lasso: the loop starts at step {cx.loop + 1}" if cx.loop is not None else ""
    lines.append(f"counterexample ({counted(len(cx), 'step')}{kind}):")
    col = max(24, (width - 8) // 2)
    lines.append(
        f"  #  {'prompt (…(+N): the first N characters as the step before)':<{col}}  completion"
    )
    log = machine.effect_log() if isinstance(machine, AgentMachine) else []
    previous: str | None = None
    for i, c in enumerate(cx.completions):
        prompt = cx.prompts[i] if i < len(cx.prompts) else ""
        kept, added = prompt_gain(previous, prompt)
        head = "" if not kept else f"…(+{kept}) "
        # the one cut for prompts: past the answer repeated, where the harness's text starts
        echo = echoes(cx.completions[i - 1]) if i else ()
        shown = head + clip_prompt_repr(added, max(col - len(head), 10), echo)
        lines.append(f"  {i + 1:<2} {shown:<{col}}  {clip(repr(c), col)}")
        for tool, args, ok in _effects(log, cx.states[i], c):
            lines.append(f"     effect {tool}{clip(args, col)}{'' if ok else ' (raised)'}")
        previous = prompt
    end = cx.end
    if isinstance(end, Raised):
        lines.append(f"     -> raised {end.type}: {clip(one_line(end.message), width)}")
    else:
        lines.append(f"     -> {short_repr(end, width)}")
        if isinstance(machine, AgentMachine) and cx.completions and not isinstance(end, TraceState):
            ended = machine.result(cx.states[-2], cx.completions[-1])
            lines.append(f"     (the agent's result: {short_repr(ended, width)})")
    return "\n".join(lines)


def _effects(log: list, state: Any, completion: str) -> list[tuple[str, str, bool]]:
    """The effect calls the step ``h(state, completion)`` really ran."""
    if not isinstance(state, TraceState) or not log:
        return []
    after = state.then(completion)
    return [(tool, args, ok) for at, tool, args, ok in log if at == after]


def _undecided(result: CheckResult) -> str:
    lines = [f"undecided on {result.machine!r} ({result.method}, {result.bound}):"]
    for r in result.results:
        mark = {True: "PASS", False: "FAIL", None: "UNDECIDED"}[r.verdict.holds]
        lines.append(f"{mark} {r.name}: {one_line(str(r.verdict))}")
    lines.append("a test passes only when every property holds: raise the bounds or fix the cause")
    return "\n".join(lines)
