"""Every exception the package raises, in one place.

Messages say what went wrong *and what to do next*, in the manner of Hypothesis'
``InvalidArgument``: a user who reads only the message should know how to fix the call.
"""

from __future__ import annotations

from typing import Any

from ._text import clip, counted

__all__ = [
    "AgenticMachinesError",
    "InvalidMachine",
    "InvalidMachineFile",
    "InvalidEmbedding",
    "InvalidArgument",
    "WrongType",
    "UnknownProperty",
    "ScriptExhausted",
    "UnmatchedPrompt",
    "ReplayMismatch",
    "CertificateError",
    "ModelError",
    "Undecided",
    "ClockDependent",
    "ParseError",
    "EvaluationError",
    "MalformedProgram",
    "ProgramDiverged",
    "UnboundEffect",
    "ReplayDivergence",
    "UnknownMachine",
    "REPLNameError",
    "DepthExceeded",
    "BlocksExceeded",
    "ModelCallsExceeded",
    "BudgetExceeded",
    "TraceError",
    "CassetteError",
    "ExecutionFailure",
    "ExecutionTimeout",
    "ExecutionMemoryExceeded",
    "WorkerDied",
    "IsolationFallback",
    "NotDefined",
    "UnknownField",
    "PropertiesFailed",
    "GoldenMismatch",
    "PropertyViolation",
]


class AgenticMachinesError(Exception):
    """Base class of every error raised on purpose by agentic_machines."""


class InvalidArgument(AgenticMachinesError, ValueError):
    """A public function was called with an argument it cannot use."""


class WrongType(InvalidArgument, TypeError):
    """An argument of the wrong type (a prompt that is not a string, a state from another
    machine). A ``TypeError`` too, so code that caught the plain ``TypeError`` still works.

    >>> isinstance(WrongType("x"), TypeError), isinstance(WrongType("x"), InvalidArgument)
    (True, True)
    """


class UnknownProperty(AgenticMachinesError, KeyError):
    """A property name that a check result does not hold (``result["name"]``). A
    ``KeyError`` too, for code that caught that; printed as its message, without the quotes
    ``KeyError`` adds.

    >>> str(UnknownProperty("no property 'p'; pick one of: q"))
    "no property 'p'; pick one of: q"
    """

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class _FileError(InvalidArgument):
    """A file could not be loaded: the message starts with ``path:line:`` and says what is wrong."""

    def __init__(self, path: str, line: int | None, problem: str) -> None:
        where = f"{path}:{line}" if line else str(path)
        super().__init__(f"{where}: {problem}")
        self.path = path
        self.line = line
        self.problem = problem


class TraceError(_FileError):
    """A trace file (``Trace.load``) is not a valid trace: ``path``, ``line`` and ``problem`` say
    where and what (a missing field, a wrong type, an unknown version, bad UTF-8, ...)."""


class CassetteError(_FileError):
    """A model cassette (``ReplayModel``) is not a valid cassette: ``path``, ``line``, ``problem``."""


class UnknownField(InvalidArgument, TypeError):
    """A result object (``Verdict``, ``Obstruction``, ``Witness``, built lazily) was given a
    field it does not have, or too few fields and no ``build()``; a ``TypeError``, as
    Python's own for an unexpected keyword argument. The message names the fields.

    >>> issubclass(UnknownField, TypeError) and issubclass(UnknownField, ValueError)
    True
    """


class NotDefined(AgenticMachinesError, NotImplementedError):
    """A subclass left out a method it must define: ``prompt(state)`` or
    ``harness(state, completion)`` of an ``AgenticMachine``, ``_complete(prompt)`` of a
    ``ModelBase``. The message names the class and the method to define.

    >>> issubclass(NotDefined, NotImplementedError)
    True
    """


class PropertiesFailed(AgenticMachinesError, AssertionError):
    """``CheckResult.assert_holds()``: a property is refuted or undecided. The message is
    the whole report (counterexamples, what was not reached); an ``AssertionError``, so a
    test framework shows it as a failed assertion.
    """


class PropertyViolation(AssertionError):
    """``hypothesis_test`` / ``hypothesis_check``: a generated run broke a property;
    ``counterexample`` is the run (a ``checking.result.Counterexample``). Only an
    ``AssertionError``, not an :class:`AgenticMachinesError`: Hypothesis shrinks the run on
    it, a test framework shows it as a failed assertion, and the handlers of bad input
    (the CLI's, the analyses') must never take a broken property for bad input.

    >>> raise PropertyViolation("never_raises() broken at step 2", counterexample=None)
    Traceback (most recent call last):
    ...
    agentic_machines.errors.PropertyViolation: never_raises() broken at step 2
    """

    def __init__(self, message: str, counterexample: Any) -> None:
        super().__init__(message)
        self.counterexample = counterexample


