"""Text cut to fit a message, a label or a table cell: one rule for the whole package
(and the one line that ends a run's description, :func:`ending_line`).

A long value is cut at the end and marked with an ellipsis (``…``, or ``...`` where the
text is shown as program output), so that what is shown is never longer than asked and
a cut is always visible.

Code that the line budget counts (harness programs, what runs while a model-written block
runs) keeps its own inline cut: a call here would be lines charged to the model's budget.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

__all__ = [
    "clip",
    "clip_start",
    "clip_middle",
    "short_text",
    "one_line",
    "before_stops",
    "ending_line",
]


def clip(text: str, width: int, ellipsis: str = "…") -> str:
    """``text`` when it has at most ``width`` characters, else its start and ``ellipsis``,
    ``width`` characters in all (at least one character of the text is kept).

    >>> clip("abcdef", 4), clip("abc", 4), clip("abcdef", 5, "...")
    ('abc…', 'abc', 'ab...')
    """
    if len(text) <= width:
        return text
    return text[: max(width - len(ellipsis), 1)] + ellipsis


def clip_start(text: str, width: int, ellipsis: str = "…") -> str:
    """``text`` when it has at most ``width`` characters, else ``ellipsis`` and its end,
    ``width`` characters in all: for texts whose ends differ (prompts that share a long
    beginning).

    >>> clip_start("abcdef", 4), clip_start("abc", 4), clip_start("abcdef", 5, "...")
    ('…def', 'abc', '...ef')
    """
    if len(text) <= width:
        return text
    return ellipsis + text[-max(width - len(ellipsis), 1) :]


def clip_middle(text: str, width: int, ellipsis: str = "…") -> str:
    """``text`` when it has at most ``width`` characters, else its start, ``ellipsis`` and
    its end, ``width`` characters in all (the start gets the odd one): for texts
    whose both ends matter (a prompt in an error message).

    >>> clip_middle("abcdefghij", 7), clip_middle("abc", 7), clip_middle("abcdefghij", 7, "...")
    ('abc…hij', 'abc', 'ab...ij')
    """
    if len(text) <= width:
        return text
    keep = max(width - len(ellipsis), 0)
    head = keep - keep // 2
    tail = keep - head
    return text[:head] + ellipsis + (text[-tail:] if tail else "")


def before_stops(text: str, *stops: str) -> str:
    """What precedes the first occurrence of any of ``stops`` in ``text`` (all of it when
    none occurs): a model API's stop sequences, applied to a completion.

    >>> before_stops("a\\nObservation 1: b", "\\nObservation 1:"), before_stops("x;y,z", ",", ";")
    ('a', 'x')
    """
    at = min((i for i in (text.find(s) for s in stops) if i >= 0), default=len(text))
    return text[:at]


_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def escape_controls(text: str) -> str:
    """``text`` with every terminal control character but newline and tab shown as an
    escape (``\\x1b``): model output printed as text cannot move the cursor, clear the
    screen, retitle the window or ring the bell.

    >>> escape_controls("red \\x1b[31mtext\\x07\\r\\nnext") == "red \\\\x1b[31mtext\\\\x07\\\\x0d\\nnext"
    True
    """
    return _CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def short_text(text: str, limit: int = 24) -> str:
    """``text`` on one line, cut to ``limit`` characters with an ellipsis.

    Newlines are shown as ``⏎`` and the empty string as ``""`` so that a label is
    never blank.

    >>> short_text("Thought 1: search\\nAction 1: Search[owl]", 20)
    'Thought 1: search⏎A…'
    >>> short_text("")
    '""'
    """
    if not isinstance(text, str):
        text = repr(text)
    if text == "":
        return '""'
    text = text.replace("\r\n", "⏎").replace("\n", "⏎").replace("\t", " ")
    return clip(escape_controls(text), limit)


def one_line(text: str) -> str:
    """``text`` with every run of white space (newlines too) made one space, ends trimmed.

    >>> one_line("  a\\n  b\\tc ")
    'a b c'
    """
    return " ".join(text.split())


def ending_line(value: Any, error: BaseException | None, show: Callable[[Any], str]) -> str:
    """The last line of a run's description: ``value: <show(value)>`` for a run that
    ended normally, ``error: <type>: <message>`` for one that ``error`` stopped (the CEK
    program runs and the Spell sessions print their ends alike).

    >>> ending_line(3, None, repr), ending_line(None, ValueError("no"), repr)
    ('value: 3', 'error: ValueError: no')
    """
    if error is None:
        return f"value: {show(value)}"
    return f"error: {type(error).__name__}: {error}"
