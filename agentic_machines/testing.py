"""Test support: golden files for harness prompts and traces.

The toolkit's own tests use it, and so can yours: a harness you encode as a machine keeps
its exact prompts under a golden file, and a change that alters them shows as a diff.

A golden test pins the exact text a model sees. :func:`render_trace` prints a run so
that a reviewer can read it: the first prompt in full, then for every later prompt
either ``[previous prompt] +`` and the new text (when it extends the previous prompt)
or the full prompt (when it does not, e.g. an RLM sub-call); each completion; each
outcome. :func:`check_golden` compares a text with a file, or rewrites the file when
the environment variable ``AGENTIC_MACHINES_UPDATE_GOLDEN`` is ``1``.

>>> from agentic_machines import TableMachine, HALT
>>> from agentic_machines.runtime.run import run
>>> from agentic_machines.runtime.local_models import ScriptedModel
>>> m = TableMachine({0: "go?"}, {(0, "go"): 0, (0, "stop"): HALT}, initial=0, name="loop")
>>> print(render_trace(run(m, ScriptedModel(["go", "stop"]))))
# trace of loop: 2 step(s), end 1
== step 1: prompt ==
go?
== step 1: completion ==
go
== step 1: outcome: a state ==
== step 2: prompt (same as the previous prompt) ==
== step 2: completion ==
stop
== step 2: outcome: 1 ==
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .errors import GoldenMismatch
from .machine import is_sentinel

__all__ = ["render_trace", "check_golden", "UPDATE_VARIABLE"]

UPDATE_VARIABLE = "AGENTIC_MACHINES_UPDATE_GOLDEN"
"""Set this environment variable to ``1`` to rewrite golden files instead of checking them."""


def render_trace(trace: Any, result: Any = None) -> str:
    """A readable, diff-friendly rendering of a :class:`~agentic_machines.runtime.run.Trace`.

    ``result`` (the machine's return value, e.g. ``machine.result(state, completion)``)
    is appended when given.

    >>> from agentic_machines.architectures import react
    >>> from agentic_machines.runtime.run import run
    >>> text = render_trace(run(react.machine(), react.scripted_model()))
    >>> text.splitlines()[0]
    '# trace of react: 4 step(s), end 1'
    """
    out = [f"# trace of {trace.machine}: {len(trace.steps)} step(s), end {trace.end}"]
    previous: str | None = None
    for k, step in enumerate(trace.steps, 1):
        prompt = step.prompt
        if previous is not None and prompt == previous:
            out.append(f"== step {k}: prompt (same as the previous prompt) ==")
        elif previous is not None and prompt.startswith(previous):
            out.append(f"== step {k}: prompt = previous prompt + ==")
            out.append(prompt[len(previous) :])
        else:
            out.append(f"== step {k}: prompt ==")
            out.append(prompt)
        out.append(f"== step {k}: completion ==")
        out.append(step.completion)
        outcome = step.outcome
        out.append(f"== step {k}: outcome: {outcome if is_sentinel(outcome) else 'a state'} ==")
        previous = prompt
    if result is not None:
        out.append(f"== result ==\n{result!r}")
    return "\n".join(out)


def check_golden(path: str | os.PathLike, text: str) -> None:
    """Assert that ``text`` equals the file at ``path`` (or write it, when updating).

    Raises :class:`~agentic_machines.errors.GoldenMismatch` (an ``AssertionError``) naming
    the first differing line and how to regenerate.

    >>> import tempfile, pathlib
    >>> golden = pathlib.Path(tempfile.mkdtemp()) / "g.txt"
    >>> _ = golden.write_text("a\\nb", encoding="utf-8")
    >>> check_golden(golden, "a\\nb")
    >>> try:
    ...     check_golden(golden, "a\\nc")
    ... except AssertionError as exc:
    ...     print(str(exc).splitlines()[1:3])
    ["  golden: 'b'", "  now:    'c'"]
    """
    path = Path(path)
    if os.environ.get(UPDATE_VARIABLE) == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    if not path.exists():
        raise GoldenMismatch(
            f"golden file {path} does not exist; create it with {UPDATE_VARIABLE}=1 python -m pytest <test file>"
        )
    expected = path.read_text(encoding="utf-8")
    if expected == text:
        return
    got_lines, exp_lines = text.split("\n"), expected.split("\n")
    line = next(
        (i for i, (a, b) in enumerate(zip(got_lines, exp_lines)) if a != b),
        min(len(got_lines), len(exp_lines)),
    )
    exp = exp_lines[line] if line < len(exp_lines) else "<end of file>"
    got = got_lines[line] if line < len(got_lines) else "<end of text>"
    raise GoldenMismatch(
        f"{path} differs at line {line + 1}:\n  golden: {exp!r}\n  now:    {got!r}\n"
        f"If the change is intended, regenerate with {UPDATE_VARIABLE}=1 python -m pytest <test file>."
    )
