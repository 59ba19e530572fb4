"""REPL-Plan: LLM-REPLs with recursive child REPLs, as a runtime and an agentic machine.

Source: A. Z. Liu et al., "Interactive and Expressive Code-Augmented Planning with Large
Language Models" (arXiv 2411.13826, ACL 2025). The paper's full text and code were not
available: the algorithm is our reconstruction, checked against every constraint the
sources state (C1-C8). What is faithful, what we chose where the sources are silent and
what is simplified: ``docs/sources.md``, section "REPL-Plan".

The model plans by writing code into a REPL, one block per model call; each block runs
(restricted builtins, a line budget, at the level of an
:class:`~agentic_machines.architectures.options.ExecOptions`) and its stdout and stderr
join the REPL's history, which the next prompt shows. Every REPL starts with ``act``,
``get_obs``, ``get_args`` and ``answer``. An undefined name used as a callee spawns a
child REPL named after it, whose task description the model writes in a ``DESCRIBE:``
call of its own; when the child answers, the parent's block reruns with its calls cached.
Budgets (blocks per invocation, nesting depth, model calls, lines per block) end an
episode with a typed failure, never a hang.

Use :func:`solve` to run an episode with a model on an environment of
:mod:`.environments` (a :class:`Result`); :func:`machine` is the same episode as an
agentic machine on trace states, whose harness is :func:`repl_plan_program`;
:class:`HistoryPool` carries REPLs from task to task; :class:`RoutedModel` and
:func:`scripted_model` answer by script.

The SPE question (:func:`analysis`): every successor prompt of the initial state is the
main prompt again (a ``#START#`` retry) or extended, a ``DESCRIBE:`` prompt, or the
*first-invocation* prompt of a child REPL (``proofs/repl_plan_invariant.md``); the prompt
of ``count_even``'s second invocation is none of these, so by F2 the initial state is not
an SPE state.

>>> r = solve(TASK, scripted_model(), CountEnv(4))
>>> r.actions, r.status, r.model_calls
(('1', '2', '3', '4'), 'done', 4)
>>> r.repls["count_even"].invocations
2
"""

from __future__ import annotations

import copy
import difflib
import re
from collections.abc import Generator, Mapping
from dataclasses import dataclass, field
from typing import Any, Unpack

from .._text import clip_prompt_repr, counted
from ..errors import (
    BlocksExceeded,
    BudgetExceeded,
    DepthExceeded,
    InvalidArgument,
    ModelCallsExceeded,
    REPLNameError,
    ScriptExhausted,
    UnmatchedPrompt,
)
from ..execution.budget import LineBudget, restore_tracing
from ..execution.sandbox import FAILURE_STATUSES, BlockRunner, Scaffold
from ..runtime.harness import HarnessMachine, TraceState
from ..verdict import Verdict
from ._invariants import InvariantAnalysis, completion_sampler, recorded_machine
from .environments import CountEnv, checked_environment
from .options import ExecKeywords, ExecOptions, with_keywords
from .start_fix import base_prompt, requery

__all__ = [
    "TASK",
    "MAIN",
    "SCRIPT",
    "COUNT_BLOCKS",
    "COUNT_DESCRIPTIONS",
    "initial",
    "Demo",
    "HistoryPool",
    "Block",
    "Event",
    "TraceEntry",
    "REPLRecord",
    "Result",
    "repl_plan_program",
    "solve",
    "machine",
    "scripted_model",
    "RoutedModel",
    "render_call",
    "repl_name",
    "is_first_invocation",
    "successor_invariant",
    "INVARIANT_TEXT",
    "DONT_LOOP",
    "diagram_completions",
    "valid_completions",
    "analysis",
]

MAIN = "main"
"""The name of the top-level REPL."""

TASK = (
    "Count from 1 to 4: say each number with act(str(n)), in order. Hand even numbers to a helper."
)
"""The default task (REPL-Plan's Figure 4, count to four)."""

M1 = "for i in range(1, 5):\n    if i % 2:\n        act(str(i))\n    else:\n        count_even(i)"
C1 = "n = get_args()[0]\nact(str(n))\nanswer(None)"
COUNT_BLOCKS: dict[str, list[str]] = {MAIN: [M1], "count_even": [C1, C1]}
"""The count-to-four script, per REPL (the golden episode of ``docs/sources.md``, REPL-Plan)."""
COUNT_DESCRIPTIONS: dict[str, str] = {"count_even": "say the given even number"}
SCRIPT: tuple[str, ...] = (M1, COUNT_DESCRIPTIONS["count_even"], C1, C1)
"""The same script as the sequence of completions the default machine receives."""

initial = TraceState(())
"""The initial state of :func:`machine` (no completions yet)."""

DONT_LOOP = "# Do not loop: write only the next block; never write #START#.\n>>> "
"""The "don't loop" lines added after a prompt's final ``>>> `` when blocks keep
containing ``#START#`` (:mod:`.start_fix`): a comment typed at the prompt, then a fresh
prompt."""

_CALL_ARG_LIMIT = 300  # characters of one argument shown in a #CALL# line


# --------------------------------------------------------------------------------------
# values
# --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Demo:
    """A pooled REPL: its description and demonstration transcripts (the text after ``#START#``).

    Take them from a solved run: ``Demo.from_record(result.repls["check"])``.

    >>> Demo("say n", ("#CALL# say(2)\\n>>> act('2')\\n",)).description
    'say n'
    """

    description: str
    transcripts: tuple[str, ...] = ()

    @classmethod
    def from_record(cls, record: REPLRecord) -> Demo:
        """The demo of a REPL from a finished run (its description and whole transcript)."""
        return cls(record.description, (record.transcript,))


