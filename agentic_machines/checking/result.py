"""What a check returns: a verdict per property, counterexamples, coverage.

A :class:`CheckResult` is true when every property holds (within the bound it names);
``str()`` gives the whole report (the ``test`` command prints it). A
:class:`Counterexample` is a run: the completions, and the states and prompts along it;
it prints as a runnable snippet and saves as a trace file that ``run --replay``
reproduces.

>>> from agentic_machines import TableMachine, HALT
>>> from agentic_machines.checking import check_properties, halts_within
>>> m = TableMachine({0: "go?", 1: "again?"}, {(0, "a"): 1, (0, "b"): HALT,
...                  (1, "a"): 1, (1, "b"): HALT}, initial=0, name="loop")
>>> result = check_properties(m, properties=[halts_within(3)])
>>> bool(result), result.failed
(False, ['halts_within(3)'])
>>> cx = result.counterexample("halts_within(3)")
>>> cx.completions, cx.states, cx.loop  # a lasso: 'a' keeps it in 1 for ever
(('a', 'a'), (0, 1, 1), 1)
"""

from __future__ import annotations

import builtins  # the field `property` hides the builtin inside these classes
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._text import clip, clip_prompt_repr, counted, escape_controls, one_line
from ..errors import PropertiesFailed, UnknownProperty
from ..machine import DIVERGE, HALT
from ..runtime.run import Step, Trace
from ..runtime.search import same_state
from ..verdict import Verdict, short_repr
from .properties import Property, Raised, spell_property

__all__ = ["Counterexample", "Coverage", "PropertyResult", "CheckResult", "load_check"]


