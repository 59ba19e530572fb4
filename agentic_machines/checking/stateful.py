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

import time
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from hypothesis import HealthCheck, settings
from hypothesis import seed as fix_seed
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule, run_state_machine_as_test

from .._text import counted
from ..errors import InvalidArgument
from ..machine import AgenticMachine
from ..runtime.search import Reporter  # the status lines every search shows
from ..verdict import Verdict
from .adversarial import adversarial_completions
from .coverage import unreached_prompts
from .keyed import by_key_note
from .properties import (
    Property,
    display_names,
    flatten,
    part_names,
)
from .result import CheckResult, Counterexample, Coverage, PropertyResult
from .run_check import PropertyViolation, RunCheck, confirm, new_log

__all__ = ["hypothesis_test", "hypothesis_check", "PropertyViolation", "SAMPLED_ROUNDS"]

CompletionSource = st.SearchStrategy[str] | Callable[[str], st.SearchStrategy[str]]


SAMPLED_ROUNDS = 2_000
"""How many rounds a generated run follows a keyed loop by default: as many as the pytest
plugin's default ``max_states``. Fewer than a search's default (``KEYED_ROUNDS``) because
every generated and shrunk run follows its loops again (an agent's runs share no state)."""


class _LoggedTest(RuleBasedStateMachine):
    """A test class :func:`hypothesis_test` builds: its runs add to ``log`` (``new_log``)."""

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
    keyed_rounds: int = SAMPLED_ROUNDS,
) -> type[_LoggedTest]:
    """A ``RuleBasedStateMachine`` subclass that runs ``machine`` on generated completions.

    ``completions`` is a strategy, or a function ``prompt -> strategy`` (default:
    :func:`~agentic_machines.checking.adversarial.adversarial_completions` of the
    machine, with its finite alphabet if it has one). A run has at most ``max_steps``
    steps; ``on_run`` is called as each run starts. A keyed ``never_diverges`` follows a
    loop ``keyed_rounds`` rounds (:data:`SAMPLED_ROUNDS` by default), through steps shared
    by all the runs. Use it as Hypothesis state machines are used: ``TestAgent =
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
    if isinstance(keyed_rounds, bool) or not isinstance(keyed_rounds, int) or keyed_rounds < 1:
        raise InvalidArgument(f"keyed_rounds must be a positive integer, got {keyed_rounds!r}")
    source = _source(machine, completions)
    run_log = new_log(on_run)

    class HarnessTest(_LoggedTest):
        log = run_log

        def __init__(self) -> None:
            super().__init__()
            run_log["runs"] += 1
            if run_log["tick"] is not None:
                run_log["tick"]()
            self.run = RunCheck(machine, start, parts, run_log, rounds=keyed_rounds)

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
    keyed_rounds: int = SAMPLED_ROUNDS,
) -> CheckResult:
    """Test every property on ``max_examples`` generated runs; a failure is shrunk.

    Each property gets its own Hypothesis run (so each refuted one gets its own
    minimal counterexample). A property no run broke gets a ``"sampled"`` verdict that
    holds with the number of runs named, never a proof. ``seed`` fixes the generated
    runs (default: derandomized, the same runs every time): the search is a function of
    the seed, the same in every process whatever its hash seed (the agent's own commands
    are drawn in a fixed order, and no example database is read or written). ``progress`` logs a
    status line on the ``agentic_machines`` logger every two seconds once the check runs
    for two (the command line shows it on stderr; ``False``: never; a function: called
    with the statistics instead). ``keyed_rounds``: as for
    :func:`hypothesis_test`.
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
    total = new_log()
    reporter = Reporter(progress, _line)
    for prop, label in zip(props, display_names(props)):
        runs_before = total["runs"]
        holder: list[Any] = []

        def tick(name: str = label, before: int = runs_before, box: list = holder) -> None:
            reporter.tick(
                lambda: {
                    "property": name,
                    "runs": before + box[0].log["runs"],
                    "seconds": round(time.perf_counter() - began, 3),
                }
            )

        cls = hypothesis_test(
            machine,
            start,
            [prop],
            completions=completions,
            max_steps=max_steps,
            on_run=tick,
            keyed_rounds=keyed_rounds,
        )
        holder.append(cls)
        cls.log["names"] = part_names([prop])  # reasons name it as it is reported
        cls.log["names"][prop] = label
        config = settings(
            cls.TestCase.settings,
            max_examples=max_examples,
            database=None,
            derandomize=seed is None,
            print_blob=False,
        )
        cx: Counterexample | None = None
        error: BaseException | None = None
        if seed is not None:
            # Hypothesis reads the seed of a state-machine test from its class (a seed put
            # on a wrapper function is not seen, and every process then drew its own runs)
            cls = fix_seed(seed)(cls)
        try:
            run_state_machine_as_test(cls, settings=config)
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
            # a keyed loop followed without an exact repeat: it rests on the key's claim
            by_key = any(cx is k for k in log["by_key"])
            cx = Counterexample(label, *_fields(cx))
            verdict = Verdict(
                False,
                claim,
                "key" if by_key else "sampled",
                runs,
                reason=f"counterexample of {counted(len(cx), 'step')}, shrunk: {cx.explanation}"
                + (
                    by_key_note(
                        keyed_rounds,
                        "a generated run",
                        "keyed_rounds (--max-states on the command line)",
                    )
                    if by_key
                    else ""
                ),
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
                    f"; {counted(log['unknown'], 'run')} ended at an undecided step, not checked past "
                    f"it ({log['unknown_reason']})"
                )
            verdict = Verdict(True, claim, "sampled", runs, reason=reason)
        # the shrunk run is replayed and the property checked on it again before it is returned
        results.append(
            confirm(
                machine,
                PropertyResult(prop, verdict, cx, label),
                rounds=keyed_rounds,
                followed=log["followed"],
            )
        )
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


def _line(stats: dict[str, Any], final: bool) -> str:
    word = "tested" if final else f"testing {stats['property']}"
    return f"agentic-machines: {word}: {stats['runs']:,} runs, {stats['seconds']:.1f} s"


def _fields(cx: Counterexample) -> tuple:
    return (cx.completions, cx.states, cx.prompts, cx.explanation, cx.loop, cx.machine, cx.initial)


def _parts(properties: Property | Sequence[Property]) -> list[Property]:
    parts = [q for p in flatten(properties) for q in p.parts]
    if not parts:
        raise InvalidArgument(
            "hypothesis_test needs at least one property, e.g. [never_raises(), halts_within(8)]"
        )
    return list(dict.fromkeys(parts))


def _source(machine: AgenticMachine, completions: CompletionSource | None) -> CompletionSource:
    if completions is None:
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
