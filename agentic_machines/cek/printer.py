"""Printing data, expressions and values back as program text, without recursion.

:func:`unparse` prints program data so that ``parse(unparse(d)) == d``, an expression as
the datum it was compiled from, and a value with procedures inside as source that
evaluates back to it (:func:`reify`). Like the reader, the printer keeps its own stack, so
a 100 000-deep value prints without ``RecursionError``.

It sits above the data, the values and the expressions, and below the machine: the
machine, the evaluator and the theorem print with it. ``syntax``, ``values`` and
``expr`` print with it too (their ``repr`` and error messages) without importing it:
importing this module installs :func:`unparse` as their printer
(:func:`~agentic_machines.cek.syntax.install_printer`), and ``cek/__init__.py`` imports it.

>>> from agentic_machines.cek.reader import parse
>>> unparse(parse("(quote (1 2))"))
"'(1 2)"
"""

from __future__ import annotations

from typing import Any

from ..errors import WrongType
from .expr import App, Const, Expr, Lambda, Letrec, PrimRef, Quote, Var, seq_of, to_datum
from .syntax import NIL, Bool, Nil, Pair, Symbol, install_printer, iter_list
from .values import Closure, Prim

__all__ = ["unparse", "escape_string", "reify"]

_QUOTE = Symbol("quote")


def escape_string(s: str) -> str:
    """Print a string as a literal that :func:`parse` reads back.

    >>> print(escape_string('say "hi"\\n'))
    "say \\"hi\\"\\n"
    """
    return (
        '"'
        + s.replace("\\", "\\\\")
        .replace('"', '\\"')
        .replace("\n", "\\n")
        .replace("\t", "\\t")
        .replace("\r", "\\r")
        + '"'
    )


def _pure(x: Any) -> bool:
    """True when ``x`` is program data (no procedure inside)."""
    t = type(x)
    if t is Pair:
        return x.pure  # cached when the pair was built
    return t is not Closure and t is not Prim


_CLOSE = object()
_SPACE = object()


def unparse(x: Any) -> str:
    """Print a datum, an expression or a value as program text.

    Data print so that ``parse(unparse(d)) == d`` (and ``(quote d)`` evaluates to them);
    expressions print as the datum they were compiled from; a value with procedures
    inside prints as source that evaluates back to it (a closure as a lambda or letrec
    wrapped around its captured values, a list of them as ``(list ...)``).

    >>> from agentic_machines.cek.reader import parse
    >>> unparse(parse("(a (b \\"c\\") '() #f)"))
    '(a (b "c") \\'nil #f)'
    """
    if isinstance(x, Expr):
        x = to_datum(x)
    elif not _pure(x):
        # A value with procedures inside prints as the source that rebuilds it.
        x = to_datum(reify(x))
    out: list[str] = []
    stack: list[Any] = [x]
    while stack:
        x = stack.pop()
        if x is _CLOSE:
            out.append(")")
            continue
        if x is _SPACE:
            out.append(" ")
            continue
        t = type(x)
        if t is str:
            out.append(escape_string(x))
        elif t is int:
            out.append(str(x))
        elif t is Pair:
            if x.car == _QUOTE and type(x.cdr) is Pair and x.cdr.cdr is NIL:
                out.append("'")
                stack.append(x.cdr.car)
                continue
            out.append("(")
            stack.append(_CLOSE)
            parts = list(iter_list(x))
            for i in range(len(parts) - 1, -1, -1):
                stack.append(parts[i])
                if i:
                    stack.append(_SPACE)
        elif t is Symbol:
            out.append(x.name)
        elif t is Bool:
            out.append("#t" if x.value else "#f")
        elif t is Nil:
            out.append("nil")
        else:
            raise WrongType(
                f"unparse: cannot print {type(x).__name__}; pass program data (read(...)), an "
                "expression or a value of the CEK language"
            )
    return "".join(out)


def reify(value: Any) -> Expr:
    """A closed, ``llm``-free expression that evaluates to exactly ``value``.

    Data become literals or quotations; primitives their names; a closure its lambda
    (or letrec group) applied to the reified values it captured; a list that contains
    procedures becomes ``(list ...)``. Iterative, with sharing: a value reached twice is
    reified once.

    >>> from agentic_machines.cek import evaluate
    >>> v = evaluate("(let ((k 3)) (lambda (x) (+ x k)))")
    >>> unparse(reify(v))
    '((lambda (k) (lambda (x) (+ x k))) 3)'
    >>> evaluate(unparse(reify(v))) == v
    True
    """
    memo: dict[int, Expr] = {}
    reify_into([value], memo)
    return memo[id(value)]


def reify_into(roots: list[Any], memo: dict[int, Expr]) -> None:
    """Reify every value in ``roots`` into ``memo`` (id -> expression), with an explicit stack.

    The ids are stable because every value reified is reachable from ``roots``, which the
    caller keeps alive.
    """
    stack: list[tuple[Any, bool]] = [(v, False) for v in roots]
    while stack:
        v, expanded = stack.pop()
        key = id(v)
        if key in memo:
            continue
        t = type(v)
        if t is int or t is str or t is Bool or t is Nil:
            memo[key] = Const(v)
        elif t is Symbol:
            memo[key] = Quote(v)
        elif t is Prim:
            memo[key] = PrimRef(v.name)
        elif t is Pair:
            items = list(iter_list(v))
            if not expanded:
                stack.append((v, True))
                stack.extend((item, False) for item in items)
                continue
            parts = [memo[id(item)] for item in items]
            if all(type(p) is Const or type(p) is Quote for p in parts):
                memo[key] = Quote(v)
            else:
                memo[key] = App(seq_of([PrimRef("list")] + parts))
        elif t is Closure:
            if not expanded:
                stack.append((v, True))
                stack.extend((item, False) for item in v.env)
                continue
            group = v.group
            inner: Expr = (
                group.lams[0] if not group.names else Letrec(group, Var(group.names[v.index]))
            )
            memo[key] = bind(group.fv, v.env, inner, memo)
        else:
            raise WrongType(
                f"reify: {type(v).__name__} is not a value of the CEK language; pass what "
                "evaluate(...) returned"
            )


def bind(names: tuple, values: tuple, body: Expr, memo: dict[int, Expr]) -> Expr:
    """``((lambda (names...) body) values...)``, or ``body`` when there is nothing to bind."""
    if not names:
        return body
    return App(seq_of([Lambda(names, body)] + [memo[id(v)] for v in values]))


# The node types' repr and error messages print with this printer (see the docstring).
install_printer(unparse)
