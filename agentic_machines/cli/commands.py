"""The ``agentic-machines`` command (also ``python -m agentic_machines``).

Subcommands: ``demo``, ``check TARGET``, ``diagram TARGET``, ``run TARGET --script FILE``,
``play TARGET``,
``explore TARGET``, ``export TARGET -o FILE``, ``eval PROGRAM``, ``explain [TERM]``,
``gallery DIR``; ``--help`` on each. A TARGET is a built-in machine name, a machine file
(``.json``/``.toml``) or ``module:attribute`` / ``file.py:attribute``
(:mod:`agentic_machines.cli.targets`). Bad input (an unknown machine,
an unreadable file, a bad program, a bad format) prints one line,
``agentic-machines: error: ...``, on stderr and exits with status 2, never a traceback.
The line names the file of an I/O error and never echoes more than
:data:`MAX_MESSAGE` characters. Script and program files larger than
:data:`MAX_INPUT_BYTES` (10 MiB) are refused, so ``--script /dev/zero`` ends at once.

>>> main(["explain", "HALT"])  # doctest: +ELLIPSIS
HALT
====
...
0
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .. import __version__
from .._files import open_output
from .._text import counted, ending_line, escape_controls
from ..architectures.catalog import names
from ..embedding import check_embedding, identity
from ..errors import (
    AgenticMachinesError,
    EvaluationError,
    InvalidArgument,
    MalformedProgram,
    ParseError,
    ProgramDiverged,
    Undecided,
)
from ..generation import is_spe_state, spe_states
from ..machine import DIVERGE, HALT
from ..runtime.agent import ending
from ..runtime.local_models import ScriptedModel
from ..runtime.run import run
from . import doctor, exercise, explore, export, play, test_cmd, view
from ._args import (
    MAX_INPUT_BYTES,
    MAX_MESSAGE,
    Parser,
    add_bound_arguments,
    add_isolation_arguments,
    add_target_arguments,
    agent_options,
    clip,
    completions_for,
    graph_budget_note,
    graph_counts,
    machine_with_isolation,
    natural,
    positive,
    read_input,
    read_script,
)
from .test_cmd import replay_trace

__all__ = ["main", "build_parser", "read_script", "read_input", "MAX_INPUT_BYTES", "MAX_MESSAGE"]

PROG = "agentic-machines"

CHECK_DEPTH = 2
"""How deep ``check`` explores an infinite machine for sample states without --depth."""

TEXT_FORMATS = ("dot", "mermaid", "json")
SUFFIXES = {
    ".png": "png",
    ".svg": "svg",
    ".dot": "dot",
    ".gv": "dot",
    ".mmd": "mermaid",
    ".mermaid": "mermaid",
    ".json": "json",
    ".pdf": "pdf",
    ".html": "html",
}


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the command, with a subparser per subcommand.

    >>> build_parser().parse_args(["diagram", "f2-mul", "--format", "mermaid"]).format
    'mermaid'
    """
    parser = Parser(
        prog=PROG,
        description="Executable theory of LLM agents: agentic machines, embeddings, "
        "completion-generation, SPE states, and a CEK agentic evaluator.",
        epilog="Machines are named fixtures (f2-add, f2-mul, f2-const, halt1, diverge1) or "
        "architectures (react, thread, spe, ...), machine files (PATH.json, PATH.toml), or "
        "module:attribute / file.py:attribute naming a machine, a factory or an agent function. "
        "Start with: agentic-machines demo",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)

    _add_demo(sub)
    _add_check(sub)
    _add_diagram(sub)
    _add_run(sub)
    _add_eval(sub)
    _add_explain(sub)
    _add_gallery(sub)
    # the verbs with a module of their own register themselves
    for verb in (explore, export, test_cmd, exercise, play, doctor, view):
        verb.add_parser(sub)
    return parser


def _add_demo(sub: Any) -> None:
    """Register ``demo`` on the subcommand parsers ``sub``."""
    p = sub.add_parser(
        "demo",
        help="check every machine, print the verdicts, write diagrams",
        description="Check the fixtures and architectures, print verdicts with "
        "their certificates, and write PNG and Mermaid diagrams.",
    )
    p.add_argument(
        "--out",
        default="demo-out",
        metavar="DIR",
        help="folder for the diagrams (default: demo-out)",
    )
    p.set_defaults(func=_demo)


