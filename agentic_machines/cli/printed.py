"""What an agent function printed, shown once, with the step that printed it.

An agent machine that runs in worker processes captures what each step writes to stdout
and stderr (:meth:`~agentic_machines.runtime.agent.AgentMachine.output`). ``run`` and
``play`` show it under its step, and the trace file keeps it on the step's line
(:func:`~agentic_machines.runtime.tracefile.save_trace`); ``explore``, ``check``,
``diagram`` and ``test`` show none of it, however many runs they make. Inline, the agent
writes to the terminal itself, as it runs.

>>> text = "Trace ...\\nstep 0  state TraceState()\\n  outcome     HALT (1)"
>>> print(with_outputs(text, {0: "hello\\ngot yes\\n"}))
Trace ...
step 0  state TraceState()
  outcome     HALT (1)
  printed     | hello
              | got yes
"""

from __future__ import annotations

from typing import Any

__all__ = ["step_output", "step_outputs", "with_outputs", "shown"]


def step_output(machine: Any, step: Any, start: Any = None) -> str:
    """What the agent printed in ``step`` (a run's :class:`Step`), with what it printed
    before its first model call when the step leaves the machine's initial state
    ``start``; ``""`` for other machines, inline agents, and steps the clock decided
    (asking for those would run them again).

    >>> from agentic_machines.fixtures import fixture
    >>> from agentic_machines.runtime.run import Step
    >>> step_output(fixture("halt1"), Step(0, 0, "⋆", "0", 1))
    ''
    """
    from ..runtime.agent import AgentMachine  # only to tell an agent function's machine

    # only a worker captures the prints (inline, the agent printed them as it ran)
    output = getattr(machine, "output", None)  # a worker's record of each step's prints
    if not isinstance(machine, AgentMachine) or output is None or step.clock:
        return ""
    if getattr(machine, "isolation", "inline") != "process":
        return ""
    before = output(start) if start is not None and start == machine.initial else ""
    return str(before + output(step.state, step.completion))


def step_outputs(machine: Any, trace: Any) -> dict[int, str]:
    """Each step's printed text by step index (steps that printed nothing left out).

    >>> from agentic_machines.fixtures import fixture
    >>> from agentic_machines import run
    >>> from agentic_machines.models import ScriptedModel
    >>> step_outputs(fixture("halt1"), run(fixture("halt1"), ScriptedModel(["0"])))
    {}
    """
    out = {}
    for n, step in enumerate(trace.steps):
        text = step_output(machine, step, trace.start if n == 0 else None)
        if text:
            out[step.index] = text
    return out


def shown(text: str, width: int | None = None) -> list[str]:
    """The lines that show ``text`` under a step: ``printed`` and a bar before each line
    (cut to ``width`` when given), control characters escaped.

    >>> shown("a\\nb\\n")
    ['  printed     | a', '              | b']
    """
    from .._files import excerpt  # the one escaping of untrusted text for a terminal

    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    out = []
    for n, line in enumerate(lines):
        head = "  printed     | " if n == 0 else "              | "
        body = excerpt(line, max(width - len(head), 10)) if width else excerpt(line, 10_000)
        out.append(head + body)
    return out


def with_outputs(description: str, outputs: dict[int, str], width: int | None = None) -> str:
    """A run's ``describe()`` text with each step's printed text under it.

    >>> print(with_outputs("Trace...\\nstep 0  state 0\\n  outcome     1", {0: "hi\\n"}))
    Trace...
    step 0  state 0
      outcome     1
      printed     | hi
    """
    if not outputs:
        return description
    lines: list[str] = []
    current: int | None = None
    for line in description.split("\n"):
        # a step's block starts at "step N  state": describe() shows every other line
        # indented or as a repr, so no other line starts so
        if line.startswith("step ") and line.split(" ", 2)[1].isdigit():
            if current in outputs:
                lines.extend(shown(outputs[current], width))
            current = int(line.split(" ", 2)[1])
        lines.append(line)
    if current in outputs:
        lines.extend(shown(outputs[current], width))
    return "\n".join(lines)