class HistoryPool:
    """REPL histories carried across tasks, as the method's seed describes ("REPL history
    reused across tasks"): after each task :func:`solve` adds every REPL but ``main`` (its
    description and transcript, as a :class:`Demo`), and a later task given the same pool
    finds them there, so calling one of those names injects that REPL with its history
    instead of spawning a new one. A name solved again gets its new transcript appended.

    >>> hp = HistoryPool()
    >>> r = solve(TASK, scripted_model(), CountEnv(4), history_pool=hp)
    >>> sorted(hp.demos), hp.demos["count_even"].description
    (['count_even'], 'say the given even number')
    """

    def __init__(self, demos: Mapping[str, Demo] | None = None) -> None:
        self.demos: dict[str, Demo] = dict(demos or {})

    def add(self, result: Any) -> None:
        """Keep the REPLs of a finished run (all but ``main``)."""
        for name, record in result.repls.items():
            if name == MAIN:
                continue
            old = self.demos.get(name)
            new = Demo.from_record(record)
            if old is not None and old.description == new.description:
                new = Demo(old.description, old.transcripts + new.transcripts)
            self.demos[name] = new

    def pool(self, extra: Mapping[str, Demo] | None = None) -> dict[str, Demo]:
        """The pool a task starts from: the kept REPLs, then ``extra`` (which wins)."""
        return {**self.demos, **(extra or {})}


@dataclass(frozen=True)
class Event:
    """Something the runtime did while running a block.

    ``kind``: ``spawned`` (a new child REPL; ``detail`` is its description),
    ``injected`` (a pooled REPL), ``reused`` (an existing REPL bound in a new
    namespace), ``rerun`` (the block ran again; ``detail`` = attempt number),
    ``cache_hit`` (a logged call replayed; ``detail`` = ``"#index"``),
    ``name_error`` (a ``REPLNameError``), ``failed`` (a budget ran out),
    ``near_miss`` (a new REPL whose name is close to an existing one: a likely typo;
    ``detail`` is the existing name).

    >>> r = solve(TASK, scripted_model(), CountEnv(4))
    >>> r.repls["main"].history[1].events[0]
    Event(kind='spawned', name='count_even', detail='say the given even number')
    """

    kind: str
    name: str = ""
    detail: str = ""


@dataclass(frozen=True)
class Block:
    """One block of a REPL's history: the code and the output of its last attempt.

    >>> r = solve("t", scripted_model({"main": ["print(1)\\nprint(x)", "answer(0)"]}), CountEnv(4))
    >>> b = r.repls["main"].history[1]
    >>> b.stdout, b.status, b.stderr.splitlines()[-1]
    ('1\\n', 'error', "REPLNameError: name 'x' is not defined")
    """

    code: str
    stdout: str
    stderr: str
    status: str
    events: tuple[Event, ...] = ()


@dataclass(frozen=True)
class TraceEntry:
    """One line of an episode trace: ``kind`` is ``prompt``, ``completion``, ``spawned``,
    ``near_miss``, ``injected``, ``reused``, ``block``, ``answer`` or ``failed``.

    >>> [e.kind for e in solve(TASK, scripted_model(), CountEnv(4)).trace][:4]
    ['prompt', 'completion', 'prompt', 'completion']
    """

    repl: str
    kind: str
    text: str


@dataclass(frozen=True)
class REPLRecord:
    """A REPL at the end of an episode: history, transcript and the names it defined.

    >>> rec = solve(TASK, scripted_model(), CountEnv(4)).repls["count_even"]
    >>> rec.invocations, rec.variables, rec.transcript.splitlines()[0]
    (2, ('n',), '#CALL# count_even(2)')
    """

    name: str
    description: str
    invocations: int
    history: tuple[Any, ...]
    transcript: str
    variables: tuple[str, ...]


@dataclass(frozen=True)
class Result:
    """What an episode returns: ``actions`` (the environment's action log), ``answer``
    (main's ``answer`` value, or None), ``trace``, ``status`` (``answered``,
    ``done`` or ``failed``), ``failure`` (the typed reason), ``model_calls``,
    ``repls`` (name -> :class:`REPLRecord`), ``prompts``, the final ``env`` and the
    ``isolation`` the blocks ran under (``"namespace (bwrap)"``, say).

    >>> r = solve("t", scripted_model({"main": ["act('1')\\nanswer('ok')"]}), CountEnv(4))
    >>> r.actions, r.answer, r.status, r.model_calls, r.success
    (('1',), 'ok', 'answered', 1, False)
    """

    actions: tuple[str, ...]
    answer: Any
    trace: tuple[TraceEntry, ...]
    status: str
    failure: str = ""
    model_calls: int = 0
    repls: Mapping[str, REPLRecord] = field(default_factory=dict)
    prompts: tuple[str, ...] = ()
    env: Any = None
    isolation: str = "inline"

    @property
    def reward(self) -> float:
        """The environment's reward at the end."""
        return 0.0 if self.env is None else float(self.env.reward)

    @property
    def success(self) -> bool:
        """The environment's success flag at the end."""
        return False if self.env is None else bool(self.env.success)


