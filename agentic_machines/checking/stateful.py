"""Hypothesis-driven checking, for alphabets too large to enumerate.

:func:`hypothesis_test` returns a ``hypothesis.stateful.RuleBasedStateMachine``
subclass whose one rule feeds the machine a generated completion; after every step it
checks the properties on the run so far. Hypothesis generates many runs, and when one
breaks a property it shrinks it: fewer steps, simpler completions. The failure
message is the minimal run as a runnable snippet. :func:`hypothesis_check` runs that
test once per property and returns a
:class:`~agentic_machines.checking.result.CheckResult` (``"sampled"``: a property that
no run broke is not proved, and the verdict says so).

On one run the properties read: an invariant holds in every state of the run, a
transition property of every step; ``never_raises`` fails on a step whose harness
raised; ``halts_within(k)`` fails when the run diverges or makes ``k`` calls without
halting; ``never_diverges`` fails on ``DIVERGE`` or when the run comes back to a state
it was in (the model can repeat that loop for ever: a lasso);
``effects_at_most_once`` fails when the run executes one request twice.

>>> from agentic_machines import FunctionMachine, HALT
>>> from hypothesis import strategies as st
>>> from agentic_machines.checking import never_raises
>>> def h(n, c):
...     if n == 2 and c == "boom":
...         raise IndexError("no action")
...     return HALT if c == "stop" else n + 1
>>> m = FunctionMachine(lambda n: f"step {n}", h, initial=0, name="fragile")
>>> result = hypothesis_check(m, properties=[never_raises()], max_examples=200,
...                           completions=st.sampled_from(["go", "stop", "boom"]))
>>> cx = result.counterexample("never_raises()")
>>> len(cx.completions), cx.completions[2]  # the run ends where step 2 raises
(3, 'boom')
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule, run_state_machine_as_test

from ..errors import InvalidArgument
from ..machine import DIVERGE, AgenticMachine
from ..runtime.explore import _Reporter  # the status-line timing explore uses
from ..verdict import Verdict, short_repr
from .coverage import unreached_prompts
from .expand import Unknown, expand, records_errors
from .properties import (
    EffectsAtMostOnce,
    HaltsWithin,
    Invariant,
    NeverDiverges,
    NeverRaises,
    Property,
    Raised,
    Transition,
    flatten,
    is_end,
)
from .result import CheckResult, Counterexample, Coverage, PropertyResult

__all__ = ["hypothesis_test", "hypothesis_check", "PropertyViolation"]

CompletionSource = st.SearchStrategy[str] | Callable[[str], st.SearchStrategy[str]]


class PropertyViolation(AssertionError):
    """A generated run broke a property; ``counterexample`` is the run."""

    def __init__(self, message: str, counterexample: Counterexample) -> None:
        super().__init__(message)
        self.counterexample = counterexample


def _key(p: NeverDiverges, state: Any) -> Any:
    """``p.key(state)``, made hashable (its ``repr`` when it is not)."""
    key = p.key(state)  # type: ignore[misc]
    try:
        hash(key)
    except TypeError:
        return repr(key)
    return key


class _Run:
    """One run of the machine, checked step by step."""

    def __init__(
        self, machine: AgenticMachine, start: Any, parts: list[Property], log: dict
    ) -> None:
        self.machine, self.parts, self.log = machine, parts, log
        self.logs = [p.log(machine) for p in parts if isinstance(p, EffectsAtMostOnce)]
        self.effect_parts = [p for p in parts if isinstance(p, EffectsAtMostOnce)]
        self.done: list[set] = [set() for _ in self.logs]
        self.errors = records_errors(machine)
        self.states: list[Any] = [start]
        self.prompts: list[str] = [machine.prompt(start)]
        self.completions: list[str] = []
        self.ended = False
        self.seen = {start: 0}
        # per never_diverges(key=...): the key of each state of the run -> its step
        self.keyed: dict[NeverDiverges, dict[Any, int]] = {
            p: {} for p in parts if isinstance(p, NeverDiverges) and p.key is not None
        }
        for p, seen in self.keyed.items():
            seen[_key(p, start)] = 0
        log["states"].add(start)
        log["prompts"].add(self.prompts[0])
        self._state_checks(start, self.prompts[0])

    def step(self, c: str) -> None:
        if self.ended:
            return  # the run is over; Hypothesis shrinks such steps away
        s = self.states[-1]
        ((_, t, prompt, executed),) = expand(
            self.machine, [(s, [c])], logs=self.logs, errors=self.errors
        )[0]
        self.log["transitions"] += 1
        self.completions.append(c)
        self.states.append(t)
        if type(t) is Unknown:
            self.ended = True
            self.log["unknown"] += 1
            self.log["unknown_reason"] = self.log["unknown_reason"] or t.reason
            return
        ended = is_end(t)
        if not ended:
            prompt = prompt if prompt is not None else self.machine.prompt(t)
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
                    f"{p.name} is false of the step {short_repr(s)} --{short_repr(c)}--> {short_repr(t)}",
                )
            elif isinstance(p, NeverRaises) and type(t) is Raised:
                self._fail(p, f"the harness raised {t.type}: {' '.join(t.message.split())[:200]}")
            elif isinstance(p, HaltsWithin):
                if t is DIVERGE and len(self.completions) <= p.k:
                    self._fail(
                        p,
                        f"the harness returned DIVERGE (↑) after {len(self.completions)} model call(s)",
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
                    key, seen = _key(p, t), self.keyed[p]
                    if key in seen:
                        at = seen[key]
                        self._fail(
                            p,
                            f"the run is in {short_repr(t)}, whose key {short_repr(key)} is the key of the "
                            f"state at step {at}: by the key it is back where it was, so repeating the "
                            f"completions from step {at} never ends",
                            loop=at,
                        )
                    seen[key] = len(self.completions)
        for p, done, new in zip(self.effect_parts, self.done, executed):
            for request in new:
                key = repr(request)
                if key in done:
                    self._fail(
                        p, f"{p.name[21:-1]} executed the request {short_repr(request)} twice"
                    )
                done.add(key)
        if ended:
            self.ended = True
        else:
            self.seen.setdefault(t, len(self.completions))
            self._state_checks(t, self.prompts[-1])  # t's prompt, appended above

    def _state_checks(self, state: Any, prompt: str) -> None:
        for p in self.parts:
            if isinstance(p, Invariant):
                self._verify(
                    p,
                    p.fn,
                    (state, prompt),
                    f"{p.name} is false in state {short_repr(state)} (prompt of {len(prompt):,} characters)",
                )
            elif isinstance(p, HaltsWithin) and p.k == 0 and not self.completions:
                self._fail(p, "after 0 model calls the run has not halted")

    def _verify(self, p: Property, fn: Callable[..., bool], args: tuple, why: str) -> None:
        try:
            ok = fn(*args)
        except Exception as exc:  # noqa: BLE001 - a broken property is reported as failing
            ok, why = False, f"the property raised {type(exc).__name__}: {exc}"
        if not ok:
            self._fail(p, why)

    def _fail(self, p: Property, why: str, loop: int | None = None) -> None:
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
        raise PropertyViolation(
            f"{p.name} failed after {len(cx)} step(s): {why}\n{cx.describe()}\n{cx.snippet()}", cx
        )


def _new_log(tick: Callable[[], None] | None = None) -> dict[str, Any]:
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
    }


class _LoggedTest(RuleBasedStateMachine):
    """A test class :func:`hypothesis_test` builds: its runs add to ``log`` (``_new_log``)."""

    log: ClassVar[dict[str, Any]]


def hypothesis_test(
    machine: AgenticMachine,
    start: Any = None,
    properties: Property | Sequence[Property] = (),
    *,
    completions: CompletionSource | None = None,
    max_steps: int = 20,
    max_examples: int | None = None,
    on_run: Callable[[], None] | None = None,
) -> type[_LoggedTest]:
    """A ``RuleBasedStateMachine`` subclass that runs ``machine`` on generated completions.

    ``completions`` is a strategy, or a function ``prompt -> strategy`` (default:
    :func:`~agentic_machines.checking.adversarial.adversarial_completions` of the
    machine, with its finite alphabet if it has one). A run has at most ``max_steps``
    steps; ``on_run`` is called as each run starts. Use it as Hypothesis state machines are used: ``TestAgent =
    hypothesis_test(...).TestCase`` in a test module, or
    ``run_state_machine_as_test(cls)``. The class keeps what it saw in ``cls.log``
    (states, prompts, the failing runs).

    >>> from agentic_machines.fixtures import fixture
    >>> from agentic_machines.checking import never_diverges
    >>> cls = hypothesis_test(fixture("f2-add"), 0, [never_diverges()], max_examples=20)
    >>> try:
    ...     run_state_machine_as_test(cls)
    ... except PropertyViolation as exc:
    ...     cx = exc.counterexample
    ...     print(cx.states[cx.loop] == cx.states[-1])  # the run came back: a lasso
    True
    """
    parts = _parts(properties)
    if start is None:
        start = machine.initial
    if start is None:
        raise InvalidArgument(
            f"machine {machine.name!r} has no initial state; pass hypothesis_test(machine, start, ...)"
        )
    if not isinstance(max_steps, int) or max_steps < 1:
        raise InvalidArgument(f"max_steps must be a positive integer, got {max_steps!r}")
    source = _source(machine, completions)
    run_log = _new_log(on_run)

    class HarnessTest(_LoggedTest):
        log = run_log

        def __init__(self) -> None:
            super().__init__()
            run_log["runs"] += 1
            if run_log["tick"] is not None:
                run_log["tick"]()
            self.run = _Run(machine, start, parts, run_log)

        if callable(source) and not isinstance(source, st.SearchStrategy):

            @rule(data=st.data())
            def step(self, data: Any) -> None:
                prompt = self.run.prompts[-1]
                self.run.step(data.draw(source(prompt), label="completion"))

        else:

            @rule(c=source)
            def step(self, c: str) -> None:
                self.run.step(c)

    HarnessTest.__name__ = HarnessTest.__qualname__ = f"Test_{_identifier(machine.name)}"
    HarnessTest.TestCase.settings = settings(  # type: ignore[attr-defined]
        settings.default,
        stateful_step_count=max_steps,
        deadline=None,
        max_examples=max_examples if max_examples is not None else settings().max_examples,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    return HarnessTest


def hypothesis_check(
    machine: AgenticMachine,
    start: Any = None,
    properties: Property | Sequence[Property] = (),
    *,
    completions: CompletionSource | None = None,
    max_examples: int = 100,
    max_steps: int = 20,
    seed: int | None = None,
    progress: None | bool | Callable[[dict[str, Any]], None] = None,
) -> CheckResult:
    """Test every property on ``max_examples`` generated runs; a failure is shrunk.

    Each property gets its own Hypothesis run (so each refuted one gets its own
    minimal counterexample). A property no run broke gets a ``"sampled"`` verdict that
    holds with the number of runs named, never a proof. ``seed`` fixes the generated
    runs (default: derandomized, the same runs every time). ``progress`` prints a
    status line on stderr every two seconds once the check runs for two (``False``:
    never; a function: called with the statistics instead).
    """
    props = flatten(properties)
    if not props:
        raise InvalidArgument("hypothesis_check needs at least one property")
    if not isinstance(max_examples, int) or max_examples < 1:
        raise InvalidArgument(f"max_examples must be a positive integer, got {max_examples!r}")
    began = time.perf_counter()
    if start is None:
        start = machine.initial
    results = []
    total = _new_log()
    reporter = _Reporter(_printer(progress))
    for prop in props:
        runs_before = total["runs"]
        holder: list[Any] = []

        def tick(name: str = prop.name, before: int = runs_before, box: list = holder) -> None:
            reporter.tick(
                lambda: {
                    "property": name,
                    "runs": before + box[0].log["runs"],
                    "seconds": round(time.perf_counter() - began, 3),
                }
            )

        cls = hypothesis_test(
            machine, start, [prop], completions=completions, max_steps=max_steps, on_run=tick
        )
        holder.append(cls)
        config = settings(
            cls.TestCase.settings,
            max_examples=max_examples,
            database=None,
            derandomize=seed is None,
            print_blob=False,
        )
        cx: Counterexample | None = None
        error: BaseException | None = None
        try:
            if seed is None:
                run_state_machine_as_test(cls, settings=config)
            else:
                _seeded(cls, config, seed)
        except PropertyViolation as exc:
            cx = exc.counterexample
        except Exception as exc:  # noqa: BLE001 - the machine broke the checker itself
            error = exc
        log = cls.log
        for key in ("states", "prompts", "edges"):
            total[key] |= log[key]
        for key in ("transitions", "unknown", "runs"):
            total[key] += log[key]
        total["depth"] = max(total["depth"], log["depth"])
        claim = f"{prop.claim()}, on runs of at most {max_steps} generated completions"
        runs = log["runs"]
        if cx is not None:
            cx = Counterexample(prop.name, *_fields(cx))
            verdict = Verdict(
                False,
                claim,
                "sampled",
                runs,
                reason=f"counterexample of {len(cx)} step{'s' * (len(cx) != 1)}, shrunk: {cx.explanation}",
            )
        elif error is not None:
            verdict = Verdict(
                None,
                claim,
                "sampled",
                runs,
                reason=f"the test itself failed: {type(error).__name__}: {error}",
            )
        else:
            reason = f"no counterexample in {runs} runs"
            if log["unknown"]:  # those runs ended at a step no fact decided: say so
                reason += (
                    f"; {log['unknown']} run(s) ended at an undecided step, not checked past "
                    f"it ({log['unknown_reason']})"
                )
            verdict = Verdict(True, claim, "sampled", runs, reason=reason)
        results.append(PropertyResult(prop, verdict, cx))
    reporter.finish(
        {"property": "all", "runs": total["runs"], "seconds": time.perf_counter() - began}
    )
    reached = total["prompts"]
    missing, basis = unreached_prompts(machine, reached)
    coverage = Coverage(
        states=len(total["states"]),
        transitions=total["transitions"],
        edges=len(total["edges"]),
        depth=total["depth"],
        alphabet_share=None,
        unreached_prompts=missing,
        unreached_basis=basis,
        undecided=total["unknown"],
        truncated=None,
    )
    return CheckResult(
        machine=getattr(machine, "name", "machine"),
        start=start,
        results=tuple(results),
        coverage=coverage,
        method="sampled",
        bound=f"{max_examples} generated runs per property, each at most {max_steps} steps",
        seconds=time.perf_counter() - began,
        details={"runs": total["runs"]},
    )


def _printer(progress: Any) -> Any:
    if progress is False or callable(progress):
        return progress

    def line(stats: dict[str, Any]) -> None:
        word = "tested" if stats.get("final") else f"testing {stats['property']}"
        print(
            f"agentic-machines: {word}: {stats['runs']:,} runs, {stats['seconds']:.1f} s",
            file=sys.stderr,
            flush=True,
        )

    return line


def _fields(cx: Counterexample) -> tuple:
    return (cx.completions, cx.states, cx.prompts, cx.explanation, cx.loop, cx.machine, cx.initial)


def _seeded(cls: type[RuleBasedStateMachine], config: settings, seed: int) -> None:
    from hypothesis import seed as fix_seed

    @fix_seed(seed)
    @config
    def test() -> None:
        run_state_machine_as_test(cls, settings=config)

    test()


def _parts(properties: Property | Sequence[Property]) -> list[Property]:
    parts = [q for p in flatten(properties) for q in p.parts]
    if not parts:
        raise InvalidArgument(
            "hypothesis_test needs at least one property, e.g. [never_raises(), halts_within(8)]"
        )
    return list(dict.fromkeys(parts))


def _source(machine: AgenticMachine, completions: CompletionSource | None) -> CompletionSource:
    if completions is None:
        from .adversarial import adversarial_completions

        return adversarial_completions(machine, machine.completions or ())
    if isinstance(completions, st.SearchStrategy) or callable(completions):
        return completions
    if isinstance(completions, (list, tuple)) and all(isinstance(c, str) for c in completions):
        if not completions:
            raise InvalidArgument("the completion list is empty")
        return st.sampled_from(tuple(completions))
    raise InvalidArgument(
        f"completions must be a Hypothesis strategy, a function prompt -> strategy, or a list of "
        f"strings; got {completions!r}"
    )


def _identifier(name: str) -> str:
    return "".join(ch if ch.isalnum() else "_" for ch in str(name)) or "machine"
