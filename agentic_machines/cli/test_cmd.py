"""``agentic-machines test TARGET``: check properties of a machine from the command line.

``--property`` names a property (``halts_within:8``, ``never_raises``,
``never_diverges`` (``never_diverges:prompt`` or ``never_diverges:MODULE:FUNCTION`` pass a key), ``prompt_length_at_most:N``, ``effects_at_most_once:TOOL``; repeat
it for several). The check is exhaustive over a finite alphabet (``-c TEXT``, repeated,
or ``--completions FILE``, as for every verb that takes a machine; ``--alphabet FILE`` is
the deprecated spelling of ``--completions``; default: the machine's own alphabet, or the
small per-prompt alphabet an architecture draws its diagrams with), bounded by
``--max-depth`` and ``--max-states``; or sampled with ``--hypothesis N`` (N generated
runs per property from the adversarial strategies, plus the given completions). It prints each verdict, the counterexamples (shortest, or
shrunk) as runnable snippets, and the coverage. ``--save FILE`` writes each
counterexample as a trace file that records the property and each step's effects;
``agentic-machines run TARGET --replay FILE`` checks that property again on the machine
as it is now: "still fails" (exit 1) or "no longer fails" (exit 0).

Exit status: 0 when every property holds (within the bound printed), 1 when one is
refuted or undecided, 2 on bad input.

>>> from agentic_machines.cli.commands import main
>>> main(["test", "f2-add", "--property", "never_raises"])  # doctest: +ELLIPSIS
# machine = the machine 'f2-add' (start 0)
f2-add: 1 property, exhaustive, the whole reachable graph (2 states)
PASS never_raises(): Holds: ...
coverage: 2 states, 4 transitions, 4 edges, depth 1
...
0
"""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path
from typing import Any

from .._files import excerpt
from .._text import counted
from ..errors import AgenticMachinesError, InvalidArgument, ReplayMismatch
from ..runtime.run import Trace, raised_note
from ._args import (
    add_bound_arguments,
    add_isolation_arguments,
    add_stop_early_argument,
    add_target_arguments,
    agent_options,
    budget_note,
    completions_for,
    machine_with_isolation,
    natural,
    positive,
)

__all__ = ["add_parser", "replay_trace", "recheck_file", "DEFAULT_PROPERTIES"]

DEFAULT_PROPERTIES = ("never_raises", "never_diverges")
"""What ``test`` checks when no ``--property`` is given."""

MAX_STATES = 10_000
"""The verb's state bound, and so how many rounds it follows a keyed loop; a replay
follows at least as many (the saved file's bound may be smaller)."""


def add_parser(sub: Any) -> None:
    """Register the ``test`` subcommand on the subparsers ``sub``."""
    p = sub.add_parser(
        "test",
        help="check properties of a machine: exhaustive over an alphabet, or Hypothesis runs",
        description="Check properties of a machine: an exhaustive bounded search over a finite "
        "completion alphabet (shortest counterexamples), or --hypothesis N generated runs with "
        "adversarial completions (shrunk counterexamples). Exit 0 when all hold, 1 when one "
        "fails or is undecided, 2 on bad input.",
    )
    add_target_arguments(p)
    p.add_argument(
        "-p",
        "--property",
        action="append",
        metavar="SPEC",
        help="halts_within:K, never_raises, never_diverges (never_diverges:prompt, or "
        "never_diverges:MODULE:FUNCTION, keys states: the same key is the same situation), "
        "prompt_length_at_most:N or effects_at_most_once:TOOL; repeat for several (default: "
        "never_raises, never_diverges)",
    )
    p.add_argument(
        "--alphabet",
        metavar="FILE",
        help="deprecated spelling of --completions FILE (every verb that takes a machine "
        "now takes -c/--completion and --completions)",
    )
    p.add_argument(
        "--hypothesis",
        type=positive,
        metavar="N",
        help="instead of the exhaustive search, N generated runs per property (sampled)",
    )
    add_bound_arguments(p, max_states=MAX_STATES, depth="none: the state bound ends the search")
    add_stop_early_argument(p)
    p.add_argument(
        "--max-depth",
        type=natural,
        metavar="D",
        dest="old_max_depth",
        help="deprecated spelling of --depth D (every verb that searches a graph takes --depth)",
    )
    p.add_argument(
        "--max-steps",
        type=positive,
        default=20,
        metavar="N",
        help="steps per generated run with --hypothesis (default: 20)",
    )
    p.add_argument(
        "--seed",
        type=int,
        metavar="S",
        help="seed of the generated runs: the same seed gives the same runs in every process "
        "(default: a fixed derandomized search)",
    )
    p.add_argument(
        "--save",
        metavar="FILE",
        help="write each counterexample as a trace file (several: FILE with the property's name)",
    )
    from .executors import add_executor_arguments  # loaded when the verb runs

    add_executor_arguments(p)
    add_isolation_arguments(p, "the completions' code")
    p.set_defaults(func=run_test)


