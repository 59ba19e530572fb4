"""The arguments every subcommand shares, in one place.

Every verb that takes a machine takes it the same way: a ``TARGET`` (a built-in name, a
machine file or ``module:attribute``, :mod:`agentic_machines.cli.targets`) and, when it
follows completions, ``-c/--completion TEXT`` (repeated) and ``--completions FILE``.
Numbers are checked here (:func:`natural`, :func:`positive`), files are read here
(:func:`read_input`, :func:`read_script`, at most :data:`MAX_INPUT_BYTES`), and a usage
error is one line and exit 2 (:class:`Parser`). The subcommand modules import this module
and none of them imports another subcommand's module, so ``cli/`` has no import circle.

>>> p = Parser(prog="demo")
>>> add_target_arguments(p)
>>> args = p.parse_args(["f2-mul", "-c", "1", "--completion", "0", "-c", "1"])
>>> args.name, completions_from(args)
('f2-mul', ['1', '0'])
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass
from typing import Any, NoReturn

from .._files import excerpt, read_regular
from .._text import counted
from ..architectures.catalog import runs_model_code
from ..errors import InvalidArgument

__all__ = [
    "Parser",
    "MAX_INPUT_BYTES",
    "MAX_MESSAGE",
    "TARGET_HELP",
    "clip",
    "natural",
    "positive",
    "read_input",
    "read_script",
    "add_target_arguments",
    "completions_from",
    "completions_for",
    "add_isolation_arguments",
    "seconds",
    "AgentOptions",
    "agent_options",
    "DEFAULT_STEP_TIMEOUT",
    "Watched",
    "process_state",
    "restore_process_state",
    "budget_note",
    "graph_budget_note",
    "BUDGET_NOTE_LINES",
    "machine_with_isolation",
    "add_bound_arguments",
    "file_stem",
]

MAX_INPUT_BYTES = 10 * 1024 * 1024
"""The largest script or program file the command reads (10 MiB); larger ones are refused."""

MAX_MESSAGE = 300
"""The most characters of an error message printed (input echoed in it is cut)."""

TARGET_HELP = (
    "a built-in name (agentic-machines check --help lists them), a machine file "
    "PATH.json or PATH.toml, module:attribute / file.py:attribute naming an "
    "AgenticMachine or an agent function fn(model), or 'module:factory()' / "
    "'file.py:factory()' (quoted) calling a factory that returns an AgenticMachine"
)
"""One phrase describing every accepted target, for ``--help`` texts."""


def clip(message: str) -> str:
    r"""At most MAX_MESSAGE characters, escaped: a message may quote input, which may be
    huge, or hold terminal escapes (a file name, a file's content, a user's exception).

    >>> print(clip("bad \x1b[2J name"))
    bad \x1b[2J name
    """
    return excerpt(message, MAX_MESSAGE)


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (like every other error) and exit 2.

    >>> print(Parser(prog="x").format_usage().strip())
    usage: x [-h]
    """

    lazy_epilog: Any = None
    """A function giving the epilog, called only when the help is shown (``check --help``
    lists the built-in names without every command importing the catalog)."""

    def format_help(self) -> str:
        if self.lazy_epilog is not None:
            self.epilog = self.lazy_epilog()
        return super().format_help()

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {clip(message)} (see '{self.prog} --help')\n")


def natural(text: str) -> int:
    """An argument that is a whole number 0 or more (``--depth``, ``--max-steps``).

    >>> natural("0")
    0
    >>> natural("-1")
    Traceback (most recent call last):
      ...
    argparse.ArgumentTypeError: expected a number 0 or more, got -1
    """
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a number 0 or more, got {text}")
    return value


def positive(text: str) -> int:
    """An argument that is a whole number 1 or more (``--max-states``, ``--fuel``).

    >>> positive("3")
    3
    >>> positive("0")
    Traceback (most recent call last):
      ...
    argparse.ArgumentTypeError: expected a number 1 or more, got 0
    """
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a number 1 or more, got {text}")
    return value


def read_input(path: str | os.PathLike, what: str = "file") -> str:
    """The UTF-8 text of a script or program file, at most :data:`MAX_INPUT_BYTES` long.

    Only a regular file is read: a directory, a FIFO, a device (``/dev/zero``) or a socket
    is refused at once, as is a file that is too large, holds binary data (a NUL byte,
    as ``/proc/self/environ`` does) or is not UTF-8 text; the error names the path and
    quotes none of the content.

    >>> import tempfile
    >>> read_input(tempfile.mkdtemp(), "script")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
      ...
    agentic_machines.errors.InvalidArgument: ...: is a directory, not a regular file; give the path of a script file
    """
    name = os.fspath(path)

    def error(problem: str) -> InvalidArgument:
        return InvalidArgument(f"{name}: {problem}")

    data = read_regular(name, limit=MAX_INPUT_BYTES, what=what, error=error)
    if b"\x00" in data:
        raise error(f"is binary data (a NUL byte at byte {data.index(0)}), not a text {what} file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidArgument(
            f"{name} is not UTF-8 text (byte {exc.start}); give a text {what} file"
        ) from None


def read_script(path: str | os.PathLike) -> list[str]:
    """Completions from a script file: a JSON list of strings, or one completion per line.

    A JSON list is the way to give completions that contain newlines.

    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
    ...     _ = f.write("yes\\nno\\n")
    >>> read_script(f.name)
    ['yes', 'no']
    """
    text = read_input(path, "script")
    if text.lstrip().startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InvalidArgument(
                f"{path}: looks like a JSON list but does not parse ({exc.msg} at line {exc.lineno})"
            ) from None
        except RecursionError:
            raise InvalidArgument(f"{path}: JSON nested too deeply to read") from None
        if not isinstance(data, list) or not all(isinstance(c, str) for c in data):
            raise InvalidArgument(f"{path}: a JSON script must be a list of strings")
        return data
    return text.splitlines()


def add_target_arguments(parser: Any, *, completions: bool = True) -> None:
    """Add the ``TARGET`` argument (and the completion options) to a subcommand's parser.

    Every command that takes a machine uses this, so they all accept the same targets
    and the same ``-c/--completion TEXT`` and ``--completions FILE``.

    >>> p = argparse.ArgumentParser()
    >>> add_target_arguments(p)
    >>> completions_from(p.parse_args(["m.json", "-c", "yes", "-c", "no"]))
    ['yes', 'no']
    """
    parser.add_argument("name", metavar="TARGET", help=TARGET_HELP)
    if completions:
        parser.add_argument(
            "-c",
            "--completion",
            action="append",
            dest="completion",
            metavar="TEXT",
            help="a completion to follow (repeat it); replaces the machine's own alphabet",
        )
        parser.add_argument(
            "--completions",
            metavar="FILE",
            help="completions to follow: one per line, or a JSON list of strings",
        )


def completions_from(args: Any, *files: str) -> list[str] | None:
    """The completions given by ``-c``/``--completion`` and ``--completions FILE``, or None.

    ``files`` names further attributes of ``args`` that hold a completions file (an old
    spelling such as ``test --alphabet``). A file that holds no completion is refused: an
    empty alphabet would silently fall back to the machine's own.

    >>> completions_from(argparse.Namespace(completion=None, completions=None)) is None
    True
    """
    given = list(getattr(args, "completion", None) or [])
    for attribute in ("completions", *files):
        path = getattr(args, attribute, None)
        if path:
            read = read_script(path)
            if not read:
                raise InvalidArgument(
                    f"{path}: the completions file holds no completion; give one per line, "
                    "or a JSON list of strings"
                )
            given += read
    return list(dict.fromkeys(given)) or None


def completions_for(args: Any, machine: Any, name: str, *files: str) -> list[str] | None:
    """:func:`completions_from`, checked against ``machine``'s alphabet: every verb refuses a
    completion outside a finite alphabet the same way (one line, exit 2), before it runs.

    A machine with no finite alphabet (every string a completion) takes any completion.

    >>> from agentic_machines.fixtures import fixture
    >>> completions_for(argparse.Namespace(completion=["zzz"], completions=None),
    ...                 fixture("halt1"), "halt1")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
      ...
    agentic_machines.errors.InvalidArgument: 'zzz' is not in the completion alphabet ['0', '1'] of 'halt1'; ...
    """
    given = completions_from(args, *files)
    alphabet = getattr(machine, "completions", None)
    if given is None or alphabet is None:
        return given
    known = set(alphabet)
    for completion in given:
        if completion not in known:
            listed = sorted(alphabet, key=repr)
            shown = ", ".join(map(repr, listed[:8])) + (", ..." if len(listed) > 8 else "")
            raise InvalidArgument(
                f"{completion!r} is not in the completion alphabet [{shown}] of {name!r}; "
                "give completions from it, or leave out -c/--completions to use all of it"
            )
    return given


def add_bound_arguments(
    parser: argparse.ArgumentParser,
    max_states: int = 200,
    depth: str = "the whole finite machine; 2 otherwise",
) -> None:
    """``--depth`` and ``--max-states``: how far the verbs that search a machine's graph
    (``diagram``, ``explore``, ``test``) go. ``max_states`` and ``depth`` (the text of
    the depth's default) are the verb's defaults: ``test`` searches further by default.

    >>> p = argparse.ArgumentParser()
    >>> add_bound_arguments(p)
    >>> args = p.parse_args(["--depth", "3"])
    >>> args.depth, args.max_states
    (3, 200)
    """
    parser.add_argument(
        "--depth", type=natural, metavar="N", help=f"search depth (default: {depth})"
    )
    parser.add_argument(
        "--max-states",
        type=positive,
        default=max_states,
        metavar="N",
        help=f"state bound (default: {max_states:,})",
    )


def add_stop_early_argument(parser: argparse.ArgumentParser) -> None:
    """``--no-stop-early``: the verbs that run ``check_properties`` search the whole graph
    (``stop_early=False``) instead of stopping once every property has its answer.

    >>> p = argparse.ArgumentParser()
    >>> add_stop_early_argument(p)
    >>> p.parse_args([]).stop_early, p.parse_args(["--no-stop-early"]).stop_early
    (True, False)
    """
    parser.add_argument(
        "--no-stop-early",
        dest="stop_early",
        action="store_false",
        help="search the whole graph (to the bounds) instead of stopping once every property "
        "has a counterexample; slower, and no verdict changes (a keyed never_diverges loop is "
        "followed --max-states rounds either way)",
    )


def add_isolation_arguments(parser: argparse.ArgumentParser, code: str | None = None) -> None:
    """``--isolation``, ``--line-budget N`` and ``--step-timeout S``: where the target's
    untrusted code runs and how long one of its steps may go, the same on every verb.

    ``--isolation`` is one flag for both kinds of untrusted code: a user's agent function
    (a ``file.py:fn`` target; default ``process``, its own code in a worker process) and,
    when ``code`` names it (the verbs that feed RLM and REPL-Plan completions from
    outside), a model's code blocks (default ``strongest``). ``inline`` runs it in this
    process and is only ever asked for by name; the verb then says so on stderr.
    ``--line-budget`` and ``--step-timeout`` bound an agent function's step (lines run
    without a model call; wall-clock seconds): read with :func:`agent_options`.

    >>> p = argparse.ArgumentParser()
    >>> add_isolation_arguments(p)
    >>> args = p.parse_args(["--line-budget", "20000"])
    >>> args.isolation, args.line_budget, args.step_timeout
    (None, 20000, None)
    """
    models = f"; for RLM and REPL-Plan, where {code} runs (default: strongest)" if code else ""
    parser.add_argument(
        "--isolation",
        choices=("strongest", "namespace", "process", "inline"),
        default=None,
        help="where the target's untrusted code runs: an agent function's steps (default: "
        f"process){models}; inline runs it in this process, only for code you trust "
        "(docs/threat_model.md)",
    )
    parser.add_argument(
        "--line-budget",
        type=positive,
        metavar="N",
        help="an agent function's step that runs N Python lines without calling the model "
        "diverges (default: agent_machine's, 100,000); lower it when divergent steps "
        "take the time",
    )
    parser.add_argument(
        "--step-timeout",
        type=seconds,
        metavar="S",
        help="an agent function's step that runs past S seconds (a tool that blocks) is "
        f"undecided, not a hang (default: {DEFAULT_STEP_TIMEOUT:g})",
    )


def seconds(text: str) -> float:
    """An argument that is a number of seconds above 0 (``--step-timeout``).

    >>> seconds("0.5")
    0.5
    >>> seconds("0")
    Traceback (most recent call last):
      ...
    argparse.ArgumentTypeError: expected a number of seconds above 0, got 0
    """
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number of seconds above 0, got {text}")
    return value


DEFAULT_STEP_TIMEOUT = 10.0
"""An agent function's step timeout when neither ``--step-timeout`` nor the machine sets one."""


@dataclass(frozen=True)
class AgentOptions:
    """What ``--isolation``, ``--line-budget`` and ``--step-timeout`` ask of an agent
    function's machine; ``None`` is "not given" (the machine's own, or the default).

    >>> AgentOptions(line_budget=20_000)
    AgentOptions(isolation=None, line_budget=20000, step_timeout=None)
    """

    isolation: str | None = None
    line_budget: int | None = None
    step_timeout: float | None = None

    def build(self, fn: Any) -> Any:
        """The machine of the agent function ``fn`` (a ``file.py:fn`` target), built at
        the ``--isolation`` level with the ``--line-budget`` and ``--step-timeout`` asked
        for (``None``: :func:`agent_machine`'s defaults; the step timeout's default is
        :data:`DEFAULT_STEP_TIMEOUT` at every level, so no verb hangs on a tool).

        >>> m = AgentOptions(line_budget=500).build(lambda model: model("?"))
        >>> m.isolation, m.line_budget, m.step_timeout
        ('process', 500, 10.0)
        """
        from ..runtime.agent import agent_machine  # only for an agent function's target

        kwargs: dict[str, Any] = {"isolation": self.level()}
        if self.line_budget is not None:
            kwargs["line_budget"] = self.line_budget
        kwargs["step_timeout"] = self.step_timeout or DEFAULT_STEP_TIMEOUT
        # inline, what the agent changes of this process is watched (Watched)
        return agent_machine(Watched(fn) if kwargs["isolation"] == "inline" else fn, **kwargs)

    def apply(self, machine: Any) -> Any:
        """The agent ``machine`` a target names or a factory returns, with the options
        given by name: built again from its function when ``--isolation`` or
        ``--line-budget`` differ from its own (both are fixed when its workers start), or
        when it runs inline and its function is not yet :class:`Watched`; the step
        timeout falls back to :data:`DEFAULT_STEP_TIMEOUT` when it has none.

        >>> from agentic_machines.runtime.agent import agent_machine
        >>> m = agent_machine(lambda model: model("?"), step_timeout=None)
        >>> AgentOptions(step_timeout=2.5).apply(m) is m, m.step_timeout
        (True, 2.5)
        >>> type(AgentOptions().apply(agent_machine(m.fn, isolation="inline")).fn).__name__
        'Watched'
        """
        from ..runtime.agent import agent_machine  # only for an agent function's target

        level = None if self.isolation is None else self.level()
        inline = (level or machine.isolation) == "inline"
        if (
            (level or machine.isolation) != machine.isolation
            or (self.line_budget or machine.line_budget) != machine.line_budget
            or (inline and not isinstance(machine.fn, Watched))
        ):
            machine = agent_machine(
                Watched(machine.fn)
                if inline and not isinstance(machine.fn, Watched)
                else machine.fn,
                *machine.args,
                name=machine.name,
                completions=machine.completions,
                line_budget=self.line_budget or machine.line_budget,
                isolation=level or machine.isolation,
                step_timeout=self.step_timeout or machine.step_timeout or DEFAULT_STEP_TIMEOUT,
                **machine.kwargs,
            )
        if self.step_timeout is not None or machine.step_timeout is None:
            machine.step_timeout = self.step_timeout or DEFAULT_STEP_TIMEOUT
        if machine.isolation == "inline" and self.isolation == "inline":
            print(
                "isolation: inline (the agent function runs in this process, which it can "
                "change: docs/determinism.md)",
                file=sys.stderr,
            )
        return machine

    def level(self) -> str:
        """The level an agent function runs at: ``process`` unless ``inline`` is asked
        for by name (``strongest`` is ``process``, the strongest level for a function).

        >>> AgentOptions().level(), AgentOptions("strongest").level()
        ('process', 'process')
        """
        if self.isolation == "namespace":
            raise InvalidArgument(
                "--isolation namespace is a level for model-written code blocks; an agent "
                "function runs at process (its default) or inline (asked for by name)"
            )
        return "inline" if self.isolation == "inline" else "process"


BUDGET_NOTE_LINES = 1_000_000
"""Lines run by steps that exhausted their budget from which :func:`budget_note` speaks up:
such a step runs every line of its budget, traced; a million traced lines take from a fifth
of a second (a quiet 2-core VM) to two seconds (a loaded one): docs/scaling.md, budget."""


def budget_note(machine: Any, diverged: int, steps: int) -> str | None:
    """The line saying that an agent function's divergent steps took the time, or ``None``.

    A step that runs out of its line budget runs all of it, so ``diverged`` such steps
    cost ``diverged * line_budget`` traced lines, against a handful for a step that
    reaches the model; the note comes when they add up to :data:`BUDGET_NOTE_LINES`.

    >>> from agentic_machines.runtime.agent import agent_machine
    >>> m = agent_machine(lambda model: model("?"))
    >>> print(budget_note(m, 12, 40))
    note: 12 of 40 steps ran out of their line budget, and each ran all 100,000 lines: they take most of the time; lower it with --line-budget N if no step needs that many
    >>> budget_note(m, 0, 40) is None
    True
    """
    from ..runtime.agent import AgentMachine  # only to tell an agent function's machine

    budget = getattr(machine, "line_budget", None) if isinstance(machine, AgentMachine) else None
    if not diverged or budget is None or diverged * budget < BUDGET_NOTE_LINES:
        return None
    return (
        f"note: {diverged:,} of {counted(steps, 'step')} ran out of their line "
        f"budget, and each ran all {budget:,} lines: they take most of the time; lower it "
        "with --line-budget N if no step needs that many"
    )


def graph_counts(stats: dict[str, Any]) -> str:
    """What a written graph holds, from its ``stats`` (``diagram`` and ``view`` say it),
    with its undecided steps, which a drawing may not show.

    >>> graph_counts({"states": 1, "edges": 0, "depth": 0, "undecided": 1})
    '1 state, 0 edges, depth 0, 1 undecided step'
    """
    undecided = stats.get("undecided", 0)
    return (
        f"{counted(stats['states'], 'state')}, {counted(stats['edges'], 'edge')}, "
        f"depth {stats['depth']}"
        + (f", {counted(undecided, 'undecided step')}" if undecided else "")
    )


def graph_budget_note(machine: Any, graph: Any) -> str | None:
    """:func:`budget_note` for an explored ``graph``: its steps to ``DIVERGE`` (``explore``,
    ``diagram`` and ``check`` print it on stderr, so their stdout stays what it was).

    >>> from agentic_machines.fixtures import fixture
    >>> from agentic_machines.runtime.explore import explore
    >>> graph_budget_note(fixture("diverge1"), explore(fixture("diverge1"))) is None
    True
    """
    from ..machine import DIVERGE  # the sentinel, only once a graph is there

    into = graph.in_edges(DIVERGE, data=True) if DIVERGE in graph else ()
    diverged = sum(len(edge["completions"]) for _s, _t, edge in into)
    return budget_note(machine, diverged, graph.graph["stats"]["transitions"])


class Watched:
    """An agent function run in this process (``--isolation inline``) that cannot point
    the verb's output or files elsewhere: at each model call, where it waits (suspended)
    while the verb goes on, what it made of ``sys.stdout``, ``sys.stderr`` and the working
    folder is put aside and the verb's own put back, and the other way round when the
    model answers; when the function ends, the verb's are put back. (A class, not a
    closure: a machine must pickle.)

    >>> import contextlib, io, sys
    >>> def hider(model):
    ...     with contextlib.redirect_stdout(io.StringIO()):
    ...         return model("?")
    >>> host = sys.stdout
    >>> Watched(hider)(lambda prompt: str(sys.stdout is host))  # the verb's, while it waits
    'True'
    """

    def __init__(self, fn: Any) -> None:
        self.fn = fn
        self.__name__ = getattr(fn, "__name__", "agent")

    def __call__(self, model: Any, *args: Any, **kwargs: Any) -> Any:
        host = [process_state()]  # the verb's, as it was when it last handed over

        def asked(prompt: Any) -> Any:
            mine = process_state()
            restore_process_state(host[0])
            try:
                return model(prompt)
            finally:  # resumed (or ended while waiting): the agent's again
                host[0] = process_state()
                restore_process_state(mine)

        try:
            return self.fn(asked, *args, **kwargs)
        finally:
            restore_process_state(host[0])


def process_state() -> tuple:
    """What an agent function run in this process can point elsewhere under a verb:
    ``(sys.stdout, sys.stderr, working folder)``.

    >>> import os
    >>> process_state()[2] == os.getcwd()
    True
    """
    return sys.stdout, sys.stderr, os.getcwd()


def restore_process_state(state: tuple) -> None:
    """Put back a :func:`process_state`.

    >>> state = process_state()
    >>> restore_process_state(state); process_state() == state
    True
    """
    sys.stdout, sys.stderr = state[0], state[1]
    if os.getcwd() != state[2]:
        os.chdir(state[2])


def agent_options(args: Any) -> AgentOptions:
    """The :class:`AgentOptions` of a verb's parsed ``args`` (all ``None`` on a verb
    without the flags).

    >>> agent_options(argparse.Namespace(isolation="inline", line_budget=None))
    AgentOptions(isolation='inline', line_budget=None, step_timeout=None)
    """
    return AgentOptions(
        getattr(args, "isolation", None),
        getattr(args, "line_budget", None),
        getattr(args, "step_timeout", None),
    )


def machine_with_isolation(entry: Any, isolation: str | None) -> Any:
    """The machine of a catalog ``entry``, built at the ``--isolation`` level (None:
    ``strongest``) when its architecture runs model-written code; the level is reported on
    stderr, and ``inline`` with a line saying the code runs unsandboxed.

    Completions given on the command line (``-c``, ``--completions``, a script) are code
    from outside: every verb runs them isolated (the catalog's own machines are for the
    modules' fixed completions).

    >>> from agentic_machines.architectures.catalog import resolve
    >>> machine_with_isolation(resolve("f2-mul"), "strongest").name
    'f2-mul'
    """
    module = entry.module
    if module is not None and runs_model_code(module):
        from ..architectures.options import ExecOptions  # only if it runs code
        from ..execution.sandbox import namespace_tool  # only if it runs code

        options = ExecOptions(isolation=isolation or "strongest").resolved()
        level = options.isolation
        machine = module.machine(options=options)
        shown = f"namespace ({namespace_tool()})" if level == "namespace" else level
        if level == "inline":
            shown = "inline (the completions' code runs in this process, unsandboxed)"
        print(f"isolation: {shown}", file=sys.stderr)
        return machine
    return entry.machine()


def file_stem(name: str) -> str:
    """A file-name stem for a target (``pkg.mod:attr`` -> ``pkg.mod-attr``), for the
    files a verb names after it (``play``'s trace, ``view``'s page).

    >>> file_stem("examples/lamp.py:agent"), file_stem("::")
    ('lamp.py-agent', 'machine')
    """
    keep = "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in os.path.basename(name))
    return keep.strip("-.") or "machine"
