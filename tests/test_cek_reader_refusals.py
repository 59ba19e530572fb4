"""The reader never misreads: Scheme text outside the language's subset is refused with
one error naming the construct, and what it reads agrees with a small reference reader
of the subset written here, independently (character by character, by recursion)."""

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentic_machines.cek import ParseError, parse, unparse
from agentic_machines.cek.reader import DOT, parse_program
from agentic_machines.cek.syntax import FALSE, NIL, TRUE, Symbol, from_items
from agentic_machines.strategies import examples


class Refused(Exception):
    pass


_DELIMITERS = set(" \t\n\r()\";'")
_INTEGER = re.compile(r"[+-]?[0-9]+\Z")
_NUMBER_START = re.compile(r"[+-]?\.?[0-9]|[+-](inf|nan)\.0\Z", re.IGNORECASE)
_ESCAPES = {"\\": "\\", '"': '"', "n": "\n", "t": "\t", "r": "\r"}


def reference_read(text: str):
    """The one datum of ``text`` in the subset, or raise Refused."""
    datum, i = _datum(text, _skip(text, 0), (), False)
    if _skip(text, i) != len(text):
        raise Refused("more than one datum")
    return datum


def _skip(text, i):
    while i < len(text):
        if text[i] in " \t\n\r":
            i += 1
        elif text[i] == ";":
            while i < len(text) and text[i] != "\n":
                i += 1
        else:
            break
    return i


def _datum(text, i, context, data):
    # context: the items read so far of the list this datum is in, plus "quoted" when
    # it is the datum of a quote; data: the datum is inside quoted data (after ' or in
    # (quote ...), at any depth). A dotted list is read only right after lambda/define,
    # in code.
    if i >= len(text):
        raise Refused("end")
    c = text[i]
    if c == "'":
        inner, i = _datum(text, _skip(text, i + 1), ("quoted",), True)
        return from_items([Symbol("quote"), inner]), i
    if c == ")":
        raise Refused(")")
    if c == "(":
        items = []
        dot = None
        i = _skip(text, i + 1)
        while True:
            if i >= len(text):
                raise Refused("unclosed")
            if text[i] == ")":
                break
            j = i
            while j < len(text) and text[j] not in _DELIMITERS:
                j += 1
            if text[i:j] == ".":
                if dot is not None or not items:
                    raise Refused("dot")
                dot = len(items)
                i = _skip(text, j)
                continue
            d, i = _datum(text, i, tuple(items), data or items[:1] == [Symbol("quote")])
            items.append(d)
            i = _skip(text, i)
        if dot is not None:
            heads = (Symbol("lambda"), Symbol("define"))
            if data or len(items) - dot != 1 or len(context) != 1 or context[0] not in heads:
                raise Refused("dotted pair")
            items.insert(dot, DOT)
        return from_items(items), i + 1
    if c == '"':
        out = []
        i += 1
        while True:
            if i >= len(text):
                raise Refused("unterminated string")
            if text[i] == '"':
                return "".join(out), i + 1
            if text[i] == "\\":
                if i + 1 >= len(text) or text[i + 1] not in _ESCAPES:
                    raise Refused("escape")
                out.append(_ESCAPES[text[i + 1]])
                i += 2
            else:
                out.append(text[i])
                i += 1
    j = i
    while j < len(text) and text[j] not in _DELIMITERS:
        j += 1
    return _atom(text[i:j]), j


def _atom(tok):
    if any(ch in tok for ch in "`,[]{}|\\"):
        raise Refused(tok)
    if tok.startswith("#"):
        table = {"#t": TRUE, "#true": TRUE, "#f": FALSE, "#false": FALSE}
        if tok not in table:
            raise Refused(tok)
        return table[tok]
    if _INTEGER.match(tok):
        if abs(int(tok)) >= 2**1024:
            raise Refused("big")
        return int(tok)
    if tok == "." or _NUMBER_START.match(tok):
        raise Refused(tok)
    if tok == "nil":
        return NIL
    return Symbol(tok)