@dataclass(frozen=True)
class Counterexample:
    """A run that breaks a property, shortest first.

    ``completions[i]`` is the model's answer in ``states[i]``, whose prompt is
    ``prompts[i]``; ``states`` has one more entry than ``completions`` (the start, then
    each outcome: the last one may be ``HALT``, ``DIVERGE`` or a :class:`Raised`).
    ``prompts`` has an entry for every state that is not such an end. ``loop`` is set
    for a lasso: the run is back in ``states[loop]`` after the last completion, so
    repeating ``completions[loop:]`` keeps it going for ever. ``explanation`` says what
    broke, in words.

    >>> cx = Counterexample("p", ("a", "b"), (0, 1, HALT), ("go?", "again?"), "it halted")
    >>> len(cx), cx.end
    (2, 1)
    >>> print(cx.snippet())
    from agentic_machines import run
    from agentic_machines.models import ScriptedModel
    <BLANKLINE>
    trace = run(machine, ScriptedModel(['a', 'b']), 0)
    """

    property: str
    completions: tuple[str, ...]
    states: tuple[Any, ...]
    prompts: tuple[str, ...]
    explanation: str
    loop: int | None = None
    machine: str = "machine"
    initial: Any = field(default=None, compare=False)

    def __len__(self) -> int:
        return len(self.completions)

    @builtins.property
    def start(self) -> Any:
        """The state the run starts in."""
        return self.states[0]

    @builtins.property
    def end(self) -> Any:
        """The last outcome: ``HALT``, ``DIVERGE``, a :class:`Raised` or a state."""
        return self.states[-1]

    def snippet(self, machine: str = "machine") -> str:
        """Python that reruns the counterexample: ``run(machine, ScriptedModel([...]), start)``.

        ``machine`` is the expression naming the machine in the reader's code. A run
        that ends in a state gets ``max_steps`` so that it stops exactly there; a
        lasso says which completions repeat. A harness that raised raises again.
        """
        start = (
            f"{machine}.initial"
            if self.initial is not None and self.start == self.initial
            else repr(self.start)
        )
        script = repr(list(self.completions))
        ends_in_state = not (
            self.end is HALT or self.end is DIVERGE or isinstance(self.end, Raised)
        )
        steps = f", max_steps={len(self)}" if ends_in_state else ""
        lines = [
            "from agentic_machines import run",
            "from agentic_machines.models import ScriptedModel",
            "",
        ]
        loop = list(self.completions[self.loop :]) if self.loop is not None else []
        if self.loop is not None and same_state(self.end, self.states[self.loop]):
            lines.append(
                f"# a lasso: after the last completion the run is back where step {self.loop} "
                f"started, so repeating {loop!r} never ends"
            )
        elif self.loop is not None:  # a keyed loop: back at a key, not at the state itself
            lines.append(
                f"# a keyed loop: after the last completion the run is at the key of step "
                f"{self.loop}'s state, not that state; the verdict's reason says how far repeating "
                f"{loop!r} was followed"
            )
        if isinstance(self.end, Raised):
            lines.append(f"# the last step raises {self.end.type}: {_one_line(self.end.message)}")
        lines.append(f"trace = run({machine}, ScriptedModel({script}), {start}{steps})")
        return "\n".join(lines)

    def trace(self) -> Trace:
        """The run as a :class:`~agentic_machines.runtime.run.Trace`, as :func:`run` makes it.

        A run ending in a state ends ``"max_steps"`` (with ``max_steps`` its length); a
        step that raised is kept as the trace's pending call, the run cut there.
        """
        n = len(self.completions)
        last_raised = n and isinstance(self.end, Raised)
        recorded = last_raised and self.end.recorded  # the harness halted and kept the exception
        done = n - 1 if last_raised and not recorded else n
        steps = [
            Step(
                i,
                self.states[i],
                self.prompts[i],
                self.completions[i],
                HALT if recorded and i == n - 1 else self.states[i + 1],
            )
            for i in range(done)
        ]
        trace = Trace(machine=self.machine, start=self.start, steps=steps, max_steps=n)
        if recorded:  # as run() records it: HALT, and the message says what was raised
            trace.end = HALT
            trace.message = f"raised {self.end.type}: {self.end.message}"
        elif last_raised:
            trace.end = "incomplete"
            trace.message = f"the harness raised {self.end.type}: {self.end.message}"
            trace.pending = (self.prompts[n - 1], self.completions[n - 1])
        elif self.end is HALT or self.end is DIVERGE:
            trace.end = self.end
        else:
            trace.end = "max_steps"
        return trace

    def save(
        self,
        path: str | os.PathLike,
        prop: Property | None = None,
        machine: Any = None,
        rounds: int | None = None,
    ) -> None:
        """Write the run as a trace file (JSON lines) that ``run NAME --replay FILE`` reruns.

        With ``prop`` (the property it refutes) the file is a test: its end line also
        records the property (its command-line spelling, when it has one), the
        explanation, the lasso's start and, when ``machine`` keeps an effect log (an agent
        function), each step's real tool executions, and the ``rounds`` a keyed loop was
        followed; ``run --replay`` then checks the property again on the machine as it is
        (:func:`load_check` reads the record).
        """
        self.trace().save(path)
        if prop is None:
            return
        record = {
            "property": spell_property(prop),
            "name": self.property,
            "explanation": self.explanation,
            "loop": self.loop,
            "effects": _effects_by_step(self, machine),
            "rounds": rounds,
        }
        lines = Path(path).read_text(encoding="utf-8").splitlines()
        end = json.loads(lines[-1])
        end["check"] = record
        lines[-1] = json.dumps(end, ensure_ascii=False)
        Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")

    def describe(self, limit: int = 60) -> str:
        """The run, one line per step, for reports.

        >>> cx = Counterexample("p", ("a",), (0, HALT), ("go?",), "it halted")
        >>> print(cx.describe())
          0: 0  prompt 'go?'  completion 'a'  -> HALT (1)
        """
        lines = []
        for i, c in enumerate(self.completions):
            mark = "  (the loop starts here)" if self.loop == i else ""
            # the one cut for prompts: where this one differs from the step before's
            before = (
                [self.prompts[i - 1], self.prompts[i - 1] + self.completions[i - 1]] if i else []
            )
            prompt = self.prompts[i] if i < len(self.prompts) else ""
            lines.append(
                f"  {i}: {short_repr(self.states[i], limit // 2, self.states[i - 1 : i])}  prompt "
                f"{clip_prompt_repr(prompt, limit, before)}  completion {short_repr(c, limit)}  -> "
                f"{short_repr(self.states[i + 1], limit // 2, self.states[i : i + 1])}{mark}"
            )
        if not self.completions:
            lines.append(f"  the start state {short_repr(self.start, limit)}")
        return "\n".join(lines)


def _effects_by_step(cx: Counterexample, machine: Any) -> list[list[list[str]]] | None:
    """Per step of ``cx``, the tool executions it really made ``[tool, arguments]``, from
    an agent machine's effect log; ``None`` for a machine that keeps none."""
    log = getattr(machine, "effect_log", None)
    if not callable(log):
        return None
    by_state: dict[Any, list[list[str]]] = {}
    for state, tool, args, *_ in log(0):
        by_state.setdefault(state, []).append([tool, args])
    out = []
    for state, c in zip(cx.states, cx.completions):
        then = getattr(state, "then", None)
        out.append(by_state.get(then(c), []) if callable(then) else [])
    return out


