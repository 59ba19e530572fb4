"""Spell source as text: printing values, balancing, reopening and wrapping prefixes.

A Spell turn hands the model an *open* program prefix; the model answers with a suffix;
the runtime concatenates the two and closes what is left open (:func:`balance`). The
turn-producing helpers build the next prefix: :func:`reopen` strips the three closing
parentheses of a wrapper ``(quine completion (eval (do ...)))`` so that the next turn
continues inside the same ``do``, and :func:`wrap_cat` starts a fresh wrapper around
some forms. :func:`pr_str` prints any Spell value as source that reads back.

>>> wrap_cat(["Count to three."])
'(quine completion (eval (do "Count to three." '
>>> print(balance('(quine completion (eval (do 1 2'))
(quine completion (eval (do 1 2)))
>>> print(reopen("(quine completion (eval (do 1 '(f))))"))
(quine completion (eval (do 1 '(f)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from .._text import clip
from ..cek.printer import unparse
from ..cek.reader import cached_by_text
from ..cek.syntax import Node, Pair, Symbol, from_items, iter_list
from ..errors import EvaluationError

__all__ = [
    "WRAPPER_HEAD",
    "pr_str",
    "to_datum",
    "literal",
    "balance",
    "reopen",
    "wrap_cat",
    "is_open_program",
    "rebuild_lists",
]

WRAPPER_HEAD = "(quine completion (eval (do "
"""The text every fresh wrapper starts with (the paper's wrapper, with ``completion`` bound)."""

# The reader's tokens: whitespace, comments, parentheses, quote, strings (possibly
# unterminated), atoms. Kept in step with agentic_machines.cek.reader.
_TOKEN = re.compile(r"""\s+|;[^\n]*|[()']|"(?:[^"\\]|\\[\s\S])*"?|[^\s()'";]+""")


# ---------------------------------------------------------------- function values
# They live here, beside the printer that shows them as their source, so that printing
# never imports the evaluator (which imports this module).


class SpellFn(Node):
    """A function value: its own source. ``name`` is ``None`` for an anonymous ``fn``.

    >>> from agentic_machines.cek import parse
    >>> SpellFn("inc", ("x",), (parse("(+ x 1)"),))
    <fn (fn inc (x) (+ x 1))>
    """

    __slots__ = ("name", "params", "body")
    _fields = ("name", "params", "body")

    def __init__(self, name: str | None, params: tuple[str, ...], body: tuple) -> None:
        self.name = name
        self.params = params
        self.body = body
        self._hash = hash(("SpellFn", name, params, body))

    def source(self) -> Pair:
        """The ``(fn name (params) body...)`` form that evaluates back to this function."""
        name = [Symbol(self.name)] if self.name else []
        params = from_items([Symbol(p) for p in self.params])
        return Pair(Symbol("fn"), from_items([*name, params, *self.body]))

    def __repr__(self) -> str:
        return f"<fn {pr_str(self)}>"


class Builtin(Node):
    """A builtin function, named; it prints as its name.

    >>> Builtin("str")
    <builtin str>
    """

    __slots__ = ("name",)
    _fields = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name
        self._hash = hash(("Builtin", name))

    def __repr__(self) -> str:
        return f"<builtin {self.name}>"


def rebuild_lists(
    root: Pair,
    descend: Callable[[Any], bool],
    leaf: Callable[[Any], Any],
    close: Callable[[list], Any],
) -> Any:
    """``root`` rebuilt bottom-up, without recursion: an item for which ``descend`` is
    true is a list rebuilt the same way, every other item becomes ``leaf(item)``, and
    each list's new items become ``close(items)``. The printer (:func:`to_datum`,
    :func:`literal`) and the edit markers (``spell.edits.apply_edits``) rewrite programs
    with it, so a program nested 100 000 deep is rewritten in the heap.

    >>> from agentic_machines.cek import parse
    >>> is_list = lambda x: type(x) is Pair
    >>> unparse(rebuild_lists(parse("(1 (2 3))"), is_list, lambda x: x * 10, from_items))
    '(10 (20 30))'
    """
    # Each stack entry: (the list's original items, its rebuilt items so far).
    stack: list[tuple[list, list]] = [(list(iter_list(root)), [])]
    while True:
        items, done = stack[-1]
        if len(done) == len(items):
            stack.pop()
            built = close(done)
            if not stack:
                return built
            stack[-1][1].append(built)
            continue
        x = items[len(done)]
        if descend(x):
            stack.append((list(iter_list(x)), []))
        else:
            done.append(leaf(x))


def _impure_list(x: Any) -> bool:
    """A list with a function somewhere inside (a pure one is program data as it is)."""
    return type(x) is Pair and not x.pure


def _datum_leaf(value: Any) -> Any:
    """A value that is not an impure list, as program data."""
    t = type(value)
    if t is SpellFn:
        return value.source()
    if t is Builtin:
        return Symbol(value.name)
    return value


def to_datum(value: Any) -> Any:
    """A Spell value as program data: functions become their ``(fn ...)`` source,
    builtins their name. Iterative, so a long list of values cannot recurse.

    >>> from agentic_machines.spell.text import SpellFn
    >>> unparse(to_datum(from_items([1, SpellFn("inc", ("x",), (from_items([Symbol("+"), Symbol("x"), 1]),))])))
    '(1 (fn inc (x) (+ x 1)))'
    """
    if not _impure_list(value):
        return _datum_leaf(value)
    return rebuild_lists(value, _impure_list, _datum_leaf, from_items)


def pr_str(value: Any) -> str:
    """Print a Spell value as source that reads back (``pr-str``).

    >>> pr_str("a \\"b\\""), pr_str(from_items([Symbol("quote"), Symbol("x")]))
    ('"a \\\\"b\\\\""', "'x")
    """
    return unparse(to_datum(value))


def literal(value: Any) -> Any:
    """A form that evaluates to ``value`` without effects: numbers, strings, booleans
    and ``nil`` stand for themselves, data lists and symbols are quoted, functions are
    their ``(fn ...)`` source, and a list holding functions is ``(list ...)`` of literals.
    Used to materialise results into the program text.

    >>> unparse(literal(from_items([1, 2]))), unparse(literal(7))
    ("'(1 2)", '7')
    """
    t = type(value)
    if t is SpellFn:
        return value.source()
    if t is Symbol or (t is Pair and value.pure):
        return from_items([Symbol("quote"), value])
    if t is not Pair:
        return to_datum(value)
    # A list with a function inside: (list <literal> ...).
    return rebuild_lists(value, _impure_list, _literal_leaf, _list_form)


def _literal_leaf(x: Any) -> Any:
    """An item of an impure list (itself no impure list) as a literal."""
    if type(x) is SpellFn:
        return x.source()
    if type(x) is Symbol or type(x) is Pair:
        return from_items([Symbol("quote"), x])
    return to_datum(x)


def _list_form(items: list) -> Pair:
    """``(list item ...)``."""
    return Pair(Symbol("list"), from_items(items))


def _tokens(text: str) -> list[re.Match]:
    return [m for m in _TOKEN.finditer(text) if not m.group()[0].isspace()]


@cached_by_text  # pure, and the harness balances the same prefix + completion many times
def balance(text: str) -> str:
    """Close every parenthesis left open and drop any ``)`` that closes nothing.

    The runtime does this to prefix + suffix before parsing, so the model may stop
    anywhere after its last form. An unterminated string is left alone (the parse then
    fails and error recovery takes over).

    >>> balance("(a (b) c"), balance("(a))")
    ('(a (b) c)', '(a)')
    >>> balance("(a ; note")
    '(a ; note\\n)'
    """
    depth = 0
    cut: list[tuple[int, int]] = []
    last = ""
    for m in _tokens(text):
        tok = m.group()
        if tok == "(":
            depth += 1
        elif tok == ")":
            if depth == 0:
                cut.append(m.span())
                continue
            depth -= 1
        last = tok
    if cut:
        pieces, at = [], 0
        for start, end in cut:
            pieces.append(text[at:start])
            at = end
        pieces.append(text[at:])
        text = "".join(pieces)
    if depth == 0:
        return text
    # A closing parenthesis after a trailing comment would be commented out.
    sep = "\n" if last.startswith(";") else ""
    return text + sep + ")" * depth


def reopen(program: Any) -> str:
    """The open prefix of a wrapper: its text without the last three closing parentheses.

    ``program`` is the quine data (as bound by ``quine``) or its text. The next turn
    continues inside the wrapper's ``do``. Raises :class:`EvaluationError` when the
    program does not end with three closing parentheses.

    >>> reopen("(quine completion (eval (do 1)))")
    '(quine completion (eval (do 1'
    >>> reopen("(f 1)")
    Traceback (most recent call last):
      ...
    agentic_machines.errors.EvaluationError: reopen: the program must end with three closing parentheses (a wrapper (quine completion (eval (do ...)))); got `(f 1)`
    """
    return _reopened(program if type(program) is str else pr_str(program))


@cached_by_text  # pure; a session reopens the same wrapper at each of its turns
def _reopened(text: str) -> str:
    toks = _tokens(text)
    if len(toks) < 3 or any(m.group() != ")" for m in toks[-3:]):
        shown = clip(text, 40, "...")
        raise EvaluationError(
            "reopen: the program must end with three closing parentheses (a wrapper "
            f"(quine completion (eval (do ...)))); got `{shown}`"
        )
    return text[: toks[-3].start()]


def wrap_cat(forms: Iterable[Any]) -> str:
    """A fresh wrapper prefix holding ``forms`` (printed with :func:`pr_str`).

    >>> wrap_cat(["plan", Symbol("x")])
    '(quine completion (eval (do "plan" x '
    """
    return WRAPPER_HEAD + " ".join(pr_str(f) for f in forms) + " "


def is_open_program(prefix: str) -> bool:
    """True when ``prefix`` begins with ``(``: it is program text, not a plain prompt.

    ``!llm-self`` wraps a plain prompt with :func:`wrap_cat` first.

    >>> is_open_program("  (quine c"), is_open_program("Guess a number")
    (True, False)
    """
    # The first token is "(" exactly when the text after the leading whitespace starts
    # with "(" (the tokens skip whitespace only): no need to read the whole prefix.
    return _OPENS.match(prefix) is not None


_OPENS = re.compile(r"\s*\(")