class GoldenMismatch(AgenticMachinesError, AssertionError):
    """``testing.check_golden``: the text differs from its golden file, or the file is
    missing. The message names the first differing line and how to rewrite the file
    (``AGENTIC_MACHINES_UPDATE_GOLDEN=1``); an ``AssertionError`` for test frameworks.
    """


class InvalidMachine(AgenticMachinesError, ValueError):
    """A machine definition is malformed; raised when the machine is built.

    ``problems`` lists every individual problem found, so a table can be fixed in
    one pass rather than one error at a time.
    """

    def __init__(self, message: str, problems: list[str] | None = None) -> None:
        super().__init__(message)
        self.problems = list(problems or [])


class InvalidMachineFile(InvalidMachine):
    """A machine file (JSON or TOML) or a machine target cannot be used.

    ``path`` is the file, ``key`` the first offending key (``None`` for a syntax
    error, where ``line`` says where), ``problems`` every ``(key, message)`` pair.
    """

    def __init__(
        self,
        message: str,
        *,
        path: str = "",
        key: str | None = None,
        line: int | None = None,
        problems: list[tuple[str, str]] | None = None,
    ) -> None:
        super().__init__(message, [f"{k}: {m}" for k, m in problems or []])
        self.path = path
        self.key = key
        self.line = line
        self.pairs = list(problems or [])


class InvalidEmbedding(AgenticMachinesError, ValueError):
    """An embedding was built from something that is not a mapping of states."""


class ScriptExhausted(AgenticMachinesError):
    """A scripted model was asked for more completions than its script holds."""

    def __init__(self, message: str, *, prompt: str = "", index: int = -1) -> None:
        super().__init__(message)
        self.prompt = prompt
        self.index = index

    @classmethod
    def for_program(cls, call: str, script_length: int, prompt: str, index: int) -> ScriptExhausted:
        """The error of a program run on a script (``cek.run_program``, ``spell.run_spell``)
        whose model call ``call`` (number ``index`` from 0) found the script used up.

        >>> str(ScriptExhausted.for_program("model call 2", 1, "q", 1))
        'the program made model call 2 but the script has only 1 completion; add more to the script'
        """
        return cls(
            f"the program made {call} but the script has only {counted(script_length, 'completion')}; "
            "add more to the script",
            prompt=prompt,
            index=index,
        )


class UnmatchedPrompt(AgenticMachinesError):
    """A mapping model received a prompt that none of its rules matches."""

    def __init__(self, message: str, *, prompt: str = "") -> None:
        super().__init__(message)
        self.prompt = prompt


class ReplayMismatch(AgenticMachinesError):
    """A replayed cassette received a prompt other than the recorded one."""

    def __init__(self, message: str, *, index: int = -1, expected: str = "", got: str = "") -> None:
        super().__init__(message)
        self.index = index
        self.expected = expected
        self.got = got


class CertificateError(AgenticMachinesError):
    """An internal error: a certificate the toolkit was about to return did not re-check.

    Every counterexample a check returns is replayed on the machine, and the property is
    checked again on the replayed run, before it is returned (likewise every named
    obstruction state of the deciders is checked again). When that fails, the toolkit
    raises this instead of returning a certificate that is not true: either the machine's
    harness is not a function (the replay gave another outcome) or it is a bug of
    agentic_machines. ``property`` names the property (or the relation) concerned.

    >>> str(CertificateError("halts_within(3)", "the replay halted after 2 steps"))
    'internal error: the counterexample to halts_within(3) did not re-check: the replay halted after 2 steps. Check that the harness is a function (same state and completion, same outcome); if it is, report this as a bug of agentic_machines, with the machine'
    """

    def __init__(self, property: str, problem: str, what: str = "counterexample") -> None:
        super().__init__(
            f"internal error: the {what} to {property} did not re-check: {problem}. Check that "
            "the harness is a function (same state and completion, same outcome); if it is, "
            "report this as a bug of agentic_machines, with the machine"
        )
        self.property, self.problem, self.what = property, problem, what

    def __reduce__(self) -> tuple:
        # pickled with its arguments (a check on an executor sends exceptions back)
        return (type(self), (self.property, self.problem, self.what))


class ModelError(AgenticMachinesError):
    """A model backend (for instance an HTTP server) failed in a way retries cannot fix."""


class Undecided(AgenticMachinesError):
    """A deterministic computation ran out of fuel before reaching an answer.

    Raised instead of guessing: the caller may retry with more fuel, or report the
    question as undecided.
    """