# --------------------------------------------------------------------------------------
# rendering
# --------------------------------------------------------------------------------------
def _one_line(text: str) -> str:
    return text.replace("\r", "\\r").replace("\n", "\\n")


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
_REPR_LINES = 100_000  # lines a model-defined __repr__ may run before it is cut off


def _short_repr(value: Any, limit: int = _CALL_ARG_LIMIT) -> str:
    # The value may be a model-made object whose __repr__ raises or never returns: it runs
    # under its own line budget (builtin reprs run no Python lines and cost nothing).
    # Memory addresses differ from run to run: left out, so prompts are deterministic (I10).
    budget = LineBudget(_REPR_LINES)
    try:
        with budget:
            text = repr(value)
    except BudgetExceeded:
        restore_tracing()
        if not budget.exhausted:
            raise  # an enclosing budget (the harness step's) ran out
        text = f"<{type(value).__name__}: its __repr__ ran too long>"
    except Exception:  # noqa: BLE001 - a model-made object with a broken __repr__
        text = f"<{type(value).__name__}>"
    text = _one_line(_ADDRESS.sub("", text))
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _clip(text: str, limit: int) -> str:
    # Head and tail: a traceback's last line (the error itself) matters most.
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[... {len(text) - 2 * half} characters cut ...]\n{text[-half:]}"


def render_call(name: str, args: tuple, kwargs: Mapping[str, Any]) -> str:
    """The ``#CALL#`` line of an invocation: always one line (newlines escaped).

    >>> render_call("count_even", (2,), {})
    '#CALL# count_even(2)\\n'
    >>> render_call("f", ("a\\nb",), {"k": 1})
    "#CALL# f('a\\\\nb', k=1)\\n"
    """
    parts = [_short_repr(a) for a in args] + [f"{k}={_short_repr(v)}" for k, v in kwargs.items()]
    return f"#CALL# {name}({', '.join(parts)})\n"


def _render_block(block: Block) -> str:
    lines = block.code.split("\n")
    out = ">>> " + lines[0] + "".join("\n... " + line for line in lines[1:]) + "\n"
    for text in (block.stdout, block.stderr):
        if text:
            out += text if text.endswith("\n") else text + "\n"
    return out


def _render_item(item: Any) -> str:
    if isinstance(item, Block):
        return _render_block(item)
    return item  # markers are stored already rendered


def _clean_code(completion: str) -> str:
    # A model may run on past the block: "#END#" (the demonstrations' block end) cuts it.
    at = completion.find("#END#")
    code = completion if at < 0 else completion[:at]
    return code.rstrip()


# --------------------------------------------------------------------------------------
# the runtime
# --------------------------------------------------------------------------------------
_SCAFFOLD = Scaffold(
    effects=("act", "get_obs"),
    arguments="get_args",
    finish="answer",
    spawn_on_undefined_call=True,
    builtins=True,
)
"""Every REPL's namespace starts with act, get_obs, get_args and answer (C1)."""


class _REPL:
    """A live REPL during an episode (internal; the public view is :class:`REPLRecord`)."""

    def __init__(
        self, name: str, description: str, demos: tuple[str, ...], runtime: _Runtime
    ) -> None:
        self.name = name
        self.description = _one_line(description.strip()) or f"(no description for {name})"
        self.demos = demos
        self.history: list[Any] = []
        self.transcript = ""
        self.invocations = 0
        self.runner = runtime.runner
        # The primitives are builtins too: model code may shadow or `del` a name, but a
        # primitive is never an undefined name (I7), so `del answer` spawns no REPL. The
        # REPLs of an episode pass any object to each other, so they share main's worker.
        self.runner.namespace(
            name,
            _SCAFFOLD,
            {"act": runtime.env.step, "get_obs": runtime.env.observation},
            share_with=None if name == MAIN else MAIN,
        )
        self._primitives = _SCAFFOLD.names()

    def append(self, item: Any) -> None:
        self.history.append(item)
        self.transcript += _render_item(item)

    def prompt(self) -> str:
        head = f"REPL: {self.name}\n"
        demos = "".join(
            f"#DEMO#\n{d}{'' if d.endswith(chr(10)) or not d else chr(10)}#END#\n"
            for d in self.demos
        )
        return f"{head}{demos}Description: {self.description}\n#START#\n{self.transcript}>>> "

    def record(self) -> REPLRecord:
        names = tuple(
            sorted(
                k
                for k, _ in self.runner.variables(self.name)
                if k not in self._primitives and not k.startswith("__")
            )
        )
        return REPLRecord(
            self.name,
            self.description,
            self.invocations,
            tuple(self.history),
            self.transcript,
            names,
        )


class _Abort(BaseException):
    """Ends the whole episode from any depth (a BaseException, so that run_block lets it through)."""

    def __init__(self, error: Exception) -> None:
        super().__init__(error)
        self.error = error