def _resolve(args: argparse.Namespace) -> tuple[str, Any, Any, Any]:
    """``(name, machine, start, default alphabet)`` of the verb's machine target."""
    from .targets import resolve_target  # loaded when the verb runs

    entry = resolve_target(args.name, agent_options(args))
    machine = machine_with_isolation(entry, args.isolation)
    return entry.name, machine, entry.start(machine), entry.completions(machine)


def run_test(args: argparse.Namespace) -> int:
    """The ``test`` subcommand: print the report, return the exit status."""
    from ..checking import parse_property  # loaded when the verb runs
    from ..checking.check import check_properties  # loaded when the verb runs

    specs = args.property or list(DEFAULT_PROPERTIES)
    name, machine, start, default = _resolve(args)
    properties = [parse_property(s, machine) for s in specs]
    alphabet = completions_for(args, machine, name, "alphabet")
    if args.alphabet:  # on stdout, as the note on --property: stderr holds only the error
        print("(note: --alphabet FILE is deprecated; write --completions FILE)")
    depth = args.depth if args.depth is not None else args.old_max_depth
    if args.old_max_depth is not None:
        print("(note: --max-depth D is deprecated; write --depth D)")
    if not args.property:
        print(f"(no --property given: checking {', '.join(DEFAULT_PROPERTIES)})")
    if args.hypothesis is not None:
        from ..checking.adversarial import adversarial_completions  # loaded when the verb runs
        from ..checking.stateful import hypothesis_check  # loaded when the verb runs

        valid = list(alphabet or (default if isinstance(default, (list, tuple)) else []))
        result = hypothesis_check(
            machine,
            start,
            properties,
            completions=adversarial_completions(machine, valid),
            max_examples=args.hypothesis,
            max_steps=args.max_steps,
            seed=args.seed,
            progress=None,
            keyed_rounds=args.max_states,
        )
    else:
        completions = alphabet if alphabet is not None else default
        if completions is None:
            raise InvalidArgument(
                f"{name!r} has no finite completion alphabet; give -c TEXT or --completions "
                "FILE, or --hypothesis N for generated completions"
            )
        from .executors import executor_from  # loaded when the verb runs

        with executor_from(args) as executor:
            result = check_properties(
                machine,
                start,
                properties,
                completions=completions,
                max_depth=depth,
                max_states=args.max_states,
                executor=executor,
                stop_early=args.stop_early,
            )
    print(f"# machine = the machine {args.name!r} (start {result.start!r})")
    print(result.report("machine"))
    if result.coverage is not None:
        note = budget_note(machine, result.coverage.diverged, result.coverage.transitions)
        if note is not None:
            print(note)
    if args.save:
        _save(result, args.save, args.name, machine, args.max_states)
    return 0 if result else 1


def _save(result: Any, path: str, target: str, machine: Any, rounds: int | None) -> None:
    cxs = [(r.name, r.counterexample, r.property) for r in result if r.counterexample is not None]
    if not cxs:
        print(f"no counterexample to save ({path} not written)")
        return
    base = Path(path)
    for n, (prop, cx, checked) in enumerate(cxs):
        if n == 0:
            out = base
        else:
            slug = "".join(ch if ch.isalnum() else "_" for ch in prop).strip("_")
            out = base.with_name(f"{base.stem}.{slug}{base.suffix}")
        cx.save(out, checked, machine, rounds)
        print(
            f"saved the counterexample to {prop} in {out} "
            # quoted for a shell: a factory target ends in "()"
            f"(rerun: agentic-machines run {shlex.quote(target)} --replay {shlex.quote(str(out))})"
        )


