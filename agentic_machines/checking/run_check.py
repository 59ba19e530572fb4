"""The properties on one run: checked step by step, and a certificate re-checked.

:class:`RunCheck` follows one run of a machine, a completion at a time, and raises
:class:`PropertyViolation` as soon as the run so far breaks a property: the Hypothesis
runs of :mod:`~agentic_machines.checking.stateful` are made of it. :func:`confirm` uses
the same per-run check to re-check a counterexample before a check returns it: it
replays the run on the machine, compares every outcome with the recorded one, and checks
that the replayed run breaks the property. A counterexample that does not re-check is
never returned: that is a :class:`~agentic_machines.errors.CertificateError` naming the
property (an internal error, or a harness that is not a function).

>>> from agentic_machines import FunctionMachine, HALT
>>> from agentic_machines.checking import check_properties, never_raises
>>> def h(n, c):
...     if c == "boom":
...         raise KeyError(n)
...     return HALT if n == 3 else n + 1
>>> m = FunctionMachine(lambda n: f"at {n}", h, initial=0, name="fragile")
>>> result = check_properties(m, properties=[never_raises()], completions=["go", "boom"])
>>> r = result["never_raises()"]
>>> confirm(m, r) is r  # the counterexample replays and breaks the property again
True
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any

from .._outcome import is_end
from .._text import clip, clip_prompt_repr, counted, one_line
from ..errors import CertificateError, PropertyViolation, Undecided, equal_states
from ..machine import DIVERGE, AgenticMachine
from ..runtime.search import UndecidedStep, expand, same_state
from ..verdict import short_repr
from .keyed import key_of, keyed_loop, loop_starts
from .properties import (
    EffectsAtMostOnce,
    HaltsWithin,
    Invariant,
    NeverDiverges,
    NeverRaises,
    Property,
    Raised,
    Transition,
)
from .result import Counterexample, PropertyResult

__all__ = ["RunCheck", "PropertyViolation", "confirm", "recheck", "new_log"]


EXACT_ROUNDS = 10**6
"""How far a re-check of an exact keyed verdict follows a loop: the search decided it on a
whole finite graph, so the loop repeats exactly or ends within as many rounds as the graph
has states; this bound only stops a wrong verdict from being followed for ever."""


class RunCheck:
    """One run of the machine, checked step by step: :meth:`step` feeds it a completion
    and raises :class:`PropertyViolation` when the run so far breaks a property."""

    def __init__(
        self,
        machine: AgenticMachine,
        start: Any,
        parts: list[Property],
        log: dict,
        offered: Callable[[str], Iterable[str]] | None = None,
        exact: int | None = None,
        rounds: int | None = None,
        again: bool = False,
    ) -> None:
        self.machine, self.parts, self.log = machine, parts, log
        # a re-check: a keyed loop's steps run again (the log's memo gives only their keys)
        self.again = again
        # how many rounds a keyed loop is followed (a search's max_states: its verdict
        # re-checks with the rounds it was found with; KEYED_ROUNDS when None)
        self.rounds = EXACT_ROUNDS if exact is not None else rounds
        # re-checking an exact verdict's counterexample of ``exact`` steps: a keyed loop
        # breaks the property only at its end, followed to an exact repeat (as far as that
        # takes), never on the key's word (the search decides the loop it reports exactly,
        # not every keyed loop a run passes: one earlier may go round for ever too)
        self.exact = exact
        # the completions offered per prompt, when known: a keyed loop is followed only
        # through completions the machine is really asked for (as the search does)
        self.offered = None if offered is None else (lambda x: list(offered(machine.prompt(x))))
        self.logs = [p.log(machine) for p in parts if isinstance(p, EffectsAtMostOnce)]
        self.effect_parts = [p for p in parts if isinstance(p, EffectsAtMostOnce)]
        self.done: list[dict] = [{} for _ in self.logs]  # per log: request -> executions
        self.states: list[Any] = [start]
        self.prompts: list[str] = [machine.prompt(start)]
        self.completions: list[str] = []
        self.ended = False
        self.seen = {start: 0}
        # per never_diverges(key=...): the key of each state of the run, in order, and
        # each key -> the steps whose state has it
        self.run_keys: dict[NeverDiverges, list[Any]] = {}
        self.keyed: dict[NeverDiverges, dict[Any, list[int]]] = {}
        for p in parts:
            if isinstance(p, NeverDiverges) and p.key is not None:
                key = self._keyed(p, start)
                self.run_keys[p], self.keyed[p] = [key], {key: [0]}
        log["states"].add(start)
        log["prompts"].add(self.prompts[0])
        self._state_checks(start, self.prompts[0])

    def step(self, c: str) -> None:
        if self.ended:
            return  # the run is over; Hypothesis shrinks such steps away
        s = self.states[-1]
        step = next(expand(self.machine, [(s, [c])], known=(), logs=self.logs, catch=True))
        t = step.outcomes[0]
        prompt = step.prompts[0] if step.prompts else None
        executed = step.executed[0] if step.executed else ()
        self.log["transitions"] += 1
        self.completions.append(c)
        self.states.append(t)
        if type(t) is UndecidedStep:
            self.ended = True
            self.log["unknown"] += 1
            self.log["unknown_reason"] = self.log["unknown_reason"] or t.reason
            return
        ended = is_end(t)
        prompt = "" if ended else prompt if prompt is not None else self.machine.prompt(t)
        if not ended:
            self.prompts.append(prompt)
            self.log["states"].add(t)
            self.log["prompts"].add(prompt)
            self.log["edges"].add((s, t))
        self.log["depth"] = max(self.log["depth"], len(self.completions))
        for p in self.parts:
            if isinstance(p, Transition):
                self._verify(
                    p,
                    p.fn,
                    (s, c, t),
                    f"{self._name(p)} is false of the step {short_repr(s, 40, [t])} --{short_repr(c)}--> "
                    f"{short_repr(t, 40, [s])}",
                )
            elif isinstance(p, NeverRaises) and type(t) is Raised:
                self._fail(p, f"the harness raised {t.type}: {clip(one_line(t.message), 200)}")
            elif isinstance(p, HaltsWithin):
                if t is DIVERGE and len(self.completions) <= p.k:
                    self._fail(
                        p,
                        f"the harness returned DIVERGE (↑) after "
                        f"{counted(len(self.completions), 'model call')}",
                    )
                if not ended and len(self.completions) == p.k:
                    self._fail(p, f"after {p.k} model calls the run has not halted")
            elif isinstance(p, NeverDiverges):
                if t is DIVERGE:
                    self._fail(p, "the harness returned DIVERGE (↑): it never returns to the model")
                elif not ended and t in self.seen:
                    at = self.seen[t]
                    self._fail(
                        p,
                        f"the run is back in {short_repr(t)}, where step {at} started: repeating "
                        "the loop never ends",
                        loop=at,
                    )
                elif not ended and p.key is not None:
                    key, seen, run_keys = self._keyed(p, t), self.keyed[p], self.run_keys[p]
                    run_keys.append(key)
                    # an exact re-check follows a keyed loop only where its run ends
                    check = self.exact in (None, len(self.completions))
                    starts = list(reversed(seen.get(key, ()))) if check else []
                    for at in loop_starts(self.completions, run_keys, starts):  # nearest first
                        keys = run_keys[at + 1 :]
                        follow = keyed_loop(
                            self.machine,
                            p,
                            t,
                            self.completions[at:],
                            keys,
                            self.rounds,
                            self.offered,
                            self.log["followed"].setdefault(p, {}),
                            again=self.again,
                        )
                        if follow is None or follow.kind == "unknown":
                            continue
                        if follow.kind == "forever" or self.exact is None:
                            self._fail(
                                p,
                                f"the run is in {short_repr(t)}, whose key {short_repr(key)} is the "
                                f"key of the state at step {at}, and {follow.why}",
                                loop=at,
                                by_key=follow.kind == "open",
                            )
                    seen.setdefault(key, []).append(len(self.completions))
        for p, done, new in zip(self.effect_parts, self.done, executed):
            twice = None
            for request in new:
                key = repr(request)
                done[key] = done.get(key, 0) + 1
                if done[key] > 1 and twice is None:
                    twice = (request, key)
            if twice is not None:
                request, key = twice
                self._fail(
                    p,
                    f"{p.tool_name} ran {done[key]}× for request "
                    f"{request if type(request) is str else short_repr(request)} in step "
                    f"{len(self.completions) - 1}",
                )
        if ended:
            self.ended = True
        else:
            self.seen.setdefault(t, len(self.completions))
            self._state_checks(t, prompt)

    def _state_checks(self, state: Any, prompt: str) -> None:
        # state and prompt cut where they differ from the step before's, as the search does
        near, before = self.states[-2:-1], self.prompts[-2:-1]
        for p in self.parts:
            if isinstance(p, Invariant):
                self._verify(
                    p,
                    p.fn,
                    (state, prompt),
                    f"{self._name(p)} is false in state {short_repr(state, 40, near)} (prompt of "
                    f"{len(prompt):,} characters: {clip_prompt_repr(prompt, 60, before)})",
                )
            elif isinstance(p, HaltsWithin) and p.k == 0 and not self.completions:
                self._fail(p, "after 0 model calls the run has not halted")

    def _name(self, p: Property) -> str:
        """The name ``p`` is reported under (``log["names"]``, when the caller set it)."""
        return str(self.log.get("names", {}).get(p, p.name))

    def _keyed(self, p: NeverDiverges, state: Any) -> Any:
        try:
            return key_of(p, state)
        except Exception as exc:  # noqa: BLE001 - a broken key is reported as failing, as check does
            self._fail(p, f"the key of {self._name(p)} raised {type(exc).__name__}: {exc}")

    def _verify(self, p: Property, fn: Callable[..., bool], args: tuple, why: str) -> None:
        try:
            ok = fn(*args)
        except Exception as exc:  # noqa: BLE001 - a broken property is reported as failing
            ok, why = False, f"the property raised {type(exc).__name__}: {exc}"
        if not ok:
            self._fail(p, why)

    def _fail(self, p: Property, why: str, loop: int | None = None, by_key: bool = False) -> None:
        """Record and raise the failure; ``by_key``: it rests on a key's claim (a keyed loop
        followed without an exact repeat), which the verdict's method then says."""
        cx = Counterexample(
            p.name,
            tuple(self.completions),
            tuple(self.states),
            tuple(self.prompts),
            why,
            loop,
            getattr(self.machine, "name", "machine"),
            getattr(self.machine, "initial", None),
        )
        self.log["failures"].append(cx)
        if by_key:
            self.log["by_key"].append(cx)
        raise PropertyViolation(
            f"{self._name(p)} failed after {counted(len(cx), 'step')}: {why}\n{cx.describe()}\n{cx.snippet()}",
            cx,
        )