class _Runtime:
    def __init__(
        self,
        env: Any,
        pool: Mapping[str, Demo],
        *,
        max_blocks: int,
        max_depth: int,
        max_model_calls: int,
        block_lines: int,
        max_output: int,
        runner: BlockRunner,
        start_fix: bool = True,
    ) -> None:
        self.runner = runner
        self.start_fix = start_fix
        self.env = env
        self.pool = dict(pool)
        self.max_blocks = max_blocks
        self.max_depth = max_depth
        self.max_model_calls = max_model_calls
        self.block_lines = block_lines
        self.max_output = max_output
        self.repls: dict[str, _REPL] = {}
        self.trace: list[TraceEntry] = []
        self.prompts: list[str] = []

    def note(self, repl: str, kind: str, text: str) -> None:
        self.trace.append(TraceEntry(repl, kind, text))

    def ask(self, repl: str, prompt: str) -> Generator[str, str, str]:
        if len(self.prompts) >= self.max_model_calls:
            raise _Abort(
                ModelCallsExceeded(
                    f"the episode used all {self.max_model_calls} model calls; raise max_model_calls"
                )
            )
        self.prompts.append(prompt)
        self.note(repl, "prompt", prompt)
        completion = yield prompt
        completion = completion if isinstance(completion, str) else str(completion)
        self.note(repl, "completion", completion)
        return completion

    def ask_block(self, repl: str, prompt: str) -> Generator[str, str, str]:
        # a block is what precedes #END#: the #START# check looks at the block only
        return _clean_code((yield from self.ask(repl, prompt)))

    def new_repl(self, name: str, description: str, demos: tuple[str, ...] = ()) -> _REPL:
        repl = _REPL(name, description, demos, self)
        self.repls[name] = repl
        return repl

    def invoke(
        self, repl: _REPL, args: tuple, kwargs: Mapping[str, Any], depth: int
    ) -> Generator[str, str, Any]:
        """Run ``repl`` on one call until it answers (or, for main, the env is done)."""
        try:
            call_args = copy.deepcopy(tuple(args) + ((dict(kwargs),) if kwargs else ()))
        except Exception:  # noqa: BLE001 - an uncopyable argument is passed as it is
            call_args = tuple(args) + ((dict(kwargs),) if kwargs else ())
        repl.invocations += 1
        repl.append(render_call(repl.name, tuple(args), kwargs))
        self.runner.push_args(repl.name, call_args)
        try:
            for _ in range(self.max_blocks):
                code = yield from requery(
                    lambda prompt: self.ask_block(repl.name, prompt),
                    repl.prompt(),
                    note=DONT_LOOP,
                    enabled=self.start_fix,
                )
                events: list[Event] = []
                handle = self._handler(repl, depth, code, events)
                result = yield from self.runner.run_block(
                    repl.name,
                    code,
                    handle=handle,
                    line_budget=self.block_lines,
                    filename=f"<{repl.name}>",
                    max_output=self.max_output,
                )
                events += [Event("rerun", repl.name, str(k)) for k in range(2, result.attempts + 1)]
                events += [Event("cache_hit", kind, f"#{i}") for kind, i in result.hits]
                m = re.search(r"REPLNameError: name '([^']*)'", result.stderr)
                if m:
                    events.append(Event("name_error", m.group(1)))
                # stdout is already cut at max_output; a huge traceback message is cut too
                block = Block(
                    code,
                    result.stdout,
                    _clip(result.stderr, self.max_output),
                    result.status,
                    tuple(events),
                )
                repl.append(block)
                status = result.status
                if status in FAILURE_STATUSES:  # the worker failed: name the typed failure
                    status = f"{status} ({result.error})"
                self.note(
                    repl.name, "block", f"{status} after {counted(result.attempts, 'attempt')}"
                )
                if result.status == "finished":
                    repl.append(f"#ANSWER# {_short_repr(result.value)}\n")
                    self.note(repl.name, "answer", _short_repr(result.value))
                    return result.value
                if repl.name == MAIN and self.env.done:
                    return None
            error = BlocksExceeded(
                f"REPL {repl.name!r} wrote {self.max_blocks} blocks without calling answer(); raise max_blocks "
                "or make it answer"
            )
            repl.append(f"#FAILED# {error}\n")
            self.note(repl.name, "failed", str(error))
            raise error
        finally:
            self.runner.pop_args(repl.name)

    def _handler(self, parent: _REPL, depth: int, code: str, events: list[Event]):
        def handle(request):
            name = request.kind
            if name == MAIN:
                raise REPLNameError(
                    f"name {MAIN!r} is the top-level REPL and cannot be called", name=MAIN
                )
            if depth + 1 > self.max_depth:
                error = DepthExceeded(
                    f"calling {name!r} would nest REPLs {depth + 1} deep, above max_depth={self.max_depth}; "
                    "solve this sub-task in the current REPL"
                )
                events.append(Event("failed", name, str(error)))
                self.note(parent.name, "failed", str(error))
                raise error
            child = self.repls.get(name)
            if child is None:
                if name in self.pool:
                    demo = self.pool[name]
                    child = self.new_repl(name, demo.description, tuple(demo.transcripts))
                    events.append(Event("injected", name, child.description))
                    self.note(parent.name, "injected", name)
                else:
                    prompt = _describe_prompt(parent, name, request.args, request.kwargs, code)
                    text = yield from self.ask(name, prompt)
                    lines = text.strip().splitlines()
                    child = self.new_repl(name, lines[0] if lines else "")
                    events.append(Event("spawned", name, child.description))
                    self.note(parent.name, "spawned", f"{name}: {child.description}")
                    near = _near_miss(
                        name, [n for n in (*self.repls, *self.pool) if n not in (name, MAIN)]
                    )
                    if near:  # implicit spawning turns typos into new REPLs: say so
                        events.append(Event("near_miss", name, near))
                        self.note(
                            parent.name, "near_miss", f"{name} is a new REPL, but {near!r} exists"
                        )
            elif name not in dict(self.runner.variables(parent.name)):
                events.append(Event("reused", name))
                self.note(parent.name, "reused", name)
            # Bind the name in the caller (after run_block restored its namespace, so it stays).
            self.runner.bind_request(parent.name, name)
            return (yield from self.invoke(child, request.args, request.kwargs, depth + 1))

        return handle