def _add_check(sub: Any) -> None:
    """Register ``check`` on the subcommand parsers ``sub``."""
    p = sub.add_parser(
        "check",
        help="the SPE and embedding checks of one machine",
        description="Decide, for a finite machine (a fixture, a machine file, a finite "
        "Python machine), which states are SPE states (exactly, by F1, with witness or "
        "obstruction) and check the identity embedding; for an architecture, print its "
        "analysis() verdict; for another infinite machine, test the start state on states "
        "explored to --depth and say what would decide it (completions given with -c or "
        "--completions are then its alphabet, as a factory would declare them).",
    )
    p.lazy_epilog = lambda: "Built-in machines: " + ", ".join(_builtin_names()) + "."
    add_target_arguments(p)
    p.add_argument(
        "--depth",
        type=natural,
        metavar="N",
        help="for a machine with infinitely many states: explore N steps for sample states "
        f"(default: {CHECK_DEPTH}); refused for a finite machine or an architecture",
    )
    add_isolation_arguments(p, "the completions' code")
    p.set_defaults(func=_check)


def _add_diagram(sub: Any) -> None:
    """Register ``diagram`` on the subcommand parsers ``sub``."""
    p = sub.add_parser(
        "diagram",
        help="draw the explored state graph of a machine",
        description="Explore a machine breadth-first and draw its state graph. "
        "Text formats (mermaid, dot, json) go to stdout without -o.",
    )
    add_target_arguments(p)
    p.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="the file to write (format from its suffix by default)",
    )
    p.add_argument(
        "--format",
        metavar="{png,svg,pdf,dot,mermaid,json,html}",  # checked after NAME, so NAME is reported first
        help="output format (default: from FILE's suffix: .png .svg .pdf .dot .gv .mmd .json "
        ".html; html is the interactive view, as the view verb writes it)",
    )
    p.add_argument(
        "--structure",
        action="store_true",
        help="draw the framework's own graph beside the explored states (a LangGraph "
        "machine: its nodes, each with the explored states its model calls made, and its "
        "conditional edges); png, svg or pdf",
    )
    add_bound_arguments(p)
    add_isolation_arguments(p, "the completions' code")
    p.set_defaults(func=_diagram)


def _add_run(sub: Any) -> None:
    """Register ``run`` on the subcommand parsers ``sub``."""
    p = sub.add_parser(
        "run",
        help="run a machine with scripted completions, print the trace",
        description="Run a machine from its initial state, answering each prompt "
        "with the next completion of the script, and print the trace.",
    )
    add_target_arguments(p, completions=False)
    given = p.add_mutually_exclusive_group(required=True)
    given.add_argument(
        "--script",
        metavar="FILE",
        help="completions: one per line, or a JSON list of strings",
    )
    given.add_argument(
        "--replay",
        metavar="TRACE",
        help="rerun a saved trace (run --save, test --save) and check every step is the same",
    )
    p.add_argument(
        "--max-steps", type=natural, default=1000, metavar="N", help="step bound (default: 1000)"
    )
    p.add_argument("--save", metavar="FILE", help="also write the trace as JSON lines")
    p.add_argument(
        "--full",
        action="store_true",
        help="print each prompt whole (default: what it gained since the previous step)",
    )
    add_isolation_arguments(p, "the script's code")
    p.set_defaults(func=_run)