def reads_alike(text):
    try:
        expected = ("read", reference_read(text))
    except Refused:
        expected = ("refused",)
    try:
        got = ("read", parse(text))
    except ParseError:
        got = ("refused",)
    assert got == expected, text


_TOKENS = [
    "(",
    ")",
    "(",
    ")",
    "'",
    "`",
    ",",
    ",@",
    ".",
    "#t",
    "#f",
    "#true",
    "#false",
    "#\\a",
    "#\\(",
    "#(",
    "#x1F",
    "#;",
    "#|c|#",
    "#u8(",
    "1.5",
    ".5",
    "1/2",
    "1e3",
    "-7",
    "42",
    "+",
    "-",
    "...",
    "abc",
    "x",
    "lambda",
    "define",
    "nil",
    '"s"',
    '"a\\nb"',
    '"q\\x"',
    "[",
    "]",
    "|p q|",
    "+inf.0",
    "1+",
    "a.b",
    "a\\b",
    "; note\n",
    "-a",
    "+5",
]
_SEP = st.sampled_from([" ", " ", "\n", ""])


@st.composite
def token_soup(draw):
    toks = draw(st.lists(st.sampled_from(_TOKENS), max_size=10))
    return "".join(t + draw(_SEP) for t in toks)


def _forms():
    atom = st.sampled_from([t for t in _TOKENS if t not in ("(", ")", "'")])
    return st.recursive(
        atom,
        lambda inner: st.one_of(
            st.lists(inner, max_size=4).map(lambda xs: "(" + " ".join(xs) + ")"),
            inner.map(lambda x: "'" + x),
            inner.map(lambda x: "(quote " + x + ")"),
            st.tuples(
                st.sampled_from(["lambda", "define", "f", "'lambda"]),
                st.lists(st.one_of(inner, st.sampled_from(["a", "b", "7", "'c"])), max_size=3),
                st.sampled_from(["", ". ", "x . ", ". . "]),
            ).map(lambda t: f"({t[0]} ({' '.join(t[1][:-1])} {t[2]}{' '.join(t[1][-1:])}) x)"),
        ),
        max_leaves=8,
    )


@settings(max_examples=examples(300, 5000))
@given(st.one_of(token_soup(), _forms()))
def test_reads_what_the_reference_reader_reads_or_refuses(text):
    reads_alike(text)


@pytest.mark.parametrize(
    "text, words",
    [
        ("((lambda (x y . z) z) 3 4 5 6)", None),
        ("(cdr '(1 . 2))", "dotted pairs"),
        ("'(a . b)", "dotted pairs"),
        ("(let ((. 1)) .)", "dotted pairs"),
        ("2.0", "no decimals"),
        ("(+ 1/2 1)", "fractions"),
        ("#\\a", "character"),
        ("#(1 2)", "vector"),
        ("`(a ,b)", "quasiquote"),
        ("(list ,x)", "unquote"),
        ("(f ,@xs)", "unquote-splicing"),
        ("#x1F", "#t and #f"),
        ("[a b]", "( and )"),
        ("'a\\b", "`\\` is not part of the language"),
        # a parameter list is code: quoted, it would be a dotted pair
        ("(cdr (car (cdr '(define (f . x) 1))))", "dotted pairs"),
        ("(quote (lambda (a . b) b))", "dotted pairs"),
        ("'(x (lambda (a . b) b))", "dotted pairs"),
    ],
)
def test_each_construct_outside_the_subset_is_refused_by_name(text, words):
    if words is None:
        assert parse(text).car.cdr.car.cdr.cdr.car == DOT
        return
    with pytest.raises(ParseError) as info:
        parse(text)
    message = str(info.value)
    assert words in message and "\n" not in message


def test_a_dotted_parameter_list_reads_as_written_and_prints_back():
    d = parse("(lambda (a . rest) rest)")
    assert d.cdr.car == from_items([Symbol("a"), DOT, Symbol("rest")])
    assert unparse(d) == "(lambda (a . rest) rest)"
    assert parse_program("(define (f . xs) xs) (f 1 2)").car == Symbol("begin")