def _near_miss(name: str, known: list[str]) -> str:
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.8)
    return close[0] if close else ""


def _describe_prompt(
    parent: _REPL, name: str, args: tuple, kwargs: Mapping[str, Any], code: str
) -> str:
    return (
        f"DESCRIBE: {name}\n"
        f"REPL {parent.name} called {name}, which is not defined, so a new REPL named {name} will handle it: "
        "it reads the arguments with get_args() and returns a value with answer(v).\n"
        f"Call: {render_call(name, args, kwargs)[len('#CALL# ') :]}"
        "Write a one-line description of its task.\n"
        f"#CALLER#\n{parent.prompt()[: -len('>>> ')]}{_render_block(Block(code, '', '', ''))}"
    )


MAX_BLOCKS, MAX_DEPTH, MAX_MODEL_CALLS = 8, 3, 60
"""The default budgets: blocks per invocation, nesting of children below main, model calls."""


def repl_plan_program(
    task: str = TASK,
    env: Any = None,
    *,
    pool: Mapping[str, Demo] | None = None,
    max_blocks: int = MAX_BLOCKS,
    max_depth: int = MAX_DEPTH,
    max_model_calls: int = MAX_MODEL_CALLS,
    options: ExecOptions = ExecOptions(),
    start_fix: bool = True,
) -> Generator[str, str, Result]:
    """The whole REPL-Plan episode as one generator: yields prompts, receives completions.

    ``env`` is a template: the program starts from a deep copy (``fresh()``), so it
    can be replayed from the start (HarnessMachine branching) and the caller's env is
    never touched. Budgets: ``max_blocks`` per invocation, ``max_depth`` nesting of
    children below main, ``max_model_calls`` in total. Blocks run as ``options`` say
    (:class:`ExecOptions`: the level, ``None`` is ``"strongest"``; ``block_lines`` per
    block attempt; ``max_output`` characters of stdout kept per block).
    ``start_fix`` turns on the ``#START#`` fix of the paper's appendix
    (:mod:`.start_fix`): a block containing ``#START#`` is asked again, with
    :data:`DONT_LOOP` from the second retry on; every retry is a model call.

    >>> g = repl_plan_program(options=ExecOptions(isolation="inline"))
    >>> next(g).splitlines()
    ['REPL: main', 'Description: Count from 1 to 4: say each number with act(str(n)), in order. Hand even numbers to a helper.', '#START#', '#CALL# main()', '>>> ']
    """
    rt, main = _prepare(
        task,
        env,
        pool,
        (max_blocks, max_depth, max_model_calls),
        options,
        runner=options.runner(),
        start_fix=start_fix,
    )
    return (yield from _episode(rt, main))


def _prepare(
    task: str,
    env: Any,
    pool: Mapping[str, Demo] | None,
    budgets: tuple[int, int, int],
    options: ExecOptions,
    *,
    runner: BlockRunner,
    start_fix: bool = True,
) -> tuple[_Runtime, _REPL]:
    if env is None:
        env = CountEnv(4)  # new, so unshared: not copied (a copy's lines are traced)
    else:
        env = checked_environment(env).fresh()
    for name, value in zip(("max_blocks", "max_depth", "max_model_calls"), budgets, strict=True):
        if not isinstance(value, int) or value < (0 if name == "max_depth" else 1):
            raise InvalidArgument(f"{name} must be a positive integer, got {value!r}")
    if not isinstance(start_fix, bool):
        raise InvalidArgument(f"start_fix must be True or False, got {start_fix!r}")
    pool = dict(pool or {})
    max_blocks, max_depth, max_model_calls = budgets
    rt = _Runtime(
        env,
        pool,
        max_blocks=max_blocks,
        max_depth=max_depth,
        max_model_calls=max_model_calls,
        block_lines=options.block_lines,
        max_output=options.max_output,
        runner=runner,
        start_fix=start_fix,
    )
    main_demo = pool.pop(MAIN, None)
    rt.pool = pool
    main = rt.new_repl(MAIN, task, tuple(main_demo.transcripts) if main_demo else ())
    return rt, main


def _episode(rt: _Runtime, main: _REPL) -> Generator[str, str, Result]:
    answer, status, failure = None, "failed", ""
    try:
        try:
            answer = yield from rt.invoke(main, (), {}, 0)
            finished = (
                main.history
                and isinstance(main.history[-1], str)
                and main.history[-1].startswith("#ANSWER#")
            )
            status = "answered" if finished else "done"
        except GeneratorExit:  # first: at interpreter exit the module's classes may be gone
            raise
        except BlocksExceeded as exc:
            failure = f"BlocksExceeded: {exc}"
        except _Abort as abort:
            failure = f"{type(abort.error).__name__}: {abort.error}"
            rt.note(MAIN, "failed", failure)
        return _result(rt, answer, status, failure)
    finally:
        rt.runner.close()  # stops an isolated worker, however the episode ended