def recheck(
    machine: AgenticMachine,
    prop: Property,
    start: Any,
    completions: Sequence[str],
    loop: int | None = None,
    rounds: int | None = None,
) -> str | None:
    """Run ``completions`` from ``start`` on ``machine`` as it is now and check ``prop``
    on that run: why the run still breaks it, or ``None`` when it no longer does (what
    ``run --replay`` of a saved counterexample says). The outcomes need not be the
    recorded ones: the machine may have changed. A run that comes back to the state where
    step ``loop`` started breaks ``halts_within`` too (a lasso never halts). A keyed loop
    is followed ``rounds`` rounds (the search's, which the file records).

    >>> from agentic_machines import FunctionMachine, HALT
    >>> from agentic_machines.checking import never_raises
    >>> def h(n, c):
    ...     return 1 // 0 if c == "boom" else HALT
    >>> m = FunctionMachine(lambda n: "?", h, initial=0)
    >>> recheck(m, never_raises(), 0, ["boom"])
    'the harness raised ZeroDivisionError: integer division or modulo by zero'
    >>> recheck(m, never_raises(), 0, ["fine"]) is None
    True
    """
    parts = list(dict.fromkeys(prop.parts))
    try:
        run = RunCheck(machine, start, parts, new_log(), rounds=rounds)
        for c in completions:
            run.step(c)
            if run.ended:
                break
    except PropertyViolation as exc:
        return exc.counterexample.explanation
    end = run.states[-1]
    if type(end) is UndecidedStep:
        raise Undecided(end.reason)
    n = len(run.completions)
    back = (
        loop is not None and 0 <= loop < n and not is_end(end) and same_state(end, run.states[loop])
    )
    if back and any(isinstance(q, (HaltsWithin, NeverDiverges)) for q in parts):
        return f"after step {n - 1} the run is back where step {loop} started: it never halts"
    return None