def replay_trace(machine: Any, path: str, full: bool = False) -> int:
    """``run NAME --replay TRACE``: rerun a saved trace, checking every step.

    A counterexample file (``test --save``) is a test: the property it records is checked
    again on the run of its completions on the machine as it is now, and this prints
    "still fails (why)" and returns 1, or "no longer fails" and returns 0, whatever the
    property (:func:`recheck_file`). ``full`` prints every prompt whole.

    Otherwise prints the replayed trace and returns 0 when every state, prompt and outcome is as
    recorded. A trace cut by a harness that raised (a ``never_raises``
    counterexample) is reproduced when the harness raises the recorded exception at
    the recorded step: that prints the error and returns 1. A difference raises
    :class:`~agentic_machines.errors.ReplayMismatch` (exit 2).
    """

    trace = Trace.load(path)
    from ..checking.result import load_check  # loaded when the verb runs

    check = load_check(path)
    if check is not None:
        return recheck_file(machine, trace, check, path, full)
    crashed = trace.end == "incomplete" and trace.pending is not None
    try:
        again = trace.replay(machine)
    except Exception as exc:  # noqa: BLE001 - a recorded crash must come back, nothing else
        recorded = trace.message or ""
        if crashed and f"raised {type(exc).__name__}" in recorded:
            print(
                f"replayed {counted(len(trace), 'step')} of {path} as recorded; then, as recorded, the "
                f"harness raised {type(exc).__name__}: {excerpt(' '.join(str(exc).split()), 300)}"
            )
            return 1
        if isinstance(exc, AgenticMachinesError):
            raise
        # The machine's own code failed on what the file holds (a state it never makes):
        # a difference from the recording, said in one line, not a traceback.
        raise ReplayMismatch(
            f"replaying {path}: the machine raised {type(exc).__name__}: "
            f"{excerpt(str(exc))}; the trace was not recorded on this machine, or the machine "
            "changed"
        ) from exc
    if crashed:
        raise InvalidArgument(
            f"{path} records that the harness raised ({excerpt(trace.message or '')}), but the "
            "replay did not "
            "raise: the machine no longer behaves as recorded"
        )
    print(again)
    if trace.raised is not None:
        # A machine that keeps its program's exception (an agent function) halts: the
        # replay reached HALT as recorded, and must have raised the same exception again.

        now = raised_note(machine, again.steps[-1]) if again.steps else None
        if now is None or now.split(":", 1)[0] != trace.message.split(":", 1)[0]:
            raise ReplayMismatch(
                f"{path} records that the run ended because the program "
                f"{excerpt(trace.message)}, but the "
                f"replay ended {'normally' if now is None else 'because it ' + now}: the machine no "
                "longer behaves as recorded"
            )
        print(f"replayed {path}: every step as recorded; then, as recorded, the program {now}")
        return 1
    name = getattr(machine, "name", None)
    other = (
        f" (recorded on {trace.machine!r}, replayed on {name!r})" if name != trace.machine else ""
    )
    print(f"replayed {path}: every step as recorded{other}")
    return 0


def recheck_file(machine: Any, trace: Trace, check: dict, path: str, full: bool = False) -> int:
    """Check the property a counterexample file records on its run, replayed on
    ``machine`` as it is now: 1 "still fails", 0 "no longer fails".

    The run is the file's completions from its start; its outcomes need not be the
    recorded ones (the machine may have been fixed). A keyed loop is followed as many
    rounds as the file's search did, and at least as many as ``test`` does by default
    (:data:`MAX_STATES`): a loop ``test`` passes is no failure here. A property with no
    command-line spelling (a function of your own) cannot be built again here: that is
    bad input.
    """
    from ..checking import parse_property  # loaded when the verb runs
    from ..checking.run_check import recheck  # loaded when the verb runs
    from ..runtime.local_models import ScriptedModel  # loaded when the verb runs
    from ..runtime.run import run  # loaded when the verb runs

    spec, name = check.get("property"), check.get("name", "the property")
    if not isinstance(spec, str):
        raise InvalidArgument(
            f"{path} refutes {name}, a property of your own code that the command line cannot "
            "build again; re-check it in Python with check_properties"
        )
    prop = parse_property(spec, machine)
    completions = [s.completion for s in trace.steps]
    if trace.pending is not None:  # the step that raised: the file keeps it as pending
        completions.append(trace.pending[1])
    loop = check.get("loop")
    rounds = check.get("rounds")
    why = recheck(
        machine,
        prop,
        trace.start,
        completions,
        loop if isinstance(loop, int) else None,
        max(rounds, MAX_STATES)
        if isinstance(rounds, int) and not isinstance(rounds, bool)
        else MAX_STATES,
    )
    again = run(machine, ScriptedModel(completions), trace.start, max_steps=len(completions))
    print(again.describe(full=full))
    here = getattr(machine, "name", None)
    if here != trace.machine:
        path = f"{path} (recorded on {trace.machine!r}, re-checked on {here!r})"
    if why is not None:
        print(f"replayed {path}: {name} still fails ({excerpt(' '.join(why.split()), 300)})")
        return 1
    print(
        f"replayed {path}: {name} no longer fails (the run of "
        f"{counted(len(completions), 'step')} breaks nothing)"
    )
    return 0
