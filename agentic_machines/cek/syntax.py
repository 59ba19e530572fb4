"""Data of the CEK language: symbols, booleans, lists, and immutable nodes.

Every value that can nest (lists, closures, expressions, continuation frames, states)
is a :class:`Node`: an immutable slotted object whose hash is computed once, when it is
built, from the already cached hashes of its parts. Equality walks both structures with
an explicit stack (:func:`deep_equal`), so comparing or hashing a 100 000-deep value
never touches the Python call stack.

Lists are proper lists only: ``cons`` requires a list as its second argument, so there
is no dotted-pair syntax and every list prints back as it was read.

>>> xs = from_items([1, "a", Symbol("b")])
>>> xs == from_items([1, "a", Symbol("b")]), len(to_items(xs))
(True, 3)
>>> TRUE == 1, TRUE == TRUE
(False, True)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ..errors import WrongType

__all__ = [
    "Node",
    "deep_equal",
    "Symbol",
    "Bool",
    "TRUE",
    "FALSE",
    "Nil",
    "NIL",
    "Pair",
    "from_items",
    "to_items",
    "iter_list",
    "is_list",
]


# The printer sits above the data, values and expressions, yet their reprs and error
# messages print: cek/printer.py installs its ``unparse`` here when it is imported, and
# cek/__init__.py imports it, so the slot is filled whichever cek module is imported first.
_PRINTER: list[Callable[[Any], str]] = []


def install_printer(unparse: Callable[[Any], str]) -> None:
    """Make :func:`printed` use ``unparse`` (cek/printer.py calls this once, on import)."""
    _PRINTER[:] = [unparse]


def printed(x: Any) -> str:
    """``x`` as program text, by the printer cek/printer.py installed.

    The package's ``__init__`` imports the printer, so it is always installed when the
    module is imported as ``agentic_machines.cek.syntax``; a copy loaded on its own gets
    a plain ``<Name>`` instead of an ``IndexError`` from ``repr``. It never raises: reprs
    and messages print with it, and a list may hold a value the printer does not know (a
    Spell builtin), which is shown by its own ``repr``.

    >>> from agentic_machines.spell.text import Builtin
    >>> printed(Symbol("a")), printed(from_items([1, from_items([Builtin("car")])]))
    ('a', '(1 (<builtin car>))')
    """
    if not _PRINTER:
        return f"<{type(x).__name__}>"
    try:
        return _PRINTER[0](x)
    except WrongType:
        if type(x) is Pair:
            return "(" + " ".join(map(printed, iter_list(x))) + ")"
        if type(x).__module__.startswith(_HERE):  # its repr prints with printed: no loop
            return f"<{type(x).__name__}>"
        return repr(x)


_HERE = __name__.rpartition(".")[0]


class Node:
    """Base of every immutable nested value: cached hash, iterative equality.

    Subclasses list the fields that take part in equality in ``_fields`` and set
    ``self._hash`` in ``__init__`` from those fields. Objects are immutable by
    convention (slots, no setters, and no code assigns a field after ``__init__``);
    plain slots instead of a ``dataclass(frozen=True)`` keep construction
    cheap in the CEK step loop, where a frozen dataclass costs an ``object.__setattr__``
    call per field, and a dataclass's generated ``__eq__`` would recurse into deep values
    where :func:`deep_equal` uses an explicit stack.

    >>> Symbol("x") == Symbol("x"), hash(Symbol("x")) == hash(Symbol("x"))
    (True, True)
    """

    __slots__ = ("_hash",)
    _fields: tuple[str, ...] = ()

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if type(other) is not type(self) or other._hash != self._hash:  # type: ignore[attr-defined]
            return False
        return deep_equal(self, other)

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        # _hash is a slot every subclass sets (Frame: a property); not declared on Node,
        # since a declared int clashes with Frame's read-only property in cek/machine.py.
        return self._hash  # type: ignore[attr-defined]

    def __reduce__(self) -> str | tuple[Any, ...]:
        # A str names a module-level singleton (Bool, Nil); a tuple rebuilds from the fields.
        return (type(self), tuple(getattr(self, f) for f in self._fields))

    # Immutable, so a copy is the object itself (and copying a deep value cannot recurse).
    def __copy__(self) -> Node:
        return self

    def __deepcopy__(self, memo: dict) -> Node:
        return self


def deep_equal(a: Any, b: Any) -> bool:
    """Structural equality of nested nodes and tuples, with an explicit stack.

    Leaves (ints, strings) are compared with ``==`` only when their types agree, so
    the integer ``1`` never equals the boolean ``#t``.

    >>> deep_equal((1, (2, "x")), (1, (2, "x"))), deep_equal(1, TRUE)
    (True, False)
    """
    stack = [(a, b)]
    pop, push = stack.pop, stack.append
    while stack:
        x, y = pop()
        if x is y:
            continue
        tx = type(x)
        if tx is not type(y):
            return False
        if tx is tuple:
            if len(x) != len(y):
                return False
            stack.extend(zip(x, y))
        elif isinstance(x, Node):
            if x._hash != y._hash:  # type: ignore[attr-defined]  # see Node.__hash__
                return False
            for name in tx._fields:
                push((getattr(x, name), getattr(y, name)))
        elif x != y:
            return False
    return True


class Symbol(Node):
    """A symbol: a variable name in code, an atom in quoted data.

    >>> Symbol("foo")
    Symbol('foo')
    """

    __slots__ = ("name",)
    _fields = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name
        self._hash = hash(("Symbol", name))

    def __repr__(self) -> str:
        return f"Symbol({self.name!r})"


class Bool(Node):
    """The booleans ``#t`` and ``#f``; use the singletons :data:`TRUE` and :data:`FALSE`.

    A separate type (not Python's ``bool``) because ``True == 1`` in Python, and the
    language must keep ``#t`` and ``1`` apart (in ``equal?`` and in state equality).

    >>> TRUE, FALSE
    (#t, #f)
    """

    __slots__ = ("value",)
    _fields = ("value",)

    def __init__(self, value: bool) -> None:
        self.value = bool(value)
        self._hash = hash(("Bool", self.value))

    def __repr__(self) -> str:
        return "#t" if self.value else "#f"

    def __reduce__(self) -> str:
        # Stay a singleton through pickle and copy: the machine tests ``x is FALSE``.
        return "TRUE" if self.value else "FALSE"


TRUE = Bool(True)
FALSE = Bool(False)


class Nil(Node):
    """The empty list, read from ``nil`` or ``()``; use the singleton :data:`NIL`.

    >>> NIL, len(to_items(NIL))
    (nil, 0)
    """

    __slots__ = ()
    _fields = ()
    pure = True  # see Pair.pure

    def __init__(self) -> None:
        self._hash = hash("Nil")

    def __repr__(self) -> str:
        return "nil"

    def __reduce__(self) -> str:
        return "NIL"


NIL = Nil()


class Pair(Node):
    """A non-empty list cell: ``car`` is the first item, ``cdr`` the rest (a list).

    ``pure`` is True when the list is program data all the way down (numbers, strings,
    booleans, nil, symbols, lists: no procedure inside). It is computed once, here, so
    that checking a quoted datum costs O(1): ``(eval '(eval '(eval ...)))`` nested n
    deep then compiles in O(n), not O(n²).

    >>> Pair(1, NIL) == from_items([1]), Pair(1, NIL).pure
    (True, True)
    """

    __slots__ = ("car", "cdr", "pure")
    _fields = ("car", "cdr")
    pure: bool

    def __init__(self, car: Any, cdr: Pair | Nil) -> None:
        self.car = car
        self.cdr = cdr
        self._hash = hash(("Pair", car, cdr))
        t = type(car)
        self.pure = (t in _DATA_LEAVES or (t is Pair and car.pure)) and cdr.pure

    def __repr__(self) -> str:
        return f"<list {printed(self)}>"


_DATA_LEAVES = frozenset({int, str, Symbol, Bool, Nil})
"""The types of the atoms of program data (anything else in a list is a procedure)."""


def from_items(items: Iterable[Any]) -> Pair | Nil:
    """Build a list from Python items (last item first, so no recursion).

    >>> from_items([])
    nil
    """
    result: Pair | Nil = NIL
    for item in reversed(list(items)):
        result = Pair(item, result)
    return result


def iter_list(lst: Pair | Nil) -> Iterator[Any]:
    """Iterate the items of a proper list.

    >>> list(iter_list(from_items([1, 2])))
    [1, 2]
    """
    while type(lst) is Pair:
        yield lst.car
        lst = lst.cdr


def to_items(lst: Pair | Nil) -> list[Any]:
    """The items of a proper list as a Python list.

    >>> to_items(from_items("ab"))
    ['a', 'b']
    """
    return list(iter_list(lst))


def is_list(value: Any) -> bool:
    """True for ``nil`` and for pairs (every pair is a proper list by construction).

    >>> is_list(NIL), is_list(5)
    (True, False)
    """
    return type(value) is Pair or value is NIL
