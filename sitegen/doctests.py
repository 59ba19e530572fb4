"""A Griffe extension: show each docstring's doctest as a Python console block.

The docstrings carry runnable examples (``>>>`` lines and the output they print; pytest
runs them). Left as they are, Markdown would read ``['a'][0]`` in an output as a link
reference; fenced as ``pycon`` they render as code, the way a reader types them.
"""

from __future__ import annotations

from typing import Any

import griffe


def fence_doctests(text: str) -> str:
    """Wrap every run of doctest lines (a ``>>>`` line up to the next blank line) in a fence.

    >>> fence_doctests("Say:\n>>> 1 + 1\n2\n\nDone.").splitlines()
    ['Say:', '```pycon', '>>> 1 + 1', '2', '```', '', 'Done.']
    """
    out: list[str] = []
    fence: str | None = None  # the indentation of the open doctest block
    in_code = False  # inside a fence the docstring wrote itself
    for line in text.splitlines():
        stripped = line.lstrip()
        if fence is None and stripped.startswith("```"):
            in_code = not in_code
        elif fence is None and not in_code and stripped.startswith(">>>"):
            fence = line[: len(line) - len(stripped)]
            out.append(f"{fence}```pycon")
        elif fence is not None and not stripped:
            out.append(f"{fence}```")
            fence = None
        out.append(line)
    if fence is not None:
        out.append(f"{fence}```")
    return "\n".join(out)


class FenceDoctests(griffe.Extension):
    """Fence the doctests of every docstring Griffe loads."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:  # noqa: ARG002
        if obj.docstring is not None:
            obj.docstring.value = fence_doctests(obj.docstring.value)
