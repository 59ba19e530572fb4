"""What an agent function printed, shown once, with the step that printed it.

An agent machine that runs in worker processes captures what each step writes to stdout
and stderr (:func:`~agentic_machines.runtime.run.step_output`, ``trace.outputs``). ``run``
and ``play`` show it under its step, and the trace file keeps it on the step's line
(:meth:`~agentic_machines.runtime.run.Trace.save`); ``explore``, ``check``,
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

__all__ = ["with_outputs", "shown"]


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