class ClockDependent(Undecided):
    """A transition whose outcome came from the wall clock or the host's load, not from h.

    Raised by h when an outcome was decided by a wall-clock deadline (a block of model
    code stopped by its ``timeout_s``), or by load (a worker killed by the host under
    memory pressure, a CPU-seconds limit): on another machine, or on this one when it is
    less busy, the same state and completion can give another outcome, so h is not known
    to be a function there. ``outcome`` is what happened this time, the state a run
    continues with (the model reads the timeout, as in the reference architectures);
    ``reason`` names the deadline or the load.

    Being an :class:`Undecided`, it is never a fact: ``explore``, ``check_properties`` and
    every verdict count the transition as undecided, with the reason. ``run`` catches it,
    goes on with ``outcome`` and marks the step ``clock`` (``"clock": true`` in the trace
    file). To make the transition decided, give the block a smaller line budget than its
    deadline allows, or a longer ``timeout_s``.

    >>> exc = ClockDependent("the block ran past its 3 s wall-clock deadline", "next-state")
    >>> isinstance(exc, Undecided), exc.outcome, str(exc)
    (True, 'next-state', 'the block ran past its 3 s wall-clock deadline')
    """

    def __init__(self, reason: str, outcome: Any) -> None:
        super().__init__(reason)
        self.reason = reason
        self.outcome = outcome

    def __reduce__(self) -> tuple:
        # pickled with both arguments (explore on an executor sends exceptions back)
        return (type(self), (self.reason, self.outcome))


class ParseError(AgenticMachinesError, ValueError):
    """Program text could not be read. Carries the 1-based ``line`` and ``column``, and
    ``problem``: what is wrong without the message's advice on fixing it (the advice
    speaks to a programmer writing a file; a model's completion that does not read is
    an outcome, reported with the problem alone).

    >>> e = ParseError("unclosed '(': add ')'", line=1, column=3, problem="unclosed '('")
    >>> str(e), e.problem
    ("unclosed '(': add ')' (line 1, column 3)", "unclosed '('")
    """

    def __init__(self, message: str, *, line: int = 0, column: int = 0, problem: str = "") -> None:
        super().__init__(f"{message} (line {line}, column {column})" if line else message)
        self.line = line
        self.column = column
        self.reason = message
        self.problem = problem or message

    def __reduce__(self) -> tuple:
        # keyword arguments survive pickling (explore on an executor sends errors back)
        return (_parse_error, (self.reason, self.line, self.column, self.problem))


def _parse_error(message: str, line: int, column: int, problem: str) -> ParseError:
    return ParseError(message, line=line, column=column, problem=problem)


class EvaluationError(AgenticMachinesError):
    """A program raised a runtime error (unbound variable, bad argument, ...)."""


class MalformedProgram(AgenticMachinesError, ValueError):
    """A CEK program was read but is not well formed (a bad special form, an unbound
    variable, a reserved name bound as a variable, a procedure inside quoted code)."""


class ProgramDiverged(EvaluationError):
    """A CEK program provably loops: its deterministic run repeated a state exactly."""


class UnboundEffect(EvaluationError):
    """A Spell program used an effect function (a name starting with ``!``, ``leaf-llm``
    or a tool) outside the outer ``eval`` of its trailing form, where it is unbound."""


class ReplayDivergence(AgenticMachinesError):
    """A rerun block called a cached primitive with arguments other than the first run's.

    Blocks are rerun after every model or child call (the REPL-Plan technique); a rerun
    must repeat the same calls in the same order, so code whose calls depend on
    something that changes between runs (time, randomness, hidden state) is rejected.
    """


class UnknownMachine(AgenticMachinesError, LookupError):
    """A machine name (command line, catalog) matches no fixture or architecture."""


class REPLNameError(NameError):
    """REPL-Plan: an undefined name was used as a value (not called), so nothing was spawned.

    Shown to the model in the block's stderr; calling an undefined name instead spawns a
    child REPL of that name.
    """


class DepthExceeded(AgenticMachinesError):
    """REPL-Plan: calling a child REPL would nest REPLs deeper than ``max_depth``.

    Raised at the call site inside the caller's block (so the model sees it in stderr);
    solve the sub-task in the current REPL or raise ``max_depth``.
    """


class BlocksExceeded(AgenticMachinesError):
    """REPL-Plan: a REPL wrote ``max_blocks`` blocks in one invocation without answering.

    For a child it is raised at the call site in the caller's block; for ``main`` it
    ends the episode as a failure. Raise ``max_blocks`` or make the REPL call answer().
    """


