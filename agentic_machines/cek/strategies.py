"""Hypothesis strategies for CEK programs and completions (public, for users' own tests).

- :func:`programs` draws well-formed, terminating program texts that reach ``llm``
  boundaries in every kind of context: operator and operand positions, primitive
  arguments, ``if`` tests, ``let`` and ``letrec`` bodies (mutual recursion included),
  closures that capture values, inside ``eval`` (quoted data and program text), and
  after earlier ``llm`` calls.
- :func:`completions` draws completions: random text, arbitrary unicode, valid program
  texts (including ones that loop or fail), and invalid ones (unbalanced parentheses,
  huge nesting).
- :func:`data` draws quoted data, for reader round trips.

Every program terminates on every completion sequence: the only recursion is through
``letrec`` loops that count a literal bound down to zero, and ``(eval (llm ...))``
evaluates the completion, so it terminates when the completion does.

>>> from hypothesis import given, settings
>>> from agentic_machines.cek import first_boundary
>>> @settings(max_examples=20, database=None)
... @given(programs())
... def test_reaches_a_boundary_or_ends(text):
...     first_boundary(text)
>>> test_reaches_a_boundary_or_ends()
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from .printer import escape_string
from .reader import parse
from .syntax import FALSE, NIL, TRUE, Symbol, from_items

__all__ = ["programs", "completions", "data", "LOOPING_PROGRAMS", "ERRORING_PROGRAMS"]

_TEXT = st.text(alphabet=st.sampled_from(list("abc xyz\"\\\n\t()'é;λ")), max_size=6)

LOOPING_PROGRAMS = (
    "(letrec ((f (lambda () (f)))) (f))",
    "(letrec ((f (lambda (x) (g x))) (g (lambda (x) (f x)))) (f 1))",
    "(letrec ((f (lambda (n) (f (+ n 1))))) (f 0))",
    "(letrec ((f (lambda (n) (+ 1 (f n))))) (f 0))",
    '(letrec ((f (lambda (s) (f (string-append s "a"))))) (f ""))',
    "(letrec ((f (lambda (x) (begin (f x) 1)))) (f 2))",
    "(letrec ((f (lambda (x) (f (* x x))))) (f 2))",
)
"""Programs that never end: some repeat a state (↑), some grow without bound (Undecided)."""

ERRORING_PROGRAMS = (
    "(car nil)",
    '(+ 1 "a")',
    "(undefined-variable 1)",
    "((lambda (x) x))",
    '(substring "abc" 2 1)',
    "(llm 5)",
    '(eval "(+ 1")',
    "(eval 42)",
    "(1 2 3)",
    "(lambda (car) car)",
    "(if 1 2)",
)
"""Programs that are malformed or fail at run time (every one ends the run as HALT)."""


@st.composite
def programs(draw: Any, max_depth: int = 4) -> str:
    """Program texts whose ``llm`` calls appear in every kind of context (see module doc).

    >>> from hypothesis import given, settings
    >>> from agentic_machines.cek.expr import compile_program
    >>> @settings(max_examples=10, database=None)
    ... @given(programs())
    ... def closed(text):
    ...     assert compile_program(parse(text)).fv == ()  # it reads, compiles and is closed
    >>> closed()
    """
    gen = _Gen(draw)
    return gen.expr("str", {}, draw(st.integers(1, max_depth)))


@st.composite
def _closed_str(draw: Any, max_depth: int = 3) -> str:
    return _Gen(draw).expr("str", {}, draw(st.integers(0, max_depth)))


def completions() -> st.SearchStrategy[str]:
    """Completions of every kind: text, unicode, programs (good, looping, failing), garbage.

    >>> from hypothesis import find
    >>> find(completions(), lambda c: c.startswith("(letrec"))[:7]
    '(letrec'
    """
    return st.one_of(
        _TEXT,
        st.text(max_size=30),
        st.sampled_from(
            [
                "",
                "hello",
                "42",
                "#t",
                "nil",
                "'x",
                '"quoted"',
                "x",
                "(",
                ")",
                '"',
                "#q",
                "99999999999999",
            ]
        ),
        _closed_str(),
        st.sampled_from(LOOPING_PROGRAMS + ERRORING_PROGRAMS),
        st.integers(1, 3000).map(lambda n: "(" * n),
        st.integers(1, 3000).map(lambda n: "(" * n + ")" * n),
        st.integers(1, 300).map(lambda n: "(+ 1 " * n + "0" + ")" * n),
        st.lists(
            st.sampled_from(["(", ")", '"', "'", " ", "a", "1", "llm", "eval", "\\"]), max_size=12
        ).map("".join),
    )


def data(max_leaves: int = 20) -> st.SearchStrategy[Any]:
    """Quoted data: integers, strings, booleans, nil, symbols, nested lists.

    >>> from hypothesis import find
    >>> from agentic_machines.cek.syntax import Pair
    >>> type(find(data(), lambda d: isinstance(d, Pair))).__name__
    'Pair'
    """
    leaves = st.one_of(
        st.integers(-(10**30), 10**30),
        st.text(max_size=8),
        st.sampled_from([TRUE, FALSE, NIL]),
        st.from_regex(r"[a-z+*<=?!-][a-z0-9+*<=?!-]{0,6}", fullmatch=True)
        .filter(_is_symbol)
        .map(Symbol),
    )
    return st.recursive(
        leaves, lambda inner: st.lists(inner, max_size=5).map(from_items), max_leaves=max_leaves
    )


def _is_symbol(name: str) -> bool:

    try:
        return type(parse(name)) is Symbol
    except Exception:
        return False


class _Gen:
    """Typed random expressions; ``scope`` maps variable names to types (str, int, bool, list)."""

    def __init__(self, draw: Any, prefix: str = "q") -> None:
        self.draw = draw
        self.fresh = 0
        # literal prompts start with the prefix: "q" at top level, "e" inside eval'd code,
        # so a test can tell where a boundary came from
        self.prefix = prefix

    def name(self) -> str:
        self.fresh += 1
        return f"v{self.fresh}"

    def var(self, ty: str, scope: dict[str, str]) -> str | None:
        names = sorted(n for n, t in scope.items() if t == ty)
        return self.draw(st.sampled_from(names)) if names else None

    def literal(self, ty: str) -> str:
        d = self.draw
        if ty == "str":
            return escape_string(d(_TEXT))
        if ty == "int":
            return str(d(st.integers(-5, 20)))
        if ty == "bool":
            return d(st.sampled_from(["#t", "#f"]))
        return d(st.sampled_from(["nil", "'(a b)", '(list "x")', '\'(1 (2 "z"))']))

    def prompt(self, scope: dict[str, str], depth: int) -> str:
        # A prompt is any string expression; usually a literal so prompts are readable.
        if depth <= 0 or self.draw(st.booleans()):
            return escape_string(self.prefix + str(self.draw(st.integers(0, 9))))
        return self.expr("str", scope, depth - 1)

    def expr(self, ty: str, scope: dict[str, str], depth: int) -> str:
        d = self.draw
        if depth <= 0:
            options = ["lit", "var", "llm"] if ty == "str" else ["lit", "var"]
            kind = d(st.sampled_from(options))
            if kind == "var":
                v = self.var(ty, scope)
                if v is not None:
                    return v
            if kind == "llm":
                return f"(llm {self.prompt(scope, 0)})"
            return self.literal(ty)
        kinds = list(_KINDS_ANY)
        kinds += {"str": _KINDS_STR, "int": _KINDS_INT, "bool": _KINDS_BOOL, "list": _KINDS_LIST}[
            ty
        ]
        kind = d(st.sampled_from(kinds))
        return getattr(self, "k_" + kind)(ty, scope, depth - 1)

    # -- forms usable at every type ---------------------------------------------------
    def k_lit(self, ty: str, scope: dict, n: int) -> str:
        v = self.var(ty, scope)
        return v if v is not None and self.draw(st.booleans()) else self.literal(ty)

    def k_if(self, ty: str, scope: dict, n: int) -> str:
        # an if test that may itself be a boundary
        test = (
            self.expr("bool", scope, n)
            if self.draw(st.booleans())
            else f'(string=? (llm {self.prompt(scope, n)}) "yes")'
        )
        return f"(if {test} {self.expr(ty, scope, n)} {self.expr(ty, scope, n)})"

    def k_let(self, ty: str, scope: dict, n: int) -> str:
        x, tx = self.name(), self.draw(st.sampled_from(["str", "int", "list"]))
        init = self.expr(tx, scope, n)
        return f"(let (({x} {init})) {self.expr(ty, {**scope, x: tx}, n)})"

    def k_let2(self, ty: str, scope: dict, n: int) -> str:
        # two earlier llm calls bound, then a body that may call llm again
        a, b = self.name(), self.name()
        return (
            f"(let (({a} (llm {self.prompt(scope, n)})) ({b} {self.expr('int', scope, n)})) "
            f"{self.expr(ty, {**scope, a: 'str', b: 'int'}, n)})"
        )

    def k_begin(self, ty: str, scope: dict, n: int) -> str:
        first = self.expr(self.draw(st.sampled_from(["str", "int"])), scope, n)
        return f"(begin {first} {self.expr(ty, scope, n)})"

    def k_apply(self, ty: str, scope: dict, n: int) -> str:
        # ((lambda (x) body) arg): the boundary may be in the operand or the body
        x, tx = self.name(), self.draw(st.sampled_from(["str", "int"]))
        body = self.expr(ty, {**scope, x: tx}, n)
        return f"((lambda ({x}) {body}) {self.expr(tx, scope, n)})"

    def k_operator(self, ty: str, scope: dict, n: int) -> str:
        # the boundary is in operator position: the procedure is chosen after an llm call
        x = self.name()
        f1 = f"(lambda ({x}) {self.expr(ty, {**scope, x: 'str'}, n)})"
        f2 = f"(lambda ({x}) {self.expr(ty, {**scope, x: 'str'}, n)})"
        if self.draw(st.booleans()):
            op = f'(if (string=? (llm {self.prompt(scope, n)}) "a") {f1} {f2})'
        else:
            op = f"(begin (llm {self.prompt(scope, n)}) {f1})"
        return f"({op} {self.expr('str', scope, n)})"

    def k_closure(self, ty: str, scope: dict, n: int) -> str:
        # a closure captures a value, then is called where a boundary follows
        g, cap, a = self.name(), self.name(), self.name()
        inner = {cap: "str", a: "str"}
        if self.draw(st.booleans()):
            inner.update(scope)
        body = self.expr(ty, inner, n)
        if cap not in body:  # make sure the closure captures cap (a value, not a name)
            body = f"(begin {cap} {body})"
        arg = (
            f"(llm {self.prompt(scope, n)})"
            if self.draw(st.booleans())
            else self.expr("str", scope, n)
        )
        return (
            f"(let (({g} (let (({cap} {self.expr('str', scope, n)})) (lambda ({a}) {body})))) "
            f"({g} {arg}))"
        )

    def k_loop(self, ty: str, scope: dict, n: int) -> str:
        # letrec recursion with a literal bound; the body may call llm at each level
        f, i, acc = self.name(), self.name(), self.name()
        inner = {**scope, i: "int", acc: ty}
        step = self.expr(ty, inner, n)
        bound = self.draw(st.integers(0, 3))
        if self.draw(st.booleans()):
            # non-tail: the recursive call sits in an operand position, frames pile up
            if ty == "str":
                body = f"(if (< {i} 1) {acc} (string-append {step} ({f} (- {i} 1) {acc})))"
            elif ty == "int":
                body = f"(if (< {i} 1) {acc} (+ (string-length (llm {self.prompt(inner, 0)})) ({f} (- {i} 1) {acc})))"
            else:
                body = f"(if (< {i} 1) {acc} ({f} (- {i} 1) {step}))"
        else:
            body = f"(if (< {i} 1) {acc} ({f} (- {i} 1) {step}))"
        return (
            f"(letrec (({f} (lambda ({i} {acc}) {body}))) ({f} {bound} {self.expr(ty, scope, n)}))"
        )

    def k_mutual(self, ty: str, scope: dict, n: int) -> str:
        # mutual recursion (even/odd) with a boundary at the bottom
        ev, od, k = self.name(), self.name(), self.name()
        base_e = self.expr(ty, {**scope, k: "int"}, n)
        base_o = self.expr(ty, {**scope, k: "int"}, n)
        bound = self.draw(st.integers(0, 4))
        return (
            f"(letrec (({ev} (lambda ({k}) (if (= {k} 0) {base_e} ({od} (- {k} 1))))) "
            f"({od} (lambda ({k}) (if (= {k} 0) {base_o} ({ev} (- {k} 1)))))) ({ev} {bound}))"
        )

    # -- per type -----------------------------------------------------------------------
    def k_llm(self, ty: str, scope: dict, n: int) -> str:
        return f"(llm {self.prompt(scope, n)})"

    def k_append(self, ty: str, scope: dict, n: int) -> str:
        return f"(string-append {self.expr('str', scope, n)} {self.expr('str', scope, n)})"

    def k_numstr(self, ty: str, scope: dict, n: int) -> str:
        return f"(number->string {self.expr('int', scope, n)})"

    def k_eval_quote(self, ty: str, scope: dict, n: int) -> str:
        # wrapped so that the quoted datum is code, not a bare string (a string is program text)
        return f'(eval (quote (string-append "" {self.inner(n)})))'

    def k_eval_text(self, ty: str, scope: dict, n: int) -> str:
        return f"(eval {escape_string(self.inner(n))})"

    def inner(self, n: int) -> str:
        # a closed program for eval, with its own prompt prefix
        sub = _Gen(self.draw, "e")
        sub.fresh = self.fresh
        text = sub.expr("str", {}, n)
        self.fresh = sub.fresh
        return text

    def k_eval_llm(self, ty: str, scope: dict, n: int) -> str:
        # the completion itself is run as a program (and may be anything)
        return (
            f'(string-append "" (eval (llm {self.prompt(scope, n)})))'
            if self.draw(st.booleans())
            else f"(eval (llm {self.prompt(scope, n)}))"
        )

    def k_car(self, ty: str, scope: dict, n: int) -> str:
        return f"(car (list {self.expr('str', scope, n)} {self.expr('str', scope, n)}))"

    def k_length(self, ty: str, scope: dict, n: int) -> str:
        return f"(string-length {self.expr('str', scope, n)})"

    def k_arith(self, ty: str, scope: dict, n: int) -> str:
        op = self.draw(st.sampled_from(["+", "-", "*"]))
        return f"({op} {self.expr('int', scope, n)} {self.expr('int', scope, n)})"

    def k_compare(self, ty: str, scope: dict, n: int) -> str:
        op = self.draw(st.sampled_from(["=", "<"]))
        return f"({op} {self.expr('int', scope, n)} {self.expr('int', scope, n)})"

    def k_streq(self, ty: str, scope: dict, n: int) -> str:
        op = self.draw(st.sampled_from(["string=?", "equal?"]))
        return f"({op} {self.expr('str', scope, n)} {self.expr('str', scope, n)})"

    def k_not(self, ty: str, scope: dict, n: int) -> str:
        return f"(not {self.expr('bool', scope, n)})"

    def k_listp(self, ty: str, scope: dict, n: int) -> str:
        op = self.draw(st.sampled_from(["null?", "pair?"]))
        return f"({op} {self.expr('list', scope, n)})"

    def k_list(self, ty: str, scope: dict, n: int) -> str:
        items = " ".join(self.expr("str", scope, n) for _ in range(self.draw(st.integers(0, 3))))
        return f"(list {items})".replace("(list )", "(list)")

    def k_cons(self, ty: str, scope: dict, n: int) -> str:
        return f"(cons {self.expr('str', scope, n)} {self.expr('list', scope, n)})"

    def k_cdr(self, ty: str, scope: dict, n: int) -> str:
        return f"(cdr (list {self.expr('str', scope, n)} {self.expr('str', scope, n)}))"


_KINDS_ANY = ("lit", "if", "let", "let2", "begin", "apply", "operator", "closure", "loop", "mutual")
_KINDS_STR = (
    "llm",
    "llm",
    "append",
    "append",
    "numstr",
    "eval_quote",
    "eval_text",
    "eval_llm",
    "eval_llm",
    "eval_llm",
    "car",
)
_KINDS_INT = ("length", "length", "arith")
_KINDS_BOOL = ("compare", "streq", "streq", "not", "listp")
_KINDS_LIST = ("list", "cons", "cdr")