def _result(rt: _Runtime, answer: Any, status: str, failure: str) -> Result:
    env = rt.env
    return Result(
        actions=tuple(env.action_log),
        answer=answer,
        trace=tuple(rt.trace),
        status=status,
        failure=failure,
        model_calls=len(rt.prompts),
        repls={name: r.record() for name, r in rt.repls.items()},
        prompts=tuple(rt.prompts),
        env=env,
        isolation=rt.runner.describe(),
    )


def solve(
    task: str,
    model: Any,
    env: Any,
    *,
    pool: Mapping[str, Demo] | None = None,
    line_budget: int | None = 2_000_000,
    max_blocks: int = MAX_BLOCKS,
    max_depth: int = MAX_DEPTH,
    max_model_calls: int = MAX_MODEL_CALLS,
    options: ExecOptions = ExecOptions(),
    start_fix: bool = True,
    history_pool: HistoryPool | None = None,
    **keywords: Unpack[ExecKeywords],
) -> Result:
    """Run REPL-Plan on ``task`` in (a copy of) ``env`` with ``model`` (anything with
    ``complete(prompt) -> str``, or a plain function). Errors of the model (e.g.
    ``ScriptExhausted``) propagate.

    ``line_budget`` bounds the Python lines between two model calls, as in
    :func:`machine` (where a step past it is ``↑``): model code can define methods the
    runtime calls outside any block (``__deepcopy__`` of a value it keeps, say) that never
    return; past the budget the episode ends with status ``failed`` and a
    ``BudgetExceeded`` failure instead of hanging. ``None`` turns it off (faster).

    ``options`` (or its fields as keywords: :mod:`.options`) say where and how model code
    runs. Its default level is resolved here, where the model is known: ``"inline"`` for a
    scripted model (``ScriptedModel``, ``MappingModel``, or one that declares
    ``scripted = True``, as :class:`RoutedModel` does), ``"strongest"`` for any other
    model, a real one above all.

    ``history_pool`` (a :class:`HistoryPool`) carries REPLs across tasks: the task starts
    with its REPLs in the pool (``pool`` wins on a shared name), and its own REPLs are
    added to it at the end, whatever the status.

    >>> r = solve(TASK, scripted_model(), CountEnv(4))
    >>> r.actions, r.isolation
    (('1', '2', '3', '4'), 'inline')
    """
    options = with_keywords(options, keywords, "repl_plan.solve")
    if history_pool is not None:
        if not isinstance(history_pool, HistoryPool):
            raise InvalidArgument(
                f"history_pool must be a HistoryPool, got {type(history_pool).__name__}; "
                "make one with repl_plan.HistoryPool() and pass it to every task"
            )
        pool = history_pool.pool(pool)
    budgets = (max_blocks, max_depth, max_model_calls)
    result = _solve(task, model, env, pool, line_budget, budgets, options, start_fix)
    if history_pool is not None:
        history_pool.add(result)
    return result


def _solve(
    task: str,
    model: Any,
    env: Any,
    pool: Mapping[str, Demo] | None,
    line_budget: int | None,
    budgets: tuple[int, int, int],
    options: ExecOptions,
    start_fix: bool,
) -> Result:
    runner = options.runner(model)
    rt, main = _prepare(task, env, pool, budgets, options, runner=runner, start_fix=start_fix)
    complete = getattr(model, "complete", model)
    gen = _episode(rt, main)
    try:
        prompt = _step(gen, None, line_budget)
        while True:
            prompt = _step(gen, complete(prompt), line_budget)
    except StopIteration as stop:
        return stop.value
    except BudgetExceeded:
        restore_tracing()
        failure = (
            f"BudgetExceeded: the runtime ran more than {line_budget} lines between two model calls "
            "(model code may define a method the runtime calls, e.g. __deepcopy__, that never returns)"
        )
        rt.note(MAIN, "failed", failure)
        return _result(rt, None, "failed", failure)


def _step(gen: Generator[str, str, Result], completion: str | None, line_budget: int | None) -> str:
    # The model call stays outside the budget, as in HarnessMachine: only the runtime is counted.
    if line_budget is None:
        return next(gen) if completion is None else gen.send(completion)
    with LineBudget(line_budget):
        return next(gen) if completion is None else gen.send(completion)


def machine(
    task: str = TASK,
    env: Any = None,
    *,
    pool: Mapping[str, Demo] | None = None,
    line_budget: int | None = 2_000_000,
    max_blocks: int = MAX_BLOCKS,
    max_depth: int = MAX_DEPTH,
    max_model_calls: int = MAX_MODEL_CALLS,
    options: ExecOptions = ExecOptions(),
    start_fix: bool = True,
    history_pool: HistoryPool | None = None,
    **keywords: Unpack[ExecKeywords],
) -> HarnessMachine:
    """REPL-Plan as an agentic machine on trace states (default: count to four).

    ``line_budget`` is the HarnessMachine's per-step budget (a step runs at most a few
    blocks plus the runtime); the REPL budgets are ``max_blocks``, ``max_depth`` and
    ``max_model_calls``, and ``options`` (or its fields as keywords: :mod:`.options`) say
    where and how blocks run. The machine does not know which model will drive it, so
    the default level is ``"strongest"``; pass ``isolation="inline"`` by name for
    trusted, scripted code. The level chosen is ``machine.kwargs["options"].isolation``.
    ``history_pool`` gives the REPLs an earlier task left in a :class:`HistoryPool` (read
    once, here: the machine's states must not depend on runs made after it was built).

    >>> m = machine(isolation="inline")
    >>> m.prompt(initial).splitlines()[0], m.name
    ('REPL: main', 'repl_plan')
    """
    return recorded_machine(
        "repl_plan.machine",
        repl_plan_program,
        "repl_plan",
        ["task", "env"],
        dict(
            task=task,
            env=CountEnv(4) if env is None else checked_environment(env),
            pool=history_pool.pool(pool) if history_pool is not None else pool,
            line_budget=line_budget,  # the HarnessMachine's own budget, not the program's
            max_blocks=max_blocks,
            max_depth=max_depth,
            max_model_calls=max_model_calls,
            options=with_keywords(options, keywords, "repl_plan.machine").resolved(),
            start_fix=start_fix,
        ),
    )