def _add_eval(sub: Any) -> None:
    """Register ``eval`` on the subcommand parsers ``sub``."""
    p = sub.add_parser(
        "eval",
        help="run a program of the CEK evaluator",
        description="Evaluate a program of the project's Lisp; its llm calls "
        "are answered by the script.",
    )
    p.add_argument("program", metavar="PROGRAM", help="program text, or the path of a .lisp file")
    p.add_argument(
        "--script", metavar="FILE", help="completions for llm calls: one per line, or a JSON list"
    )
    p.add_argument(
        "--spell",
        action="store_true",
        help="PROGRAM is Spell: each completion is appended to the prefix and evaluated",
    )
    p.add_argument(
        "--tools",
        metavar="MODULE:ATTR",
        default=None,
        help="with --spell: the tools the trailing form may call, a dict of Spell names to "
        "Python functions (module:attribute or file.py:attribute)",
    )
    p.add_argument(
        "--step",
        action="store_true",
        help="print every CEK step as ⟨e, ρ, κ⟩ (κ: the program with a hole []); without "
        "--script, type each llm completion",
    )
    p.add_argument(
        "--fuel",
        type=positive,
        default=None,
        metavar="N",
        help="most machine steps before the run is reported undecided (default: 10 000 000; "
        "100 000 with --step)",
    )
    p.set_defaults(func=_eval)


def _add_explain(sub: Any) -> None:
    """Register ``explain`` on the subcommand parsers ``sub``."""
    p = sub.add_parser(
        "explain",
        help="print a definition with a runnable example",
        description="Print a definition in symbols and words, with a runnable "
        "example. Without TERM, list the terms.",
    )
    p.add_argument("term", nargs="*", metavar="TERM", help="e.g. 'SPE state', embedding, F2")
    p.set_defaults(func=_explain)


def _add_gallery(sub: Any) -> None:
    """Register ``gallery`` on the subcommand parsers ``sub``."""
    p = sub.add_parser(
        "gallery",
        help="write every gallery picture (PNG and Mermaid) into DIR",
        description="Draw the pictures of docs/gallery.md: the F2 fixtures, an "
        "embedding, the successor fans of SPE and ReAct, and each architecture with "
        "its obstruction state marked, and REPL-Plan's tree of REPLs for count-to-four, "
        "as PNG and Mermaid files.",
    )
    p.add_argument("dir", metavar="DIR", help="the folder to write (created if missing)")
    p.set_defaults(func=_gallery)


def _builtin_names() -> list[str]:
    """The built-in machine names (fixtures, then architectures), for help texts."""

    return names()


_PROGRESS_LOG = logging.getLogger("agentic_machines")  # the searches' status lines


class _Stderr(logging.Handler):
    """Each record on the stderr of the moment (a test may have replaced it)."""

    def emit(self, record: logging.LogRecord) -> None:
        print(self.format(record), file=sys.stderr, flush=True)


def _progress_to_stderr() -> None:
    """Show the status lines of long searches on stderr (what the command line does; a
    library leaves them to the ``agentic_machines`` logger).

    >>> _progress_to_stderr(); _progress_to_stderr()  # once, however often it is called
    >>> sum(isinstance(h, _Stderr) for h in _PROGRESS_LOG.handlers)
    1
    """
    if not any(isinstance(h, _Stderr) for h in _PROGRESS_LOG.handlers):
        _PROGRESS_LOG.addHandler(_Stderr())
    if _PROGRESS_LOG.level == logging.NOTSET or _PROGRESS_LOG.level > logging.INFO:
        _PROGRESS_LOG.setLevel(logging.INFO)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command with ``argv`` (default: ``sys.argv[1:]``); return the exit status.

    >>> main(["check", "no-such-machine"])  # the error line goes to stderr
    2
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, usage errors: argparse already printed
        return exc.code if isinstance(exc.code, int) else 2
    if getattr(args, "func", None) is None:
        parser.print_help()
        return 0
    _progress_to_stderr()
    try:
        return _guarded(args)
    except BrokenPipeError:  # e.g. `agentic-machines diagram react --format mermaid | head`
        _silence_stdout()
        return 0
    except (AgenticMachinesError, OSError, ValueError) as exc:
        _fail(exc)
        return 2
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130


def _guarded(args: argparse.Namespace) -> int:
    """Run the verb; refuse its result in one line if the target left the process's
    output streams or folder changed under it: a machine's own code run in this process
    (a prompt or harness function). An agent function run inline has them put back at
    every model call (:class:`~agentic_machines.cli._args.Watched`) and when a step the
    clock ended leaves it running."""
    streams, folder = (sys.stdout, sys.stderr), os.getcwd()
    status = args.func(args)
    changed = [
        what
        for what, now, then in (
            ("sys.stdout", sys.stdout, streams[0]),
            ("sys.stderr", sys.stderr, streams[1]),
            ("the working folder", os.getcwd(), folder),
        )
        if now != then
    ]
    if not changed:
        return status
    sys.stdout, sys.stderr = streams
    os.chdir(folder)
    raise InvalidArgument(
        f"the target changed {' and '.join(changed)} of this process and did not put it "
        "back, so some output or files may have gone there; a machine's own code must put "
        "them back, and an agent function runs in a worker process without --isolation inline"
    )