class ModelCallsExceeded(AgenticMachinesError):
    """REPL-Plan: the episode used all ``max_model_calls`` model calls; it ends as a failure."""


class BudgetExceeded(BaseException):
    """A deterministic line budget ran out inside harness or model-written code.

    Derived from ``BaseException`` (like ``KeyboardInterrupt``) so that ``except
    Exception`` in model-written code cannot swallow it.
    """


class ExecutionFailure(AgenticMachinesError):
    """An isolated block of model code ended without a result of its own.

    Not raised to the caller of a harness: the failure becomes the block's outcome (its
    ``status`` and ``error``, and a line in its stderr that the model sees in its next
    prompt, as it sees an exception). The worker that ran the block is stopped; the next
    block gets a new worker whose namespaces are rebuilt by replaying the earlier blocks.
    """


class ExecutionTimeout(ExecutionFailure):
    """A block ran longer than its wall-clock deadline (``timeout_s``); its worker was killed.

    Make the block do less per call (split the work over several blocks), or raise
    ``timeout_s``.
    """


class ExecutionMemoryExceeded(ExecutionFailure):
    """A block needed more memory than the worker's address-space limit allows.

    Work on smaller pieces, or raise the executor's ``memory_mb`` limit.
    """


class WorkerDied(ExecutionFailure):
    """The worker process ended, was killed by a signal, or broke the message protocol.

    Model code that ends its process (``os._exit``), exceeds the CPU-seconds limit or
    writes garbage on the message channel ends this way; the harness goes on with a new
    worker.
    """


class IsolationFallback(UserWarning):
    """A weaker sandbox than asked for: the namespace level uses ``unshare`` because
    bubblewrap does not work, or ``"strongest"`` is only ``"process"`` because no
    namespace tool works (``AGENTIC_MACHINES_STRONGEST=require`` makes that an error).

    A warning, never silent: its message names why (not installed, no user namespaces,
    ...). ``agentic-machines doctor`` says what this machine lacks; install bubblewrap, or
    let the machine's administrator allow unprivileged user namespaces.
    """


def unhashable_state(state: Any, completion: str, outcome: Any) -> InvalidMachine:
    """The error for a harness that returned an unhashable outcome: states are kept in
    sets and dicts, so a state must be hashable.

    >>> print(unhashable_state(0, "a", [1]))
    h(0, 'a') returned [1], which is not hashable, so it cannot be a state; return a hashable value (a tuple, a frozenset, a frozen dataclass) instead of a list, dict or set
    """
    return InvalidMachine(
        f"h({clip(repr(state), 80)}, {clip(repr(completion), 80)}) returned {clip(repr(outcome), 80)}, "
        "which is not hashable, so it "
        "cannot be a state; return a hashable value (a tuple, a frozenset, a frozen dataclass) "
        "instead of a list, dict or set"
    )


def none_state(machine: Any, s: Any) -> InvalidMachine:
    """The error for a harness that returned ``None``: not a state (a graph has no None
    node, and ``None`` means "no state" across the toolkit), most often a missing ``return``.

    >>> from agentic_machines import TableMachine, HALT
    >>> print(none_state(TableMachine({0: "p"}, {(0, "a"): HALT}), 0))
    h(0, ·) of 'table' returned None, which is not a state; return a state, HALT or DIVERGE (a missing return?)
    """
    return InvalidMachine(
        f"h({s!r}, ·) of {machine.name!r} returned None, which is not a state; return a state, HALT or "
        "DIVERGE (a missing return?)"
    )


def equal_states(machine: str, met: Any, now: Any, where: str) -> InvalidMachine:
    """The error for a machine that reaches two states equal by ``==`` but of different
    types (``1`` and ``True``): a search keeps states in dicts, which take them for one,
    so a verdict on such a machine could be wrong; the harness must tell them apart by ``==``.

    >>> print(equal_states("m", 1, True, "step 2"))
    m reaches 1 (int) and, at step 2, True (bool): states equal by == but not the same (the search, like any set or dict, takes them for one state, so no verdict on this machine would be sound); give such states values that == tells apart too (e.g. ('flag', True) beside 1) and check again
    """
    return InvalidMachine(
        f"{machine} reaches {clip(repr(met), 80)} ({type(met).__name__}) and, at {where}, "
        f"{clip(repr(now), 80)} "
        f"({type(now).__name__}): states equal by == but not the same (the search, like any set "
        "or dict, takes them for one state, so no verdict on this machine would be sound); give "
        "such states values that == tells apart too (e.g. ('flag', True) beside 1) and check again"
    )
