"""Reader and printer: round trips, error positions, and inputs nested 100 000 deep."""

import pytest
from hypothesis import given, settings

from agentic_machines.cek import ParseError, parse, unparse
from agentic_machines.cek.expr import compile_program, to_datum
from agentic_machines.cek.strategies import data, programs
from agentic_machines.cek.syntax import NIL, Symbol, from_items
from agentic_machines.strategies import examples

DEEP = 100_000


@settings(max_examples=examples(200, 5000))
@given(data())
def test_data_round_trip(d):
    assert parse(unparse(d)) == d


@settings(max_examples=examples(100, 2000))
@given(programs())
def test_program_round_trip_through_expressions(text):
    datum = parse(text)
    assert parse(unparse(datum)) == datum
    expr = compile_program(datum)
    # compiling the printed expression gives the same expression (let prints as lambda)
    assert compile_program(parse(unparse(expr))) == expr
    assert compile_program(to_datum(expr)) == expr


@pytest.mark.parametrize(
    "text, line, column, words",
    [
        ("(+ 1", 1, 1, "unclosed '('"),
        ("(a)\n  )", 2, 3, "unexpected ')'"),
        ('(f "abc', 1, 4, "unterminated string"),
        ('"a\\qb"', 1, 3, "unknown escape"),
        ("(a 'b ')", 1, 7, "' must be followed by a datum"),
        ("", 1, 1, "empty program"),
        ("1 2", 1, 3, "end of the program"),
        ("#x", 1, 1, "#t and #f"),
        ("1" * 500, 1, 1, "too large"),
    ],
    ids=["unclosed", "extra-close", "string", "escape", "quote", "empty", "two", "hash", "big-int"],
)
def test_parse_errors_say_where_and_what_was_expected(text, line, column, words):
    with pytest.raises(ParseError) as info:
        parse(text)
    assert (info.value.line, info.value.column) == (line, column)
    assert words in str(info.value)


def test_comments_whitespace_and_quote_sugar():
    assert parse("; comment\n (a ; inner\n 'b)") == from_items(
        [Symbol("a"), from_items([Symbol("quote"), Symbol("b")])]
    )
    assert parse("()") is NIL and parse("nil") is NIL


def test_deep_nesting_parses_prints_and_compares_without_recursion():
    text = "(" * DEEP + ")" * DEEP
    d = parse(text)
    assert unparse(d) == "(" * (DEEP - 1) + "nil" + ")" * (DEEP - 1)
    other = parse(text)
    assert d == other and hash(d) == hash(other) and d is not other
    quoted = parse("'" * DEEP + "x")
    assert unparse(quoted) == "'" * DEEP + "x"


@pytest.mark.parametrize(
    "text",
    ["(" * DEEP, ")" * DEEP, "(" * DEEP + ")" * (DEEP - 1), "'" * DEEP],
    ids=["open", "close", "unbalanced", "quotes"],
)
def test_deep_bad_input_fails_with_parse_error(text):
    with pytest.raises(ParseError):
        parse(text)


def test_deep_expression_compiles_and_prints():
    text = "(+ 1 " * DEEP + "0" + ")" * DEEP
    expr = compile_program(parse(text))
    assert unparse(expr) == text
