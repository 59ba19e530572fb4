"""What a program's trailing form will do: halt, take one turn, or fork.

:func:`turn_kind` reads a wrapper program and counts the ``!`` calls in its trailing
form (the last form of the outer ``eval``'s ``do``, unquoted). The evaluator does not
need this (the count is what evaluation does); it is for explaining a program.

>>> turn_kind("(quine completion (eval (do 1 '(+ 1 2))))")
'halt'
>>> turn_kind("(quine completion (eval (do '(!extend))))")
'turn'
>>> turn_kind("(quine completion (eval (do '(list (!llm-self \\"a\\") (!llm-self \\"b\\")))))")
'fork'
"""

from __future__ import annotations

from typing import Any

from ..cek.reader import parse
from ..cek.syntax import Pair, Symbol, iter_list
from .evaluator import outer_eval
from .text import balance

__all__ = ["turn_kind", "trailing_form", "effect_calls"]


def trailing_form(program: str | Any) -> Any:
    """The trailing form of a wrapper program (unquoted), or ``None`` if it has none.

    >>> trailing_form("(quine completion (eval (do (def x 1) '(!extend))))")
    <list (!extend)>
    """
    datum = parse(balance(program)) if isinstance(program, str) else program
    found = outer_eval(datum)
    if found is None:
        return None
    body = found[1]
    if type(body) is Pair and body.car == Symbol("do"):
        items = list(iter_list(body))[1:]
        if not items:
            return None
        body = items[-1]
    if type(body) is Pair and body.car == Symbol("quote"):
        return body.cdr.car
    return body


def effect_calls(form: Any) -> int:
    """How many calls to ``!`` functions ``form`` contains (outside quoted data).

    >>> effect_calls(parse("(f (!llm-self \\"a\\") '(!extend))"))
    1
    """
    count = 0
    stack = [form]
    while stack:
        x = stack.pop()
        if type(x) is not Pair:
            continue
        head = x.car
        if head == Symbol("quote"):
            continue
        if type(head) is Symbol and head.name.startswith("!"):
            count += 1
        stack.extend(iter_list(x))
    return count


def turn_kind(program: str | Any) -> str:
    """``"halt"`` (no ``!`` call in the trailing form), ``"turn"`` (exactly one) or
    ``"fork"`` (two or more, run one after the other)."""
    form = trailing_form(program)
    n = effect_calls(form) if form is not None else 0
    return "halt" if n == 0 else "turn" if n == 1 else "fork"