def new_log(tick: Callable[[], None] | None = None) -> dict[str, Any]:
    """A fresh log of what runs saw (states, prompts, edges, counts, failures);
    ``tick`` is called as each Hypothesis run starts.

    >>> sorted(new_log())[:4]
    ['by_key', 'depth', 'edges', 'failures']
    """
    return {
        "tick": tick,
        "states": set(),
        "prompts": set(),
        "edges": set(),
        "transitions": 0,
        "unknown": 0,
        "unknown_reason": "",  # the first undecided step's (a deadline's, fuel's)
        "depth": 0,
        "runs": 0,
        "failures": [],
        "by_key": [],  # the failures that rest on a key's claim (keyed_loop's "open")
        # per keyed never_diverges: the steps its loops were followed through, and their
        # keys (keyed_loop's memo): the runs of one test share it, and a re-check reads
        # the keys of the steps it takes again from the search's
        "followed": {},
    }


def confirm(
    machine: AgenticMachine,
    result: PropertyResult,
    offered: Callable[[str], Iterable[str]] | None = None,
    rounds: int | None = None,
    followed: dict | None = None,
) -> PropertyResult:
    """``result`` itself once its counterexample (if any) is re-checked on ``machine``.

    The counterexample's completions are replayed from its start: every outcome must be
    the recorded one, every completion one that ``offered(prompt)`` offers (when given:
    the alphabet the verdict is about), and the replayed run must break the property at
    its last step (a lasso must come back to ``states[loop]``; a run left stuck must be
    one where ``offered`` offers nothing). A tool's double execution
    (``effects_at_most_once``) is an event, not a value of h: when the replay does not
    repeat it (the machine serves the replayed steps without running the tool again) the
    run is still re-checked outcome by outcome, and the verdict's reason says that the
    executions are the ones the search saw. A replay that meets a step whose outcome is
    unknown (the harness raised ``Undecided``: a clock, fuel) makes the verdict
    undecided, with the reason. Anything else that does not re-check raises
    :class:`~agentic_machines.errors.CertificateError` naming the property. A refutation
    by a key (method ``"key"``) re-checks its loop ``rounds`` rounds, the rounds the
    search followed it (its ``max_states``; :data:`~.keyed.KEYED_ROUNDS` when ``None``).
    Every step of the loop runs again; ``followed`` (the search's memo per keyed
    property) gives the key of a step that comes out the same (an agent's prompt is not
    asked again).

    >>> from agentic_machines import TableMachine, HALT, Verdict
    >>> from agentic_machines.checking import halts_within
    >>> m = TableMachine({0: "?", 1: "?"}, {(0, "a"): 1, (1, "a"): HALT}, initial=0)
    >>> good = Counterexample("halts_within(1)", ("a",), (0, 1), ("?", "?"), "not halted")
    >>> r = PropertyResult(halts_within(1), Verdict(False, "c", "exhaustive", 1), good)
    >>> confirm(m, r) is r
    True
    >>> bad = Counterexample("halts_within(1)", ("a",), (0, HALT), ("?",), "wrong")
    >>> confirm(m, replace(r, counterexample=bad))
    Traceback (most recent call last):
      ...
    agentic_machines.errors.CertificateError: internal error: the counterexample to halts_within(1) did not re-check: step 1 ('a' in 0) gives 1 on replay, but the counterexample records HALT (1). ...
    """
    cx = result.counterexample
    if cx is None:
        return result
    prop = result.property
    try:
        exact = result.verdict.method != "key"
        problem = _replay_breaks(machine, prop, cx, offered, exact, rounds, followed)
    except Undecided as exc:
        verdict = replace(
            result.verdict,
            holds=None,
            reason=f"a counterexample was found, but its replay met a step whose outcome is unknown: {exc}",
            details={k: v for k, v in result.verdict.details.items() if k != "counterexample"},
        )
        return replace(result, verdict=verdict, counterexample=None)
    if problem is EFFECTS_SEEN:
        verdict = replace(result.verdict, reason=f"{result.verdict.reason} ({problem})")
        return replace(result, verdict=verdict)
    if problem:
        raise CertificateError(result.name, problem)
    return result