def load_check(path: str | os.PathLike) -> dict[str, Any] | None:
    """The check record of a counterexample file (see :meth:`Counterexample.save`):
    ``property`` (its command-line spelling or ``None``), ``name``, ``explanation``,
    ``loop`` and ``effects``; ``None`` for a plain trace file.

    >>> import tempfile, pathlib
    >>> from agentic_machines.checking import never_raises
    >>> cx = Counterexample("never_raises()", ("a",), (0, Raised("E", "x")), ("go?",), "raised")
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "cx.jsonl"
    >>> cx.save(path, never_raises())
    >>> load_check(path)["property"]
    'never_raises'
    """
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    try:
        end = json.loads(lines[-1]) if lines else None
    except ValueError:
        return None
    record = end.get("check") if isinstance(end, dict) and end.get("kind") == "end" else None
    return record if isinstance(record, dict) else None


def _one_line(text: str) -> str:
    return clip(one_line(text), 200)  # a cut is always marked


@dataclass(frozen=True)
class Coverage:
    """What the check saw.

    ``states``, ``transitions`` (harness calls) and ``edges`` (distinct (state,
    outcome) pairs); ``depth`` (the deepest state, in steps from the start);
    ``alphabet_share`` maps each expanded state to the share of the completions tried
    there that lead to different outcomes (1.0: every completion does something else;
    low: most completions are equivalent there; ``None`` for sampled runs, which try
    one completion per state); ``unreached_prompts`` lists prompts
    the machine can show that no explored state showed (see
    :func:`~agentic_machines.checking.coverage.unreached_prompts`); ``undecided``
    counts steps whose outcome is unknown (the harness raised ``Undecided``);
    ``truncated`` says which bound cut the search, ``None`` when nothing did;
    ``stuck`` counts states where the completions function offered no completion (a
    stuck run has neither halted nor gone on: an outcome of its own); ``diverged`` the
    steps that ended in ``DIVERGE`` (an agent function's ran out of its line budget).
    """

    states: int
    transitions: int
    edges: int
    depth: int
    alphabet_share: Mapping[Any, float] | None = field(compare=False, repr=False)
    unreached_prompts: tuple[str, ...] = ()
    unreached_basis: str = ""
    undecided: int = 0
    truncated: str | None = None
    stuck: int = 0
    diverged: int = 0

    def share_summary(self) -> str:
        """Min, mean and max of ``alphabet_share``.

        >>> Coverage(2, 4, 3, 1, {0: 0.5, 1: 1.0}).share_summary()
        'min 50%, mean 75%, max 100% over 2 expanded states'
        """
        shares = list((self.alphabet_share or {}).values())
        if not shares:
            return "no state was expanded"
        return (
            f"min {min(shares):.0%}, mean {sum(shares) / len(shares):.0%}, max {max(shares):.0%} "
            f"over {counted(len(shares), 'expanded state')}"
        )

    def __str__(self) -> str:
        lines = [
            f"coverage: {counted(self.states, 'state')}, {counted(self.transitions, 'transition')}, "
            f"{counted(self.edges, 'edge')}, depth {self.depth}"
            + (f", {counted(self.undecided, 'undecided step')}" if self.undecided else "")
            + (f", {counted(self.stuck, 'stuck state')}" if self.stuck else "")
        ]
        if self.alphabet_share is not None:
            lines.append(
                f"  alphabet used per state (distinct outcomes / completions tried): {self.share_summary()}"
            )
        if self.unreached_basis:
            if self.unreached_prompts:
                # cut among each other: the part that tells the prompts apart is shown
                unreached = self.unreached_prompts
                shown = ", ".join(short_repr(p, 50, unreached) for p in unreached[:8])
                more = len(self.unreached_prompts) - 8
                lines.append(
                    f"  never reached ({self.unreached_basis}): {shown}"
                    + (f" and {more} more" if more > 0 else "")
                )
            else:
                lines.append(f"  never reached ({self.unreached_basis}): none")
        if self.truncated:
            lines.append(f"  bounded: {self.truncated}")
        return "\n".join(lines)


@dataclass(frozen=True)
class PropertyResult:
    """One property's verdict and, when it is refuted, its shortest counterexample.

    ``label`` is the name it is reported under when it differs from the property's own
    (two properties with one name are told apart as ``name#2``).
    """

    property: Property
    verdict: Verdict
    counterexample: Counterexample | None = None
    label: str = ""

    @builtins.property
    def name(self) -> str:
        """The name the property is reported under (unique within its check)."""
        return self.label or self.property.name