# --------------------------------------------------------------------------------------
# scripted models
# --------------------------------------------------------------------------------------
def repl_name(prompt: str) -> str | None:
    """The REPL a prompt belongs to (its first line ``REPL: <name>``), else None.

    >>> repl_name("REPL: main\\n..."), repl_name("DESCRIBE: f\\n...")
    ('main', None)
    """
    first = prompt.split("\n", 1)[0]
    return first[len("REPL: ") :] if first.startswith("REPL: ") else None


class RoutedModel:
    """A scripted model that routes each prompt by its first line.

    ``REPL: <name>`` gets the next block of ``blocks[name]``; ``DESCRIBE: <name>`` gets
    ``descriptions[name]`` (default: the name with spaces). A list that runs out raises
    :class:`~agentic_machines.errors.ScriptExhausted` naming the REPL. Records
    ``.calls`` as (prompt, completion) pairs.

    >>> m = RoutedModel({"main": ["act('1')"]}, {"helper": "say one"})
    >>> m.complete("REPL: main\\n..."), m.complete("DESCRIBE: helper\\n..."), m.complete("DESCRIBE: other_fn\\n...")
    ("act('1')", 'say one', 'other fn')
    """

    scripted = True  # its blocks are written by whoever built it: inline is the default

    def __init__(self, blocks: Mapping[str, list[str]], descriptions: Mapping[str, str]) -> None:
        self.blocks = {k: list(v) for k, v in blocks.items()}
        self.descriptions = dict(descriptions)
        self.used: dict[str, int] = {}
        self.calls: list[tuple[str, str]] = []

    def complete(self, prompt: str) -> str:
        """The routed completion for ``prompt``."""
        first = prompt.split("\n", 1)[0]
        if first.startswith("DESCRIBE: "):
            name = first[len("DESCRIBE: ") :]
            out = self.descriptions.get(name, name.replace("_", " "))
        elif first.startswith("REPL: "):
            name = first[len("REPL: ") :]
            script = self.blocks.get(name, [])
            k = self.used.get(name, 0)
            if k >= len(script):
                raise ScriptExhausted(
                    f"scripted_model has {counted(len(script), 'block')} for REPL {name!r} and was asked for block {k + 1}; "
                    f"add a block to blocks[{name!r}] or check why the run needs more",
                    prompt=prompt,
                    index=k,
                )
            self.used[name] = k + 1
            out = script[k]
        else:
            raise UnmatchedPrompt(
                f"the prompt's first line is {clip_prompt_repr(first, 62)}, which starts with neither 'REPL: ' "
                "nor 'DESCRIBE: '",
                prompt=prompt,
            )
        self.calls.append((prompt, out))
        return out


def scripted_model(
    blocks: Mapping[str, list[str]] | None = None, descriptions: Mapping[str, str] | None = None
) -> RoutedModel:
    """A model routing prompts to per-REPL scripts; with no arguments, count-to-four.

    >>> m = scripted_model({"main": ["answer(1)"]})
    >>> m.complete("REPL: main\\n...")
    'answer(1)'
    >>> m.complete("REPL: main\\n...")
    Traceback (most recent call last):
      ...
    agentic_machines.errors.ScriptExhausted: scripted_model has 1 block for REPL 'main' and was asked for block 2; add a block to blocks['main'] or check why the run needs more
    """
    if blocks is None and descriptions is None:
        blocks, descriptions = COUNT_BLOCKS, COUNT_DESCRIPTIONS
    return RoutedModel(blocks or {}, descriptions or {})


# --------------------------------------------------------------------------------------
# the SPE question
# --------------------------------------------------------------------------------------
INVARIANT_TEXT = (
    "a successor prompt is a DESCRIBE: prompt, or (both prompts without a trailing don't-loop note) the "
    "prompt of the same REPL again (a #START# retry) or extended, or the "
    "first-invocation prompt of another REPL (after its last '#START#' line comes exactly one '#CALL#' line "
    "and the final '>>> ')"
)

_FIRST_TAIL = re.compile(r"#CALL# [^\n]*\n>>> \Z")


def is_first_invocation(prompt: str) -> bool:
    """True when ``prompt`` is a REPL prompt whose own transcript is a single ``#CALL#`` line.

    >>> is_first_invocation("REPL: f\\nDescription: d\\n#START#\\n#CALL# f(1)\\n>>> ")
    True
    >>> is_first_invocation("REPL: f\\nDescription: d\\n#START#\\n#CALL# f(1)\\n>>> x\\n#ANSWER# None\\n#CALL# f(2)\\n>>> ")
    False
    """
    if repl_name(prompt) is None:
        return False
    at = prompt.rfind("\n#START#\n")
    return at >= 0 and _FIRST_TAIL.fullmatch(prompt[at + len("\n#START#\n") :]) is not None


