"""Reader and printer: round trips, error positions, and deeply nested inputs (the
``deep`` fixture: beyond the recursion limit always, 100 000 deep in the slow run)."""

import pytest
from hypothesis import given, settings

from agentic_machines.cek import ParseError, parse, unparse
from agentic_machines.cek.expr import compile_program, to_datum
from agentic_machines.cek.strategies import data, programs
from agentic_machines.cek.syntax import NIL, Symbol, from_items
from agentic_machines.strategies import examples


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


def test_deep_nesting_parses_prints_and_compares_without_recursion(deep):
    text = "(" * deep + ")" * deep
    d = parse(text)
    assert unparse(d) == "(" * (deep - 1) + "nil" + ")" * (deep - 1)
    other = parse(text)
    assert d == other and hash(d) == hash(other) and d is not other
    quoted = parse("'" * deep + "x")
    assert unparse(quoted) == "'" * deep + "x"


@pytest.mark.parametrize(
    "bad",
    [lambda n: "(" * n, lambda n: ")" * n, lambda n: "(" * n + ")" * (n - 1), lambda n: "'" * n],
    ids=["open", "close", "unbalanced", "quotes"],
)
def test_deep_bad_input_fails_with_parse_error(bad, deep):
    with pytest.raises(ParseError):
        parse(bad(deep))


def test_deep_expression_compiles_and_prints(deep):
    text = "(+ 1 " * deep + "0" + ")" * deep
    expr = compile_program(parse(text))
    assert unparse(expr) == text