def _silence_stdout() -> None:
    # The reader went away; point stdout at devnull so the interpreter's final flush
    # does not print a second BrokenPipeError.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def _fail(exc: BaseException) -> None:
    message = " ".join(str(exc).split()) or type(exc).__name__
    if isinstance(exc, OSError) and exc.filename is not None:
        message = f"cannot use {exc.filename!s}: {exc.strerror or message}"
    # an error may quote model output (a completion the program read): escaped, as stdout is
    print(f"{PROG}: error: {clip(escape_controls(message))}", file=sys.stderr)


# ------------------------------------------------------------------------ subcommands
def _demo(args: argparse.Namespace) -> int:
    from .demo import demo  # loaded when the verb runs

    return demo(args.out, stream=sys.stdout)


def _check(args: argparse.Namespace) -> int:
    from .targets import resolve_target  # loaded when the verb runs

    entry = resolve_target(args.name, agent_options(args))
    machine = machine_with_isolation(entry, args.isolation)
    sampled = entry.module is None and not machine.is_finite
    if not sampled:
        _refuse_sampling(args, entry)
    if sampled:
        from .usercheck import check_infinite, with_alphabet  # loaded when the verb runs

        given = completions_for(args, machine, entry.name)
        # the completions given are the alphabet decided on, as a factory's would be
        decided = with_alphabet(machine, given)
        given_as = " (the alphabet given by -c/--completions)" if decided is not machine else ""
        print(_describe(entry.name, decided, type(machine).__name__) + given_as)
        depth = CHECK_DEPTH if args.depth is None else args.depth
        return check_infinite(entry, decided, given, depth)
    print(_describe(entry.name, machine))
    if entry.module is not None:
        verdict = entry.module.analysis()
        marked = " (conditional)" if verdict.conditional else ""
        print(f"Is the initial state an SPE state? {verdict.status}{marked}")
        print(f"  {verdict}")
        return 0

    # a verdict names the machine, whose name is the file's text: escaped as the states are
    for state in machine.states:
        verdict = is_spe_state(machine, state)
        print(escape_controls(f"state {state!r}: {verdict}"))
    found = spe_states(machine)
    print(
        f"SPE states: {{{', '.join(map(repr, sorted(found, key=repr)))}}}"
        if found
        else "SPE states: none"
    )
    print(escape_controls(f"identity embedding: {check_embedding(identity(machine))}"))
    return 0


def _refuse_sampling(args: argparse.Namespace, entry: Any) -> None:
    """``check``'s -c/--completions/--depth choose sample states of an infinite machine;
    on any other machine they would change nothing, so they are refused, not ignored."""
    given = [
        option
        for option, value in (
            ("-c/--completion", args.completion),
            ("--completions", args.completions),
            ("--depth", args.depth),
        )
        if value is not None
    ]
    if given:
        how = (
            "prints its architecture's certified analysis()"
            if entry.module is not None
            else "decides the finite machine exactly over its whole alphabet"
        )
        raise InvalidArgument(
            f"check {how} for {entry.name!r}, so {' and '.join(given)} would change nothing "
            "(these options only choose sample states of a machine with infinitely many states); leave them "
            "out, or use explore/test to follow chosen completions"
        )


def _describe(name: str, machine: Any, kind: str | None = None) -> str:
    states = (
        "infinitely many states"
        if machine.states is None
        else counted(len(machine.states), "state")
    )
    comps = (
        "every string a completion"
        if machine.completions is None
        else counted(len(machine.completions), "completion")
    )
    return escape_controls(f"{name}: {kind or type(machine).__name__}, {states}, {comps}")