def _replay_breaks(
    machine: AgenticMachine,
    prop: Property,
    cx: Counterexample,
    offered: Callable[[str], Iterable[str]] | None,
    exact: bool,
    rounds: int | None,
    followed: dict | None = None,
) -> str:
    """Replay ``cx`` and check ``prop`` on it: "" when it re-checks, else what is wrong
    (``exact``: the verdict is exact, so a keyed loop must be followed to a real repeat;
    else one is followed ``rounds`` rounds, as the search that found it did)."""
    parts = list(dict.fromkeys(prop.parts))
    n = len(cx.completions)
    try:
        log = new_log()
        log["followed"] = {} if followed is None else followed
        run = RunCheck(
            machine, cx.start, parts, log, offered, n if exact else None, rounds, again=True
        )
    except PropertyViolation:
        return (
            ""
            if n == 0
            else "the start state already breaks it (the run is not the first violation)"
        )
    for i, c in enumerate(cx.completions):
        if offered is not None and c not in list(offered(run.prompts[-1])):
            return f"step {i + 1} takes {c!r}, which the alphabet does not offer at that prompt"
        try:
            run.step(c)
        except PropertyViolation:
            mismatch = _mismatch(run, cx, i)
            if mismatch:
                return mismatch
            if i < n - 1:
                return f"the replayed run breaks it after {counted(i + 1, 'step')}, before its last step"
            return ""
        if type(run.states[-1]) is UndecidedStep:
            raise Undecided(run.states[-1].reason)
        mismatch = _mismatch(run, cx, i)
        if mismatch:
            return mismatch
        if run.ended and i < n - 1:
            return f"the replayed run ended after {counted(i + 1, 'step')}, with {short_repr(run.states[-1])}"
    # Breaks that one run's steps cannot show: a lasso of halts_within, a stuck run.
    end = run.states[-1]
    for q in parts:
        if not isinstance(q, HaltsWithin) or is_end(end) or n > q.k:
            continue
        if cx.loop is not None and 0 <= cx.loop < n and same_state(end, run.states[cx.loop]):
            return ""  # back where step `loop` started: the run never halts
        if offered is not None and not list(offered(run.prompts[-1])):
            return ""  # stuck: no completion offered, and the run has not halted
    if any(isinstance(q, EffectsAtMostOnce) for q in parts):
        # A tool's executions are events of the world, not values of h: a machine that
        # keeps its steps (a cache of live runs, an effect journal) replays them without
        # running the tool again, so the double execution the search saw need not recur.
        return EFFECTS_SEEN
    return f"the replayed run of {counted(n, 'step')} ends in {short_repr(end)} and breaks nothing"


EFFECTS_SEEN = (
    "its run replays with every recorded outcome; the double execution was seen while the "
    "search made those steps, and the replay (which the machine may serve without running "
    "the tool again) did not repeat it"
)
"""What an ``effects_at_most_once`` verdict says when the replay could not show the double
execution again: the run itself is re-checked, the executions are what the search saw."""


def _mismatch(run: RunCheck, cx: Counterexample, i: int) -> str:
    got, want = run.states[i + 1], cx.states[i + 1] if i + 1 < len(cx.states) else None
    if got == want and not same_state(got, want):
        # 1 == True: one state to the search's tables, two to a harness that tells them
        # apart. The machine breaks what a state is, so this is its error, not ours.
        raise equal_states(cx.machine or "the machine", want, got, f"step {i + 1} of the replay")
    if got == want and (got is DIVERGE) == (want is DIVERGE):
        return ""
    return (
        f"step {i + 1} ({short_repr(cx.completions[i])} in {short_repr(run.states[i])}) gives "
        f"{short_repr(got, 40, [want])} on replay, but the counterexample records "
        f"{short_repr(want, 40, [got])}"
    )
