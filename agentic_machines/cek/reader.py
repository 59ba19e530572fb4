"""Reading program text into data, without recursion; refusing what it cannot read.

Syntax: integers (``-12``), strings with the escapes ``\\\\ \\" \\n \\t
\\r``, ``#t``, ``#f`` (or ``#true``, ``#false``), ``nil`` (the empty list, also written
``()``), symbols, ``'d`` for ``(quote d)``, lists in parentheses, ``;`` comments to the
end of the line, and one dotted list: a parameter list ``(a . rest)`` right after
``lambda`` or ``define`` in code (not in quoted data). Scheme syntax outside this subset
(other dotted pairs, decimal numbers and fractions, characters, vectors, quasiquote and
unquote, other ``#`` syntax, ``[ ]``, ``|sym|``, ``\\`` in a name) is refused with a
:class:`~agentic_machines.errors.ParseError` that names the construct and what to write
instead: the reader never reads it as something else.
The reader keeps its own stack, so a 100 000-deep input is read or rejected with
:class:`~agentic_machines.errors.ParseError`, never ``RecursionError``. Printing data
back as text is :mod:`agentic_machines.cek.printer`.

>>> parse("(define 'x \\"a\\\\nb\\" -3 #t nil)")
<list (define 'x "a\\nb" -3 #t nil)>
>>> parse("'(1 2)") == parse("(quote (1 2))")
True
>>> parse("(+ 1")
Traceback (most recent call last):
  ...
agentic_machines.errors.ParseError: unclosed '(' opened here: add ')' to close it (line 1, column 1)
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, TypedDict, TypeVar

from .._memo import kept_for_texts
from ..errors import ParseError
from .syntax import FALSE, NIL, TRUE, Pair, Symbol, from_items
from .values import INT_LIMIT

__all__ = ["parse", "parse_program", "cached_by_text", "DOT"]

T = TypeVar("T")

_TOKEN = re.compile(
    r"""\s+|;[^\n]*|[()'`]|,@?|#\\[\s\S][^\s()'"`,;]*|#\(|"(?:[^"\\]|\\[\s\S])*"?|[^\s()'"`,;]+"""
)
_INT = re.compile(r"[+-]?[0-9]+\Z")
_ESCAPES = {"\\": "\\", '"': '"', "n": "\n", "t": "\t", "r": "\r"}
_ESCAPE = re.compile(r"\\([\s\S])")
_QUOTE = Symbol("quote")
DOT = Symbol(".")
"""The mark of a dotted parameter list: ``(a . rest)`` reads as the list ``(a . rest)``
whose middle item is this symbol (read nowhere else), and prints back as it was written."""
_NUMBERISH = re.compile(r"[+-]?\.?[0-9]|[+-](inf|nan)\.0\Z", re.IGNORECASE)
_DOTTED_HEADS = (Symbol("lambda"), Symbol("define"))
_REFUSED_TOKENS = {
    "`": "` (quasiquote) is not supported: build the list with (list ...) and quote its "
    "constant parts with '",
    ",": ", (unquote) is not supported: it only works inside quasiquote; build the list with "
    "(list ...)",
    ",@": ",@ (unquote-splicing) is not supported: build the list with (append ...) or (list ...)",
    "#(": "#( starts a vector, which the language does not have: use a list, '(1 2 3) or "
    "(list 1 2 3)",
}


class _Where(TypedDict):
    line: int
    column: int


def _where(text: str, pos: int) -> _Where:
    line = text.count("\n", 0, pos) + 1
    column = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return {"line": line, "column": column}


def cached_by_text(fn: Callable[[str], T]) -> Callable[[str], T]:
    """``fn`` with its results for recent texts kept (:func:`agentic_machines._memo.kept_for_texts`:
    the 128 last texts of at most 8,192 characters, exact ``str`` only, exceptions not
    kept): for a pure function of a text whose results are immutable, so the same
    object may serve every caller.

    >>> calls = []
    >>> @cached_by_text
    ... def shout(text):
    ...     calls.append(text)
    ...     return text.upper()
    >>> shout("a"), shout("a"), calls
    ('A', 'A', ['a'])
    """
    return kept_for_texts(maxsize=128, max_chars=8192)(fn)


@cached_by_text  # a datum is immutable (nodes, symbols, ints, strings): one serves all
def parse(text: str) -> Any:
    """Read exactly one datum from ``text``; raise :class:`ParseError` (with line and
    column, and what was expected) otherwise.

    A text read recently is not read again (:func:`cached_by_text`): Spell's harness
    reads its prefix with each completion, and an analysis tries the same prefixes and
    completions many times.

    >>> parse("  42 ")
    42
    >>> parse("(a b)") is parse("(a b)")
    True
    >>> parse("a b")
    Traceback (most recent call last):
      ...
    agentic_machines.errors.ParseError: expected the end of the program after the first expression, found `b`; wrap several expressions in (begin ...) (line 1, column 3)
    >>> parse("(cdr '(1 . 2))")
    Traceback (most recent call last):
      ...
    agentic_machines.errors.ParseError: dotted pairs are not supported (every list is a proper list): write (cons 1 '(2)) or (list 1 2); only a parameter list right after lambda or define, in code (not quoted), may end with `. rest` (line 1, column 10)
    """
    items, top_starts = _read(text)
    if len(items) > 1:
        pos = top_starts[1]
        found = _TOKEN.match(text, pos).group()  # type: ignore[union-attr]
        raise ParseError(
            f"expected the end of the program after the first expression, found `{found[:20]}`; "
            "wrap several expressions in (begin ...)",
            problem=f"expected the end of the program after the first expression, found "
            f"`{found[:20]}`",
            **_where(text, pos),
        )
    return items[0]


@cached_by_text
def parse_program(text: str) -> Any:
    """Read a program of one or more top-level forms: one form is itself, several are
    read as ``(begin form ...)``, so ``(define ...)`` forms come before the expression
    that uses them. Errors are those of :func:`parse`.

    >>> parse_program("(define x 1) (+ x 1)")
    <list (begin (define x 1) (+ x 1))>
    >>> parse_program("7")
    7
    """
    items, _ = _read(text)
    if len(items) == 1 and not (type(items[0]) is Pair and items[0].car == _DEFINE):
        return items[0]
    return Pair(_BEGIN, from_items(items))


_BEGIN = Symbol("begin")
_DEFINE = Symbol("define")


def _read(text: str) -> tuple[list[Any], list[int]]:
    # The top-level data read, and where each starts.
    if not isinstance(text, str):
        raise ParseError(f"program text must be a string, got {type(text).__name__}")
    # (enclosing items, position of '(', pending quotes, index of '.' among the items or -1,
    # position of that '.', whether the enclosing list is quoted data)
    stack: list[tuple[list, int, int, int, int, bool]] = []
    items: list[Any] = []
    top_starts: list[int] = []
    quotes = 0
    quote_pos = 0
    dot_at = dot_pos = -1
    # The list being read is quoted data (after ' or inside (quote ...), at any depth):
    # there a dotted list would be a pair, which the language does not have.
    data = False
    for match in _TOKEN.finditer(text):
        tok = match.group()
        first = tok[0]
        pos = match.start()
        if first.isspace() or first == ";":
            continue
        if not stack and quotes == 0 and first != ")":
            top_starts.append(pos)
        if first == "(":
            stack.append((items, pos, quotes, dot_at, dot_pos, data))
            data = data or quotes > 0 or (bool(items) and items[0] == _QUOTE)
            items, quotes, dot_at = [], 0, -1
            continue
        if first == ")":
            if not stack:
                raise ParseError(
                    "unexpected ')': there is no '(' to close; remove it",
                    problem="unexpected ')': there is no '(' to close",
                    **_where(text, pos),
                )
            if quotes:
                raise ParseError(
                    "' must be followed by a datum, found ')'", **_where(text, quote_pos)
                )
            if dot_at >= 0:
                _check_dotted(text, items, dot_at, stack[-1], dot_pos, data)
                items.insert(dot_at, DOT)
            datum: Any = from_items(items)
            items, _, quotes, dot_at, dot_pos, data = stack.pop()
        elif first == "'":
            if quotes == 0:
                quote_pos = pos
            quotes += 1
            continue
        elif tok == ".":
            if not stack or quotes or not items or dot_at >= 0:
                raise ParseError(_DOTTED_PAIR, problem=_DOTTED_PROBLEM, **_where(text, pos))
            dot_at, dot_pos = len(items), pos
            continue
        elif first == '"':
            datum = _string(text, tok, pos)
        elif tok in _REFUSED_TOKENS:
            message = _REFUSED_TOKENS[tok]
            raise ParseError(message, problem=message.split(": ")[0], **_where(text, pos))
        else:
            datum = _atom(text, tok, pos)
        while quotes:
            datum = Pair(_QUOTE, Pair(datum, NIL))
            quotes -= 1
        items.append(datum)
    if stack:
        raise ParseError(
            "unclosed '(' opened here: add ')' to close it",
            problem="unclosed '('",
            **_where(text, stack[-1][1]),
        )
    if quotes:
        raise ParseError(
            "' must be followed by a datum, found the end of the program", **_where(text, quote_pos)
        )
    if not items:
        raise ParseError(
            "empty program: expected an expression such as (+ 1 2)",
            problem="empty program",
            **_where(text, len(text)),
        )
    return items, top_starts


_DOTTED_PAIR = (
    "dotted pairs are not supported (every list is a proper list): write (cons 1 '(2)) or "
    "(list 1 2); only a parameter list right after lambda or define, in code (not quoted), may "
    "end with `. rest`"
)
_DOTTED_PROBLEM = "dotted pairs are not supported (every list is a proper list)"


def _check_dotted(text: str, items: list, dot_at: int, outer: tuple, pos: int, data: bool) -> None:
    # A dotted list is read only as the parameter list of (lambda (a . rest) ...) or
    # (define (f a . rest) ...) in code: one item after the dot, right after the head, and
    # no quote around it ('(lambda (a . b) c) is data, where it would be a pair).
    after = len(items) - dot_at
    enclosing = outer[0]
    if after != 1:
        raise ParseError(
            f"a dotted list must end with exactly one item after `.`, found {after}: "
            "write (a b . rest)",
            problem=f"a dotted list must end with exactly one item after `.`, found {after}",
            **_where(text, pos),
        )
    if data or len(enclosing) != 1 or enclosing[0] not in _DOTTED_HEADS:
        raise ParseError(_DOTTED_PAIR, problem=_DOTTED_PROBLEM, **_where(text, pos))


def _string(text: str, tok: str, pos: int) -> str:
    if len(tok) < 2 or not tok.endswith('"') or _odd_backslashes_before_end(tok):
        raise ParseError(
            'unterminated string: add a closing "',
            problem="unterminated string",
            **_where(text, pos),
        )
    body = tok[1:-1]
    if "\\" not in body:
        return body

    def unescape(m: re.Match) -> str:
        c = m.group(1)
        if c not in _ESCAPES:
            raise ParseError(
                f'unknown escape \\{c} in a string: use \\\\, \\", \\n, \\t or \\r',
                problem=f"unknown escape \\{c} in a string",
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
        if tok == "#t" or tok == "#true":
            return TRUE
        if tok == "#f" or tok == "#false":
            return FALSE
        if tok[:2] == "#\\":
            raise ParseError(
                f"`{tok[:20]}` is a character, which the language does not have: "
                'use a one-character string such as "a"',
                problem=f"`{tok[:20]}` is a character, which the language does not have",
                **_where(text, pos),
            )
        raise ParseError(
            f"unknown literal `{tok[:20]}`: the only # literals are #t and #f "
            "(no #x numbers, #; or #| |# comments, #u8 or #! syntax); comment with ;",
            problem=f"unknown literal `{tok[:20]}`: the only # literals are #t and #f",
            **_where(text, pos),
        )
    if _NUMBERISH.match(tok):
        raise ParseError(
            f"`{tok[:20]}` is not an integer, and the language has no other numbers (no "
            "decimals, fractions or exponents; names cannot start with a digit): write an "
            "integer such as 2",
            problem=f"`{tok[:20]}` is not an integer, and the language has no other numbers",
            **_where(text, pos),
        )
    for c in "[]{}|\\":  # \ escapes a name's characters in Scheme: ours never have one
        if c in tok:
            raise ParseError(
                f"`{c}` is not part of the language: write lists with ( and ) and symbols "
                "without [ ] { } | or \\",
                problem=f"`{c}` is not part of the language",
                **_where(text, pos + tok.index(c)),
            )
    if tok == "nil":
        return NIL
    return Symbol(tok)