def _diagram(args: argparse.Namespace) -> int:
    from .targets import resolve_target  # loaded when the verb runs

    # an unknown machine is the first thing to report
    entry = resolve_target(args.name, agent_options(args))
    formats = ("png", "svg", "pdf", "html", *TEXT_FORMATS)
    if args.format is not None and args.format not in formats:
        raise InvalidArgument(
            f"unknown --format {args.format!r}; choose one of {', '.join(formats)}"
        )
    suffix = Path(args.output).suffix.lower() if args.output else ""
    if args.format is None and args.output and suffix not in SUFFIXES:
        raise InvalidArgument(
            f"cannot tell the format of {args.output!r} from its suffix "
            f"{suffix or '(none)'}; use one of {', '.join(SUFFIXES)} or pass --format"
        )
    if args.format is not None and suffix in SUFFIXES and SUFFIXES[suffix] != args.format:
        raise InvalidArgument(
            f"{args.output!r} has the suffix {suffix} but --format is {args.format}; "
            "make them agree (a file's suffix should say what it holds)"
        )
    fmt = args.format or SUFFIXES.get(suffix) or "png"
    if args.output is None and fmt not in TEXT_FORMATS:
        raise InvalidArgument(
            f"a {fmt} diagram needs a file: add -o FILE (or use --format mermaid, dot or json for stdout)"
        )
    machine = machine_with_isolation(entry, args.isolation)
    framework = getattr(machine, "framework_structure", None) if args.structure else None
    if args.structure and (framework is None or fmt not in ("png", "svg", "pdf")):
        raise InvalidArgument(
            f"--structure draws a framework's own graph in png, svg or pdf: {args.name!r} "
            + ("has none (a LangGraph machine has)" if framework is None else f"as {fmt}")
        )
    graph = entry.explore(
        machine,
        depth=args.depth,
        max_states=args.max_states,
        completions=completions_for(args, machine, entry.name),
    )
    marks = entry.highlights(machine, graph)
    if framework is not None:
        marks = {**marks, "beside": framework(graph)}
    note = graph_budget_note(machine, graph)
    if note is not None:  # on stderr: a text diagram on stdout stays whole
        print(note, file=sys.stderr)
    if fmt in TEXT_FORMATS:
        from ..drawing.diagrams import to_dot, to_json, to_mermaid  # loaded when the verb runs

        text = {"dot": to_dot, "mermaid": to_mermaid}.get(fmt, lambda g, **_: to_json(g, indent=2))(
            graph, **marks
        )
        if args.output is None:
            print(text)
            return 0

        with open_output(args.output) as fh:  # a FIFO with no reader: an error, not a block
            fh.write(text + "\n")
    elif fmt == "html":
        view.write_view(graph, Path(args.output), f"{entry.name} ({entry.kind})", None, marks)
    else:
        from ..drawing.diagrams import draw  # loaded when the verb runs

        draw(graph, args.output, format=fmt, title=f"{entry.name} ({entry.kind})", **marks)
    stats = graph.graph["stats"]
    print(
        f"wrote {args.output} ({fmt}): {graph_counts(stats)}"
        + (f"; truncated ({stats['truncated_reason']})" if stats["truncated"] else "")
    )
    return 0


def _run(args: argparse.Namespace) -> int:
    from .targets import resolve_target  # loaded when the verb runs

    entry = resolve_target(args.name, agent_options(args))
    machine = machine_with_isolation(entry, args.isolation)
    if args.replay is not None:
        return replay_trace(machine, args.replay, full=args.full)
    script = read_script(args.script)
    trace = run(
        machine,
        ScriptedModel(script),
        entry.start(machine),
        max_steps=args.max_steps,
        path=args.save,
    )
    # Fitted to a terminal; 100 columns when the output goes to a file or a pipe.
    width = shutil.get_terminal_size((100, 24)).columns if sys.stdout.isatty() else 100
    from .printed import with_outputs  # loaded when the verb runs

    # what an agent printed, under its step (the file has it on the step's line)
    print(with_outputs(trace.describe(width=width, full=args.full), trace.outputs, width))

    # an agent function's return value or exception (a step the clock ended has none:
    # asking for it would run the step again)
    end = None if trace.steps and trace.steps[-1].clock else ending(machine, trace)
    if end is not None:
        print(end)
    if trace.end == "model-error":  # e.g. the script ran out: as `eval`, a failure
        _fail(trace.error if trace.error is not None else InvalidArgument(trace.message or ""))
        return 2
    return 0


