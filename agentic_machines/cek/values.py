"""Run-time values: closures, primitives, and the primitive table.

Values are integers, strings, ``#t``/``#f``, symbols, proper lists, closures and
primitives. A :class:`Closure` is ``(group, index, env)``: member ``index`` of a group of
lambdas (see :class:`~agentic_machines.cek.expr.Group`) with ``env`` the values of the
group's free variables, in the order of ``group.fv``. It never refers to itself, so
every value is a finite tree that prints back as source
(:func:`agentic_machines.cek.printer.reify`).

Integers are bounded (magnitude below 2**1024) and strings by :data:`MAX_STRING`, so a
single step can never take unbounded time or memory; going past a bound is a run-time
error, like any other.

>>> PRIMITIVES["string-append"]("ab", "c")
'abc'
>>> PRIMITIVES["car"](5)
Traceback (most recent call last):
  ...
agentic_machines.errors.EvaluationError: car: expected a non-empty list, got 5
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from .._text import clip
from ..errors import EvaluationError
from .syntax import FALSE, NIL, TRUE, Bool, Nil, Node, Pair, Symbol, deep_equal, from_items, printed

__all__ = ["Closure", "Prim", "PRIMITIVES", "INT_LIMIT", "MAX_STRING", "type_name"]

INT_LIMIT = 2**1024
MAX_STRING = 1_000_000


class Closure(Node):
    """Member ``index`` of the lambda group ``group``, closed over ``env`` (aligned with ``group.fv``).

    >>> from agentic_machines.cek import evaluate
    >>> f = evaluate("(let ((k 1) (unused 2)) (lambda (x) (+ x k)))")
    >>> f.env, f.group.fv
    ((1,), ('k',))
    """

    __slots__ = ("group", "index", "env")
    _fields = ("group", "index", "env")

    def __init__(self, group: Any, index: int, env: tuple) -> None:
        self.group = group
        self.index = index
        self.env = env
        self._hash = hash(("Closure", group, index, env))

    def __repr__(self) -> str:
        text = printed(self)
        return f"<closure {text if len(text) <= 60 else text[:57] + '...'}>"


class Prim(Node):
    """A primitive procedure, referred to by its name.

    >>> Prim("car").fn(from_items([1, 2]))
    1
    """

    __slots__ = ("name", "fn")
    _fields = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name
        self.fn = PRIMITIVES[name]
        self._hash = hash(("Prim", name))

    def __repr__(self) -> str:
        return f"<primitive {self.name}>"


def type_name(v: Any) -> str:
    """A short description of a value for error messages.

    >>> type_name("x"), type_name(NIL)
    ('string', 'nil')
    """
    t = type(v)
    if t is int:
        return "integer"
    if t is str:
        return "string"
    return {
        Bool: "boolean",
        Nil: "nil",
        Pair: "list",
        Symbol: "symbol",
        Closure: "procedure",
        Prim: "procedure",
    }.get(t, t.__name__)


def _show(v: Any) -> str:
    text = printed(v)
    return clip(text, 40, "...")


def _int(name: str, v: Any) -> int:
    if type(v) is not int:
        raise EvaluationError(f"{name}: expected an integer, got {_show(v)} ({type_name(v)})")
    return v


def _str(name: str, v: Any) -> str:
    if type(v) is not str:
        raise EvaluationError(f"{name}: expected a string, got {_show(v)} ({type_name(v)})")
    return v


def _bounded(name: str, n: int) -> int:
    if -INT_LIMIT < n < INT_LIMIT:
        return n
    raise EvaluationError(
        f"{name}: integer overflow (results must stay below 2**1024 in magnitude)"
    )


def _add(*xs: Any) -> int:
    if len(xs) == 2:  # the common case, without the generator (same result and errors)
        a, b = xs
        if type(a) is int and type(b) is int:
            n = a + b
            if -INT_LIMIT < n < INT_LIMIT:
                return n
    return _bounded("+", sum(_int("+", x) for x in xs))


def _sub(*xs: Any) -> int:
    if len(xs) == 2:  # the common case, without the generator (same result and errors)
        a, b = xs
        if type(a) is int and type(b) is int:
            n = a - b
            if -INT_LIMIT < n < INT_LIMIT:
                return n
    if not xs:
        raise EvaluationError("-: expected at least one argument, as in (- 5) or (- 5 2)")
    first = _int("-", xs[0])
    if len(xs) == 1:
        return -first
    return _bounded("-", first - sum(_int("-", x) for x in xs[1:]))


def _mul(*xs: Any) -> int:
    result = 1
    for x in xs:
        result = _bounded("*", result * _int("*", x))
    return result


def _chain(name: str, ok: Callable[[int, int], bool]) -> Callable[..., Bool]:
    def compare(*xs: Any) -> Bool:
        if len(xs) == 2:  # the common case (same result and errors as below)
            a, b = xs
            if type(a) is int and type(b) is int:
                return TRUE if ok(a, b) else FALSE
        if len(xs) < 2:
            raise EvaluationError(f"{name}: expected at least two integers, as in ({name} 1 2)")
        ns = [_int(name, x) for x in xs]
        return TRUE if all(ok(a, b) for a, b in zip(ns, ns[1:])) else FALSE

    return compare


def _string_append(*xs: Any) -> str:
    result = "".join(_str("string-append", x) for x in xs)
    if len(result) > MAX_STRING:
        raise EvaluationError(f"string-append: result longer than {MAX_STRING} characters")
    return result


def _substring(s: Any, start: Any, end: Any) -> str:
    s = _str("substring", s)
    i, j = _int("substring", start), _int("substring", end)
    if not 0 <= i <= j <= len(s):
        raise EvaluationError(
            f"substring: need 0 <= start <= end <= {len(s)} (the string length), got {i} and {j}"
        )
    return s[i:j]


def _string_eq(*xs: Any) -> Bool:
    if len(xs) < 2:
        raise EvaluationError('string=?: expected at least two strings, as in (string=? "a" "b")')
    ss = [_str("string=?", x) for x in xs]
    return TRUE if all(a == b for a, b in zip(ss, ss[1:])) else FALSE


def _cons(a: Any, d: Any) -> Pair:
    if not (type(d) is Pair or d is NIL):
        raise EvaluationError(
            f"cons: the second argument must be a list (this Lisp has proper lists only), got {_show(d)}"
        )
    return Pair(a, d)


def _car(x: Any) -> Any:
    if type(x) is not Pair:
        raise EvaluationError(f"car: expected a non-empty list, got {_show(x)}")
    return x.car


def _cdr(x: Any) -> Any:
    if type(x) is not Pair:
        raise EvaluationError(f"cdr: expected a non-empty list, got {_show(x)}")
    return x.cdr


def _length(x: Any) -> int:
    if not (type(x) is Pair or x is NIL):
        raise EvaluationError(f"length: expected a list, got {_show(x)} ({type_name(x)})")
    n = 0
    while type(x) is Pair:
        n += 1
        x = x.cdr
    return n


def _append(*xs: Any) -> Pair | Nil:
    items: list[Any] = []
    for x in xs:
        if not (type(x) is Pair or x is NIL):
            raise EvaluationError(
                f"append: every argument must be a list (this Lisp has proper lists only), got "
                f"{_show(x)} ({type_name(x)})"
            )
    if not xs:
        return NIL
    for x in xs[:-1]:
        while type(x) is Pair:
            items.append(x.car)
            x = x.cdr
    result = xs[-1]
    for item in reversed(items):  # shares the last list, as Scheme's append does
        result = Pair(item, result)
    return result


def _fixed(name: str, n: int, fn: Callable[..., Any]) -> Callable[..., Any]:
    def checked(*xs: Any) -> Any:
        if len(xs) != n:
            raise EvaluationError(
                f"{name}: expected {n} argument{'s' if n != 1 else ''}, got {len(xs)}"
            )
        return fn(*xs)

    checked.__name__ = name
    return checked


PRIMITIVES: dict[str, Callable[..., Any]] = {
    "+": _add,
    "-": _sub,
    "*": _mul,
    "=": _chain("=", operator.eq),
    "<": _chain("<", operator.lt),
    ">": _chain(">", operator.gt),
    "<=": _chain("<=", operator.le),
    ">=": _chain(">=", operator.ge),
    "string-append": _string_append,
    "string-length": _fixed("string-length", 1, lambda s: len(_str("string-length", s))),
    "substring": _fixed("substring", 3, _substring),
    "string=?": _string_eq,
    "number->string": _fixed("number->string", 1, lambda n: str(_int("number->string", n))),
    "equal?": _fixed("equal?", 2, lambda a, b: TRUE if deep_equal(a, b) else FALSE),
    "not": _fixed("not", 1, lambda x: TRUE if x is FALSE else FALSE),
    "list": lambda *xs: from_items(xs),
    "cons": _fixed("cons", 2, _cons),
    "car": _fixed("car", 1, _car),
    "cdr": _fixed("cdr", 1, _cdr),
    "null?": _fixed("null?", 1, lambda x: TRUE if x is NIL else FALSE),
    "list?": _fixed("list?", 1, lambda x: TRUE if type(x) is Pair or x is NIL else FALSE),
    "length": _fixed("length", 1, _length),
    "append": _append,
    "pair?": _fixed("pair?", 1, lambda x: TRUE if type(x) is Pair else FALSE),
    "string?": _fixed("string?", 1, lambda x: TRUE if type(x) is str else FALSE),
    "number?": _fixed("number?", 1, lambda x: TRUE if type(x) is int else FALSE),
    "symbol?": _fixed("symbol?", 1, lambda x: TRUE if type(x) is Symbol else FALSE),
    "procedure?": _fixed("procedure?", 1, lambda x: TRUE if type(x) in (Closure, Prim) else FALSE),
}
"""The primitive procedures by name. Each raises ``EvaluationError`` on bad arguments."""
