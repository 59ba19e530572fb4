"""Spell as an agentic machine, its error recovery, and the naive harness it improves on.

:class:`SpellMachine` is the Spell runtime as X = (S, p, h). A state is a model call
waiting for its completion (:class:`~agentic_machines.spell.evaluator.Boundary`): for a
self-call its prompt is the open program prefix; for ``leaf-llm`` it is the plain
prompt. h(s, c) concatenates prefix and completion, balances the parentheses, parses,
evaluates in a fresh, empty environment (on top of the frames of any self-call waiting
for the result) and runs to the next model call (a state), or to the end (``HALT``).

**Error recovery.** A turn that fails is not the end: an evaluation error appends to
the failing program's ``quine`` an inert recovery form holding the error, a ``(prune
2)`` that will remove it and the failed form at the next ``!extend``, and a fresh
``(eval (do '(!llm-self (reopen completion))))``; a parse error puts the raw text, as
an inert string, into a new recovery quine of the same shape. Both count against one
budget (2): the attempt number is written in the recovery form, so the budget is part
of the visible program, like everything else in Spell. Past the budget the run halts
with the error in :attr:`SpellMachine.last_record`.

:class:`NaiveMachine` is the harness Spell argues against: the state is the program
text so far, each completion is appended, and the *whole* program is run again with
the tools bound everywhere. Every earlier tool call fires again at every turn.

>>> env = ToolEnvironment({"search": lambda q: "Paris is on the Seine."})
>>> m = SpellMachine(env, task="Which river?")
>>> s = m.harness(m.initial, "'(!call-now hit (search \\"Paris\\"))")
>>> s.prompt[-53:]
'(search "Paris")) (def hit "Paris is on the Seine.") '
>>> m.harness(s, "'(str \\"Answer: \\" hit)")
1
>>> m.last_record.value, env.total_calls
('Answer: Paris is on the Seine.', 1)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._text import clip_prompt, ending_line
from ..cek.printer import escape_string
from ..cek.reader import parse
from ..cek.syntax import Pair, Symbol, from_items, iter_list
from ..errors import EvaluationError, InvalidArgument, ParseError, ScriptExhausted, WrongType
from ..machine import HALT, AgenticMachine, Outcome
from .evaluator import (
    DEFAULT_FUEL,
    EMPTY_ENV,
    Boundary,
    Halted,
    Stuck,
    World,
    outer_eval,
    resume,
    run,
    start,
)
from .text import balance, pr_str

__all__ = [
    "ToolEnvironment",
    "SpellMachine",
    "NaiveMachine",
    "SpellRecord",
    "SpellRun",
    "run_spell",
    "seed_program",
    "recovery_for_error",
    "recovery_for_parse",
    "RECOVERY_TAG",
    "RETRY_BUDGET",
]

RECOVERY_TAG = "spell-recovery"
"""The first string of every recovery form: ``(do "spell-recovery" attempt "message" ...)``."""

RETRY_BUDGET = 2
"""How many recoveries (parse and evaluation errors together) a program gets."""

_HINT = "The form before this one failed and is now inert. Continue the program."

EXAMPLE_TOOLS = {"shout": lambda text: str(text).upper() + "!"}
"""A one-tool dict, the form ``eval --spell --tools MODULE:ATTR`` takes (for the docs and tests)."""


class ToolEnvironment(World):
    """Tools the trailing form may call, with every call counted and logged.

    ``tools`` maps a Spell name to a Python function (str/int/bool/None/list results).
    ``calls`` counts calls per tool, ``log`` keeps ``(name, args)`` in order.

    >>> env = ToolEnvironment({"double": lambda n: 2 * n})
    >>> env.call("double", (21,)), env.calls["double"], env.log
    (42, 1, [('double', (21,))])
    """

    def __init__(
        self, tools: Mapping[str, Callable[..., Any]] | None = None, *, self_calls: bool = True
    ) -> None:
        super().__init__(tools, self_calls=self_calls)
        bad = [n for n in self.tools if not n or n[0] in "!(" or " " in n]
        if bad:
            raise InvalidArgument(
                f"tool names must be plain Spell symbols (no leading '!', no spaces): {bad}"
            )
        self.calls: Counter[str] = Counter()
        self.log: list[tuple[str, tuple]] = []

    def call(self, name: str, args: tuple) -> Any:
        """Run and count the tool."""
        self.calls[name] += 1
        self.log.append((name, tuple(args)))
        return super().call(name, args)

    @property
    def total_calls(self) -> int:
        """All tool calls so far."""
        return sum(self.calls.values())

    def fresh(self, *, self_calls: bool | None = None) -> ToolEnvironment:
        """The same tools with the counters at zero."""
        return ToolEnvironment(
            self.tools, self_calls=self.self_calls if self_calls is None else self_calls
        )


def seed_program(task: str) -> str:
    """The root program of a session: the task as an inert string, then a self-call.

    >>> print(seed_program("Say hi."))
    (quine completion (eval (do "Say hi." '(!llm-self (reopen completion)))))
    """
    return f"(quine completion (eval (do {escape_string(task)} '(!llm-self (reopen completion)))))"


# ---------------------------------------------------------------- recovery


def _attempt(program: Any) -> int:
    """The attempt number of the recovery form third from the end of a quine, or 0."""
    if type(program) is not Pair or program.car != Symbol("quine"):
        return 0
    items = list(iter_list(program))
    if len(items) < 5:
        return 0
    form = items[-3]
    if type(form) is Pair:
        parts = list(iter_list(form))
        if (
            len(parts) >= 3
            and parts[0] == Symbol("do")
            and parts[1] == RECOVERY_TAG
            and type(parts[2]) is int
        ):
            return parts[2]
    return 0


def _task_forms(program: Any) -> list:
    """The leading strings of a program's outer-eval ``do`` (the task text of a seed
    program), which a recovery carries into the fresh wrapper so that ``(prune 2)``,
    removing the failed form, does not remove them too.

    >>> _task_forms(parse('(quine completion (eval (do "Say hi." (def x 1) "later" (quote x))))'))
    ['Say hi.']
    """
    outer = outer_eval(program)
    if outer is None or type(outer[1]) is not Pair or outer[1].car != Symbol("do"):
        return []
    forms = []
    for form in list(iter_list(outer[1]))[1:]:
        if type(form) is not str:
            break
        forms.append(form)
    return forms


def _recovery_tail(name: str, attempt: int, message: str, carried: list) -> list:
    return [
        from_items([Symbol("do"), RECOVERY_TAG, attempt, message, _HINT]),
        from_items([Symbol("prune"), 2]),
        from_items(
            [
                Symbol("eval"),
                from_items([Symbol("do"), *carried, parse(f"'(!llm-self (reopen {name}))")]),
            ]
        ),
    ]


def recovery_for_error(program: Any, error: Exception, budget: int = RETRY_BUDGET) -> Any | None:
    """The program to run after ``program`` failed with ``error``, or ``None`` past the budget.

    A wrapper quine keeps its forms and gets three more; anything else becomes inert
    quoted data in a new recovery quine.

    >>> from agentic_machines.cek import unparse
    >>> p = parse("(quine completion (eval (do '(car nil))))")
    >>> print(unparse(recovery_for_error(p, EvaluationError("car: bad"))))
    (quine completion (eval (do '(car nil))) (do "spell-recovery" 1 "evaluation error: car: bad" "The form before this one failed and is now inert. Continue the program.") (prune 2) (eval (do '(!llm-self (reopen completion)))))
    """
    attempt = _attempt(program) + 1
    if attempt > budget:
        return None
    message = f"evaluation error: {error}"
    carried = _task_forms(program)
    if type(program) is Pair and program.car == Symbol("quine"):
        items = list(iter_list(program))
        if len(items) >= 2 and type(items[1]) is Symbol:
            return from_items(items + _recovery_tail(items[1].name, attempt, message, carried))
    inert = from_items([Symbol("quote"), program])
    return from_items(
        [Symbol("quine"), Symbol("completion"), inert]
        + _recovery_tail("completion", attempt, message, carried)
    )


def recovery_for_parse(
    raw: str, prefix: str, error: Exception, budget: int = RETRY_BUDGET
) -> Any | None:
    """The recovery quine for text that does not parse: the raw text as an inert string.

    ``prefix`` (the part the runtime wrote) tells the attempt number. ``None`` past the budget.

    >>> from agentic_machines.cek import unparse
    >>> print(unparse(recovery_for_parse('(quine completion (eval (do "x', "", ParseError("unterminated string"))))
    (quine completion "(quine completion (eval (do \\"x" (do "spell-recovery" 1 "parse error: unterminated string" "The form before this one failed and is now inert. Continue the program.") (prune 2) (eval (do '(!llm-self (reopen completion)))))
    """
    try:
        written = parse(balance(prefix)) if prefix.strip() else None
    except ParseError:
        written = None
    before = _attempt(written) if written is not None else 0
    attempt = before + 1
    if attempt > budget:
        return None
    return from_items(
        [Symbol("quine"), Symbol("completion"), raw]
        + _recovery_tail(
            "completion",
            attempt,
            f"parse error: {_problem(error)}",
            _task_forms(written) if written is not None else [],
        )
    )


def _problem(error: Exception) -> str:
    """What is wrong with a completion that does not read, and where, without the
    reader's advice to a programmer ("add ')' to close it"): the model reads this text,
    and a completion is an outcome, not a file its user will edit.

    >>> _problem(ParseError("unclosed '(': add ')'", line=1, column=3, problem="unclosed '('"))
    "unclosed '(' (line 1, column 3)"
    """
    if not isinstance(error, ParseError):
        return str(error)
    where = f" (line {error.line}, column {error.column})" if error.line else ""
    return error.problem + where


# ---------------------------------------------------------------- the machine


@dataclass(frozen=True)
class SpellRecord:
    """What one harness call did: the ``outcome``, the final ``value`` (on ``HALT``),
    the ``error`` that ended the run (past the retry budget), the ``recoveries`` made
    (their messages) and the ``steps`` taken.

    >>> SpellRecord(1).recoveries
    ()
    """

    outcome: Any
    value: Any = None
    error: Exception | None = None
    recoveries: tuple[str, ...] = ()
    steps: int = 0


class SpellMachine(AgenticMachine):
    """The Spell runtime as an agentic machine over the tools of ``environment``.

    ``initial`` is the first model call of :func:`seed_program` ``(task)``.
    ``last_record`` is the :class:`SpellRecord` of the latest harness call.

    >>> m = SpellMachine(task="Add 2 and 3.")
    >>> m.prompt(m.initial)
    '(quine completion (eval (do "Add 2 and 3." \\'(!llm-self (reopen completion))'
    >>> m.harness(m.initial, "'(+ 2 3)))))"), m.last_record.value
    (1, 5)
    """

    name = "spell"

    def __init__(
        self,
        environment: World | None = None,
        *,
        task: str = "Solve the task.",
        budget: int = RETRY_BUDGET,
        fuel: int = DEFAULT_FUEL,
    ) -> None:
        self.environment = environment if environment is not None else ToolEnvironment()
        self.task = task
        self.budget = budget
        self.fuel = fuel
        self.last_record: SpellRecord | None = None
        first = self.load(seed_program(task))
        if type(first) is not Boundary:
            raise InvalidArgument("the seed program must reach a model call")  # pragma: no cover
        self.initial = first

    def prompt(self, state: Boundary) -> str:
        """p(s): the open program prefix (a self-call) or the plain prompt (``leaf-llm``)."""
        if type(state) is not Boundary:
            raise WrongType(
                f"{state!r} is not a Spell state; states come from SpellMachine.initial or harness()"
            )
        return state.prompt

    def load(self, program: str) -> Outcome:
        """Run a whole program (not a completion) as the root of a session: its first
        model call, or ``HALT``. Errors recover as in any turn.

        >>> m = SpellMachine()
        >>> m.load("(quine q (+ 1 2))"), m.last_record.value
        (1, 3)
        """
        return self._finish(self._program(program, "", ()))

    def harness(self, state: Boundary, completion: str) -> Outcome:
        """h(s, c): the next model call, or ``HALT`` (the run ended, or failed past the
        retry budget; :attr:`last_record` says which)."""
        self.prompt(state)
        if type(completion) is not str:
            raise WrongType(
                f"completions are strings (C = str); got {type(completion).__name__}: pass str(completion)"
            )
        if state.kind == "leaf":
            self._recoveries = []
            return self._finish(resume(state, completion))
        return self._finish(self._program(state.prompt + completion, state.prompt, state.kont))

    def _program(self, text: str, prefix: str, kont: tuple) -> tuple:
        self._recoveries = []
        try:
            datum = parse(balance(text))
        except ParseError as err:
            datum = recovery_for_parse(text, prefix, err, self.budget)
            if datum is None:
                return ("fail", err, kont)
            self._recoveries.append(f"parse error: {_problem(err)}")
        return start(datum, kont)

    _recoveries: list[str]

    def _finish(self, control: tuple) -> Outcome:
        return self._drive(control)

    def _drive(self, control: tuple) -> Outcome:
        steps = 0
        if control[0] == "fail":
            return self._record(HALT, error=control[1], steps=steps)
        while True:
            outcome, n = run(*control, self.environment, fuel=self.fuel - steps)
            steps += n
            if type(outcome) is Boundary:
                return self._record(outcome, steps=steps)
            if type(outcome) is Halted:
                return self._record(HALT, value=outcome.value, steps=steps)
            # Stuck: recover the failing program (the one bound to `completion` where it failed)
            program = outcome.env.get("completion")
            recovered = (
                recovery_for_error(program, outcome.error, self.budget)
                if program is not None
                else None
            )
            if recovered is None:
                return self._record(HALT, error=outcome.error, steps=steps)
            self._recoveries.append(f"evaluation error: {outcome.error}")
            control = start(recovered, _caller_frames(outcome))

    def _record(self, outcome: Outcome, **kw: Any) -> Outcome:
        self.last_record = SpellRecord(outcome, recoveries=tuple(self._recoveries), **kw)
        return outcome


def _caller_frames(stuck: Stuck) -> tuple:
    """The frames below the failing program: everything up to the topmost frame that
    gives back an environment in which ``completion`` is another program (its caller)."""
    program = stuck.env.get("completion")
    kont = stuck.kont
    for i in range(len(kont) - 1, -1, -1):
        frame = kont[i]
        if frame[0] in ("restore", "return"):
            other = frame[1].get("completion")
            if other is not program and other != program:
                return kont[: i + 1]
    return ()


# ---------------------------------------------------------------- running a session


@dataclass(frozen=True)
class SpellRun:
    """A whole session: ``value`` (``None`` unless it ended normally), the ``states``
    (model calls) passed, the ``error`` that stopped it, and the ``recoveries`` made.

    >>> print(run_spell("(quine completion (eval (do '(leaf-llm \\"hi?\\"))))", ["hello"]).describe())
    turn 1 (leaf): hi?
      model: hello
    value: "hello"
    """

    value: Any
    states: tuple[Boundary, ...]
    completions: tuple[str, ...]
    error: Exception | None = None
    recoveries: tuple[str, ...] = field(default=())

    @property
    def ok(self) -> bool:
        """True when the session ended normally with a value."""
        return self.error is None

    def describe(self, width: int = 72) -> str:
        """Several lines for a terminal: each model call's prompt (cut where it differs
        from the turns beside it), the model's answer, recoveries, then the value or the error."""
        lines = []
        prompts, said = [s.prompt for s in self.states], list[str]()
        for i, (s, c) in enumerate(zip(self.states, self.completions), 1):
            # a turn's parent may be any earlier turn (a session resumed after its
            # children) with the answer appended, its siblings any other turn
            shown = clip_prompt(s.prompt, width, prompts[: i - 1] + prompts[i:] + said, "...")
            said.append(s.prompt + c)
            lines.append(f"turn {i} ({s.kind}): {shown}".rstrip())
            lines.append(f"  model: {c}")
        for r in self.recoveries:
            lines.append(f"recovered from {r}")
        lines.append(ending_line(self.value, self.error, pr_str))
        return "\n".join(lines)


def run_spell(
    program: str,
    completions: Sequence[str] = (),
    environment: World | None = None,
    *,
    fuel: int = DEFAULT_FUEL,
) -> SpellRun:
    """Run a Spell program, answering its model calls with ``completions`` in order.

    Never raises for a bad program, a failing turn or a short script: the problem is in
    ``.error``.

    >>> r = run_spell("(quine completion (eval (do '(!llm-self \\"Pick a number.\\"))))", ["7)))"])
    >>> r.value, r.states[0].prompt
    (7, '(quine completion (eval (do "Pick a number." ')
    """
    m = SpellMachine(environment, fuel=fuel)
    states: list[Boundary] = []
    recoveries: list[str] = []
    try:
        outcome = m.load(program)
        script = list(completions)
        while True:
            if m.last_record is not None:
                recoveries.extend(m.last_record.recoveries)
            if type(outcome) is not Boundary:
                record = m.last_record
                value = record.value if record is not None else None
                error = record.error if record is not None else None
                return SpellRun(
                    value, tuple(states), tuple(script[: len(states)]), error, tuple(recoveries)
                )
            states.append(outcome)
            if len(states) > len(script):
                err = ScriptExhausted.for_program(
                    f"model call {len(states)}", len(script), outcome.prompt, len(states) - 1
                )
                return SpellRun(None, tuple(states), tuple(script), err, tuple(recoveries))
            outcome = m.harness(outcome, script[len(states) - 1])
    except (
        EvaluationError,
        ParseError,
    ) as err:  # pragma: no cover - the machine recovers or records
        return SpellRun(None, tuple(states), tuple(completions[: len(states)]), err)


# ---------------------------------------------------------------- the naive harness


class _ToolsOnly(World):
    """The tools of ``inner`` (its counters too), without the self-call family."""

    def __init__(self, inner: World) -> None:
        super().__init__(inner.tools, self_calls=False)
        self.inner = inner

    def call(self, name: str, args: tuple) -> Any:
        return self.inner.call(name, args)


class NaiveMachine(AgenticMachine):
    """Concatenate and re-run: the harness without the trailing-expression discipline.

    A state is the program text so far (its prompt is that text). h(s, c) appends ``c``
    and runs the **whole** program ``(do s c)`` from the start, in a fresh environment
    where the tools are bound everywhere; it returns the longer text as the next state.
    A completion with no form in it ends the session (``HALT``), and so does an error
    (this harness has no recovery). Every tool call of every earlier turn fires again.

    >>> env = ToolEnvironment({"ping": lambda: "pong"})
    >>> m = NaiveMachine(env, task="Ping twice.")
    >>> s = m.harness(m.initial, "(def a (ping))")
    >>> s = m.harness(s, "(def b (ping))")
    >>> env.calls["ping"]
    3
    """

    name = "spell-naive"

    def __init__(
        self,
        environment: World | None = None,
        *,
        task: str = "Solve the task.",
        fuel: int = DEFAULT_FUEL,
    ) -> None:
        if environment is None:
            environment = ToolEnvironment(self_calls=False)
        self.environment = environment
        self._world = _ToolsOnly(environment)
        self.fuel = fuel
        self.initial = f";; {task}\n"
        self.last_record: SpellRecord | None = None

    def prompt(self, state: str) -> str:
        """p(s) = s, the program so far."""
        return state

    def harness(self, state: str, completion: str) -> Outcome:
        """h(s, c): re-run ``s + c`` from the start; the new text, or ``HALT``."""
        text = state + completion
        try:
            forms = list(iter_list(parse("(do\n" + text + "\n)")))[1:]
        except ParseError as err:
            self.last_record = SpellRecord(HALT, error=err)
            return HALT
        try:
            new = list(iter_list(parse("(do\n" + completion + "\n)")))[1:]
        except ParseError as err:  # pragma: no cover - the whole text parsed
            self.last_record = SpellRecord(HALT, error=err)
            return HALT
        program = from_items([Symbol("do"), *forms])
        outcome, steps = run(
            ("eval", program, EMPTY_ENV.with_effects(True)), [], self._world, fuel=self.fuel
        )
        if type(outcome) is Stuck:
            self.last_record = SpellRecord(HALT, error=outcome.error, steps=steps)
            return HALT
        if type(outcome) is Boundary:  # pragma: no cover - no self-calls are bound here
            self.last_record = SpellRecord(HALT, error=EvaluationError("unexpected model call"))
            return HALT
        if not new:
            self.last_record = SpellRecord(HALT, value=outcome.value, steps=steps)
            return HALT
        self.last_record = SpellRecord(text, value=outcome.value, steps=steps)
        return text + ("" if text.endswith("\n") else "\n")
