"""Edit markers: what ``prune``, ``think``, ``rethink`` and ``persist`` do at edit time.

At run time the markers do (almost) nothing: ``(prune k)`` is ``nil``, ``think`` and
``rethink`` run their body and return ``nil``, ``(persist name expr)`` is ``def``. They
act when a turn-producing helper (``!extend``, ``!call-now``, ``!peek``) prepares the
next prefix with :func:`apply_edits`, which rewrites every list of the program (quoted
data excepted: a marker inside a quotation is data) from left to right:

- ``(prune k)`` (``k`` defaults to 1) removes the ``k`` preceding sibling forms and itself;
- ``(rethink n "label" body...)`` (``n`` defaults to 1) removes the ``n`` preceding
  siblings and leaves ``(think "label" body...)`` in its place;
- ``(think ...)`` stays as it is;
- ``(persist name expr)`` becomes ``(persist name <literal>)``, the literal of the
  current value of ``name``, so the value survives the pruning of what it came from;
  ``(persist x)`` means ``(persist x x)``.

Applying the edits twice gives the same program as applying them once.

>>> from agentic_machines.cek import parse, unparse
>>> unparse(apply_edits(parse("(do (+ 1 2) (prune) (+ 2 2))")))
'(do (+ 2 2))'
>>> unparse(apply_edits(parse('(do a b (rethink 2 "tried a and b") c)')))
'(do (think "tried a and b") c)'
>>> peeked = parse("(do '(!peek big (f)) (def big \\"abc\\") (prune 2) (persist n (count big)))")
>>> unparse(apply_edits(peeked, {"n": 3}.get))
'(do (persist n 3))'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..cek.syntax import Pair, Symbol, from_items, iter_list
from ..errors import EvaluationError
from .text import literal, rebuild_lists

__all__ = ["apply_edits", "MARKERS"]

MARKERS = frozenset({"prune", "think", "rethink", "persist"})
"""The names of the edit markers."""

_QUOTE = Symbol("quote")
_THINK = Symbol("think")
_PERSIST = Symbol("persist")


def _head(x: Any) -> str | None:
    if type(x) is Pair and type(x.car) is Symbol:
        return x.car.name
    return None


def _count(form: Any, items: list) -> tuple[int, list]:
    """Split ``(marker [n] rest...)`` into the count n (default 1) and the rest."""
    rest = items[1:]
    if rest and type(rest[0]) is int:
        n = rest[0]
        if n < 0:
            raise EvaluationError(f"{items[0].name}: the count must be zero or more, got {n}")
        return n, rest[1:]
    return 1, rest


def _edit_siblings(items: list, lookup: Callable[[str], Any]) -> list:
    out: list = []
    for x in items:
        head = _head(x)
        if head == "prune":
            n, _ = _count(x, list(iter_list(x)))
            del out[max(0, len(out) - n) :]
            continue
        if head == "rethink":
            n, rest = _count(x, list(iter_list(x)))
            del out[max(0, len(out) - n) :]
            out.append(from_items([_THINK, *rest]))
            continue
        if head == "persist":
            parts = list(iter_list(x))
            if len(parts) in (2, 3) and type(parts[1]) is Symbol:
                value = lookup(parts[1].name)
                if value is not None:
                    out.append(from_items([_PERSIST, parts[1], literal(value)]))
                    continue
        out.append(x)
    return out


def apply_edits(datum: Any, lookup: Callable[[str], Any] | None = None) -> Any:
    """``datum`` with every edit marker applied (see the module docstring).

    ``lookup(name)`` gives the current value of a name for ``persist`` (``None`` when
    unbound: the ``persist`` form is then kept as it is). Iterative: deep programs are
    rewritten without recursion.

    >>> from agentic_machines.cek import parse, unparse
    >>> unparse(apply_edits(parse("(do (think \\"why\\" 1) '(prune) (prune))")))
    '(do (think "why" 1))'
    """
    look = _nothing if lookup is None else lookup
    if type(datum) is not Pair:
        return datum
    return rebuild_lists(
        datum, _unquoted_list, _same, lambda items: from_items(_edit_siblings(items, look))
    )


def _unquoted_list(x: Any) -> bool:
    """A list the edits rewrite: any but a quotation (a marker inside one is data)."""
    return type(x) is Pair and x.car != _QUOTE


def _same(x: Any) -> Any:
    return x


def _nothing(name: str) -> Any:
    return None
