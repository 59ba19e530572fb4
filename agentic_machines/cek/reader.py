"""Reading program text into data and printing data back, both without recursion.

Syntax: integers (``-12``), strings with the escapes ``\\\\ \\" \\n \\t
\\r``, ``#t``, ``#f``, ``nil`` (the empty list, also written ``()``), symbols, ``'d``
for ``(quote d)``, lists in parentheses, and ``;`` comments to the end of the line.
The reader and the printer keep their own stacks, so a 100 000-deep input is read or
rejected with :class:`~agentic_machines.errors.ParseError`, never ``RecursionError``.

>>> parse("(define 'x \\"a\\\\nb\\" -3 #t nil)")
<list (define 'x "a\\nb" -3 #t nil)>
>>> unparse(parse("(quote (1 2))"))
"'(1 2)"
>>> parse("(+ 1")
Traceback (most recent call last):
  ...
agentic_machines.errors.ParseError: unclosed '(' opened here: add ')' to close it (line 1, column 1)
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import ParseError
from .syntax import FALSE, NIL, TRUE, Bool, Nil, Pair, Symbol, from_items, iter_list
from .values import INT_LIMIT, Closure, Prim

__all__ = ["parse", "unparse", "escape_string"]

_TOKEN = re.compile(r"""\s+|;[^\n]*|[()']|"(?:[^"\\]|\\[\s\S])*"?|[^\s()'";]+""")
_INT = re.compile(r"[+-]?[0-9]+\Z")
_ESCAPES = {"\\": "\\", '"': '"', "n": "\n", "t": "\t", "r": "\r"}
_ESCAPE = re.compile(r"\\([\s\S])")
_QUOTE = Symbol("quote")


def _where(text: str, pos: int) -> dict[str, int]:
    line = text.count("\n", 0, pos) + 1
    column = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return {"line": line, "column": column}


def parse(text: str) -> Any:
    """Read exactly one datum from ``text``; raise :class:`ParseError` (with line and
    column, and what was expected) otherwise.

    >>> parse("  42 ")
    42
    >>> parse("a b")
    Traceback (most recent call last):
      ...
    agentic_machines.errors.ParseError: expected the end of the program after the first expression, found `b`; wrap several expressions in (begin ...) (line 1, column 3)
    """
    if not isinstance(text, str):
        raise ParseError(f"program text must be a string, got {type(text).__name__}")
    stack: list[tuple[list, int, int]] = []  # (enclosing items, position of '(', pending quotes)
    items: list[Any] = []
    top_starts: list[int] = []
    quotes = 0
    quote_pos = 0
    for match in _TOKEN.finditer(text):
        tok = match.group()
        first = tok[0]
        pos = match.start()
        if first.isspace() or first == ";":
            continue
        if not stack and quotes == 0 and first != ")":
            top_starts.append(pos)
        if first == "(":
            stack.append((items, pos, quotes))
            items, quotes = [], 0
            continue
        if first == ")":
            if not stack:
                raise ParseError(
                    "unexpected ')': there is no '(' to close; remove it", **_where(text, pos)
                )
            if quotes:
                raise ParseError(
                    "' must be followed by a datum, found ')'", **_where(text, quote_pos)
                )
            datum: Any = from_items(items)
            items, _, quotes = stack.pop()
        elif first == "'":
            if quotes == 0:
                quote_pos = pos
            quotes += 1
            continue
        elif first == '"':
            datum = _string(text, tok, pos)
        else:
            datum = _atom(text, tok, pos)
        while quotes:
            datum = Pair(_QUOTE, Pair(datum, NIL))
            quotes -= 1
        items.append(datum)
    if stack:
        raise ParseError(
            "unclosed '(' opened here: add ')' to close it", **_where(text, stack[-1][1])
        )
    if quotes:
        raise ParseError(
            "' must be followed by a datum, found the end of the program", **_where(text, quote_pos)
        )
    if not items:
        raise ParseError(
            "empty program: expected an expression such as (+ 1 2)", **_where(text, len(text))
        )
    if len(items) > 1:
        pos = top_starts[1]
        found = _TOKEN.match(text, pos).group()  # type: ignore[union-attr]
        raise ParseError(
            f"expected the end of the program after the first expression, found `{found[:20]}`; "
            "wrap several expressions in (begin ...)",
            **_where(text, pos),
        )
    return items[0]


def _string(text: str, tok: str, pos: int) -> str:
    if len(tok) < 2 or not tok.endswith('"') or _odd_backslashes_before_end(tok):
        raise ParseError('unterminated string: add a closing "', **_where(text, pos))
    body = tok[1:-1]
    if "\\" not in body:
        return body

    def unescape(m: re.Match) -> str:
        c = m.group(1)
        if c not in _ESCAPES:
            raise ParseError(
                f'unknown escape \\{c} in a string: use \\\\, \\", \\n, \\t or \\r',
                **_where(text, pos + 1 + m.start()),
            )
        return _ESCAPES[c]

    return _ESCAPE.sub(unescape, body)


def _odd_backslashes_before_end(tok: str) -> bool:
    # '"abc\"' is an unterminated string whose last quote is escaped.
    n = 0
    i = len(tok) - 2
    while i >= 1 and tok[i] == "\\":
        n += 1
        i -= 1
    return n % 2 == 1


def _atom(text: str, tok: str, pos: int) -> Any:
    if _INT.match(tok):
        digits = len(tok.lstrip("+-"))
        value = int(tok) if digits <= 400 else INT_LIMIT
        if not -INT_LIMIT < value < INT_LIMIT:
            raise ParseError(
                "integer literal too large: integers must stay below 2**1024 in magnitude",
                **_where(text, pos),
            )
        return value
    if tok[0] == "#":
        if tok == "#t":
            return TRUE
        if tok == "#f":
            return FALSE
        raise ParseError(
            f"unknown literal `{tok[:20]}`: the only # literals are #t and #f", **_where(text, pos)
        )
    if tok == "nil":
        return NIL
    return Symbol(tok)


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

    >>> unparse(parse("(a (b \\"c\\") '() #f)"))
    '(a (b "c") \\'nil #f)'
    """
    from .expr import Expr, to_datum

    if isinstance(x, Expr):
        x = to_datum(x)
    elif not _pure(x):
        from .theorem import reify

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
            raise TypeError(
                f"unparse: cannot print {type(x).__name__}; expected program data, an expression or a value"
            )
    return "".join(out)
