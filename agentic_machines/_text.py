"""Text cut to fit a message, a label or a table cell: one rule for the whole package.

A long value is cut at the end and marked with an ellipsis (``…``, or ``...`` where the
text is shown as program output), so that what is shown is never longer than asked and
a cut is always visible.

Code that the line budget counts (harness programs, what runs while a model-written block
runs) keeps its own inline cut: a call here would be lines charged to the model's budget.
"""

from __future__ import annotations

__all__ = ["clip", "one_line"]


def clip(text: str, width: int, ellipsis: str = "…") -> str:
    """``text`` when it has at most ``width`` characters, else its start and ``ellipsis``,
    ``width`` characters in all (at least one character of the text is kept).

    >>> clip("abcdef", 4), clip("abc", 4), clip("abcdef", 5, "...")
    ('abc…', 'abc', 'ab...')
    """
    if len(text) <= width:
        return text
    return text[: max(width - len(ellipsis), 1)] + ellipsis


def one_line(text: str) -> str:
    """``text`` with every run of white space (newlines too) made one space, ends trimmed.

    >>> one_line("  a\\n  b\\tc ")
    'a b c'
    """
    return " ".join(text.split())