@dataclass(frozen=True)
class CheckResult:
    """The verdicts of one check, with counterexamples and coverage.

    ``bool(result)`` is True when every property holds (an undecided one does not).
    ``method`` is ``"exhaustive"`` (a bounded breadth-first search over a finite
    alphabet) or ``"sampled"`` (Hypothesis runs); ``bound`` says how far the check
    went, and every verdict that holds names it.
    """

    machine: str
    start: Any
    results: tuple[PropertyResult, ...]
    coverage: Coverage | None
    method: str
    bound: str
    seconds: float = 0.0
    details: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def __bool__(self) -> bool:
        return all(r.verdict.holds is True for r in self.results)

    def __iter__(self):
        return iter(self.results)

    def __len__(self) -> int:
        return len(self.results)

    def __getitem__(self, name: str) -> PropertyResult:
        for r in self.results:
            if r.name == name:
                return r
        raise UnknownProperty(
            f"no property {name!r} was checked; index the result by one of the names checked: "
            + ", ".join(r.name for r in self.results)
        )

    @property
    def verdicts(self) -> dict[str, Verdict]:
        """Property name -> verdict."""
        return {r.name: r.verdict for r in self.results}

    @property
    def failed(self) -> list[str]:
        """The names of the refuted properties."""
        return [r.name for r in self.results if r.verdict.holds is False]

    @property
    def undecided(self) -> list[str]:
        """The names of the properties neither shown to hold nor refuted."""
        return [r.name for r in self.results if r.verdict.holds is None]

    @property
    def counterexamples(self) -> dict[str, Counterexample]:
        """Property name -> its counterexample, for the refuted properties."""
        return {r.name: r.counterexample for r in self.results if r.counterexample is not None}

    def counterexample(self, name: str) -> Counterexample | None:
        """The counterexample of the property called ``name`` (``None`` when it holds)."""
        return self[name].counterexample

    @property
    def status(self) -> str:
        """``"holds"`` (every property), ``"refuted"`` (some property) or ``"undecided"``."""
        if self.failed:
            return "refuted"
        return "undecided" if self.undecided else "holds"

    def assert_holds(self, machine_expr: str = "machine") -> None:
        """Raise :class:`~agentic_machines.errors.PropertiesFailed` (an ``AssertionError``) with the whole report unless every property holds
        (for test files: ``check_properties(...).assert_holds()``)."""
        if not self:
            raise PropertiesFailed("\n" + self.report(machine_expr))

    def __repr__(self) -> str:
        summary = ", ".join(f"{r.name}: {r.verdict.status}" for r in self.results)
        extra = ""
        for r in self.results:
            if r.counterexample is not None:
                extra = (
                    f"; shortest counterexample of {r.name}: {list(r.counterexample.completions)!r}"
                )
                break
        return f"<CheckResult of {self.machine!r}, {self.method}, {self.bound}: {summary}{extra}>"

    def report(self, machine_expr: str = "machine") -> str:
        """The whole report: verdicts, counterexamples (with snippets), coverage.

        Text for a terminal: a completion or an exception message quoted in it has its
        control characters escaped (``\\x1b``), so model output never drives the terminal.
        """
        head = f"{self.machine}: {counted(len(self.results), 'property', 'properties')}, {self.method}, {self.bound}"
        keyed = [r.name for r in self.results if r.verdict.method == "key"]
        if keyed:  # a verdict that rests on a key's claim is not what the search showed
            head += f"; {', '.join(keyed)}: by the key, not {self.method}"
        lines = [head]
        for r in self.results:
            mark = {True: "PASS", False: "FAIL", None: "UNDECIDED"}[r.verdict.holds]
            lines.append(f"{mark} {r.name}: {r.verdict}")
        for r in self.results:
            cx = r.counterexample
            if cx is None:
                continue
            kind = "lasso" if cx.loop is not None else "run"
            lines.append("")
            lines.append(
                f"counterexample to {r.name} ({counted(len(cx), 'step')}, {kind}): {cx.explanation}"
            )
            lines.append(cx.describe())
            lines.extend("    " + line for line in cx.snippet(machine_expr).splitlines())
        if self.coverage is not None:
            lines.append("")
            lines.append(str(self.coverage))
        return escape_controls("\n".join(lines))

    __str__ = report