def _eval(args: argparse.Namespace) -> int:
    from ..cek import run_program, unparse  # loaded when the verb runs

    program = args.program
    # A path that exists is a file to read (read_input refuses a directory, a FIFO or a
    # device in one line); anything else is program text.
    if program.endswith(".lisp") or os.path.lexists(program):
        program = read_input(program, "program")
    if args.step:
        if args.spell:
            raise InvalidArgument("--step steps the CEK machine; it does not take --spell")
        from .step_eval import step_program  # loaded when the verb runs

        script = read_script(args.script) if args.script else None
        return step_program(
            program, script, args.fuel, sys.stdin, _say, ask=_ask if sys.stdin.isatty() else None
        )
    completions = read_script(args.script) if args.script else []
    if args.tools is not None and not args.spell:
        raise InvalidArgument("--tools gives Spell tools: add --spell, or leave --tools out")
    if args.spell:
        from .spell_eval import eval_spell, load_tools  # loaded when the verb runs

        tools = load_tools(args.tools) if args.tools is not None else None
        return eval_spell(program, completions, args.fuel, _fail_eval, tools=tools, say=_say)
    result = (
        run_program(program, completions)
        if args.fuel is None
        else run_program(program, completions, fuel=args.fuel)
    )
    for i, b in enumerate(result.boundaries, 1):
        answer = repr(completions[i - 1]) if i <= len(completions) else "(no completion left)"
        _say(f"llm call {i}: {unparse(b.prompt)} -> {answer}")
    if isinstance(result.error, ProgramDiverged):  # ↑ is an outcome of the program
        _say(f"{DIVERGE.label}: {result.error}")
        return 0
    if _is_outcome(result.error, program):
        # A run-time error of the object program (or of a completion it evaluates) is how
        # the run ended, h's HALT with the error: said once, exit 1, as chapter 4 has it.
        _say(f"{HALT.label}: {ending_line(None, result.error, unparse)}")
        return 1
    if result.error is not None:
        _fail_eval(result.error)
        return 2
    _say(unparse(result.value))
    return 0


def _say(text: str) -> None:
    # A value, prompt or error of a program can be a completion's text: printed with its
    # terminal control characters escaped, so model output never drives the terminal.
    print(escape_controls(text))


def _is_outcome(error: BaseException | None, program: str) -> bool:
    """Whether ``error`` ended a run of the well-formed ``program`` (an outcome), rather
    than being bad input (a program that does not read, a script that ran out)."""
    from ..cek.evaluator import start_state  # loaded when the verb runs

    if not isinstance(error, (EvaluationError, ParseError, MalformedProgram)):
        return False
    if isinstance(error, EvaluationError):
        return True
    try:  # a ParseError or MalformedProgram is the program's own only if it does not read
        start_state(program)
    except (ParseError, MalformedProgram):
        return False
    return True


def _fail_eval(exc: BaseException) -> None:
    # The evaluators' out-of-fuel message speaks to a Python caller ("pass fuel="); on
    # the command line the knob is --fuel.
    if isinstance(exc, Undecided) and "fuel=" in str(exc):
        exc = Undecided(str(exc).replace("fuel=", "--fuel N (the default is 10 000 000)"))
    _fail(exc)


def _ask(text: str) -> None:
    print(text, end="", flush=True)


def _gallery(args: argparse.Namespace) -> int:
    from ..drawing.gallery import write_gallery  # loaded when the verb runs

    paths = write_gallery(args.dir, verbose=True)
    print(f"wrote {len(paths)} files to {args.dir}")
    return 0


def _explain(args: argparse.Namespace) -> int:
    from .glossary import TERMS, lookup, render  # loaded when the verb runs

    if not args.term:
        print("Terms (agentic-machines explain TERM):")
        for term in TERMS:
            print(f"  {term.name:<24} {term.symbols}")
        return 0
    print(render(lookup(" ".join(args.term))))
    return 0