def successor_invariant(prompt: str, successor_prompt: str) -> bool:
    """The successor-prompt invariant of REPL-Plan at a REPL prompt (``proofs/repl_plan_invariant.md``).

    >>> p = machine().prompt(initial)
    >>> successor_invariant(p, p + "act('1')\\n>>> "), successor_invariant(p, p[:-1])
    (True, False)
    >>> successor_invariant(p, p), successor_invariant(p, p + DONT_LOOP)  # #START# retries
    (True, True)
    >>> successor_invariant(p, "DESCRIBE: count_even\\n...")
    True
    """
    if successor_prompt.startswith("DESCRIBE: "):
        return True
    prompt, successor_prompt = (
        base_prompt(prompt, DONT_LOOP),
        base_prompt(successor_prompt, DONT_LOOP),
    )
    name, next_name = repl_name(prompt), repl_name(successor_prompt)
    if next_name is None:
        return False
    if next_name == name:
        return successor_prompt.startswith(prompt)  # equal: a #START# retry
    return is_first_invocation(successor_prompt)


def valid_completions() -> list[str]:
    """Well-formed main blocks of every kind: acting, spawning, erroring, answering, looping.

    >>> len(valid_completions()) > 10
    True
    """
    return [
        M1,
        "act('1')",
        "print(get_obs())",
        "answer('done')",
        "try:\n    answer(1)\nexcept Exception:\n    pass",
        "helper(1)",
        "x = helper(1)\nact(str(x))",
        "main()",
        "print(undefined_variable)",
        "count_evn(2)",
        "def f(n):\n    return 1 if n < 1 else f(n - 1)\nprint(f(3))",
        "while True:\n    pass",
        "while True:\n    try:\n        pass\n    except:\n        pass",
        "for i in range(1, 5):\n    act(str(i))",
        "x = 'unterminated",
        "import os",
        "raise SystemExit",
        "get_args()",
        "act(get_args())",
        "#END#",
    ]


def prompt_summary(prompt: str) -> str:
    r"""What identifies a REPL-Plan prompt: its REPL and the invocation it is working on.

    Every prompt of one REPL ends with the same ``>>> `` marker, so the contrast table
    names the REPL (first line) and its latest ``#CALL#`` line instead.

    >>> prompt_summary("REPL: count_even\nDescription: d\n#START#\n#CALL# count_even(4)\n>>> ")
    'REPL count_even at #CALL# count_even(4)'
    >>> prompt_summary("REPL: main\n#START#\n>>> ")
    'REPL main'
    """
    lines = prompt.split("\n")
    name = lines[0].split(":", 1)[1].strip() if lines and ":" in lines[0] else lines[0]
    head = f"{lines[0].split(':', 1)[0]} {name}"
    calls = [line for line in lines if line.startswith("#CALL#")]
    return head + (f" at {calls[-1]}" if calls else "")


def diagram_completions(prompt: str) -> list[str]:
    """A small completion alphabet for diagrams: the count-to-four step, plus one that
    errors (main) or answers at once (children).

    >>> diagram_completions("DESCRIBE: count_even\\n...")
    ['say the given even number']
    >>> diagram_completions("REPL: main\\n...") == [M1, "print(x)"]
    True
    """
    if prompt.startswith("DESCRIBE: "):
        return [
            COUNT_DESCRIPTIONS.get(prompt.split("\n", 1)[0][len("DESCRIBE: ") :], "do the sub-task")
        ]
    name = repl_name(prompt)
    if name == MAIN:
        return [M1, "print(x)"]
    if name == "count_even":
        return [C1, "answer(None)"]
    return ["answer(None)"]


def analysis(m: HarnessMachine | None = None, *, seed: int = 0, n: int = 200) -> Verdict:
    """Is the initial state of REPL-Plan an SPE state? Refuted by F2 with a concrete state.

    The obstruction state is reached by the count-to-four script's first three
    completions (main's block, the description, ``count_even``'s first block): its
    prompt is ``count_even``'s *second* invocation (it contains the first one's code),
    which is neither main's prompt extended, nor a ``DESCRIBE:`` prompt, nor a
    first-invocation prompt. The invariant is property-tested on ``n`` seeded
    completions (well-formed and malformed); a counterexample makes the verdict
    undecided. ``details["initial_state"]`` has the same check at the initial state.
    The refutation is conditional on ``proofs/repl_plan_invariant.md`` and is given only
    for a machine built by :func:`machine` (checked by the harness code's fingerprint and
    the recorded options); other machines are undecided.

    >>> v = analysis(n=50)
    >>> v.status, v.method, v.conditional
    ('refuted', 'fact:F2', True)
    """
    return ANALYSIS.analysis(m, seed=seed, n=n)


ANALYSIS = InvariantAnalysis(
    name="repl_plan",
    build=machine,
    program=repl_plan_program,
    proof="proofs/repl_plan_invariant.md",
    covers=(
        "machines built by repl_plan.machine() with any task, environment, pool and budgets, "
        "whose harness is the stock repl_plan_program"
    ),
    uncovered=lambda o: None,
    deep_script=SCRIPT[:3],
    invariant=successor_invariant,
    invariant_text=INVARIANT_TEXT,
    sample=completion_sampler(valid_completions, harness=False, huge_size=20_000),
    default_options={"isolation": "inline"},
)
"""What ``proofs/repl_plan_invariant.md`` is about: :func:`analysis` refutes only inside it."""
